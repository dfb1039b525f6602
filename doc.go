// Package tflock is a Go SDK for OpenTofu and Terraform dependency locking:
// providers and modules, version constraints, checksums and caching.
//
// It has no code of its own; the work is done by its packages, which point
// one way: hash ← lockfile ← resolve → source ← source/registry, mirror, git, oci;
// resolve/config (the reader) → resolve (the solver).
//
// # Where to start
//
// Four kinds of programs use tflock; each has its entry point in
// [github.com/tflock/tflock/resolve/install], with a runnable example:
//
//   - An OpenTofu-style core ("tofu init", "tofu providers lock"): Init on
//     a configuration directory, then WriteLock; Check before plan and
//     apply, which lists typed problems (kind, package, file and line)
//     and prints OpenTofu's messages.
//   - A dependency bot that bumps a version in a configuration it has not
//     checked out: LockProvider and LockModule update a lock file for one
//     package, with the hashes Init would record, and leave the rest.
//   - A wrapper that runs many units at once: Init and Check take a unit's
//     root module as an fs.FS or as a configuration already read
//     ([github.com/tflock/tflock/resolve/config.ReadTreeFS]); the units
//     share one cache and one set of sources, and each unit's context names it
//     ([github.com/tflock/tflock/source.WithUnit]) so that every progress
//     event says which unit it belongs to.
//   - Tests downstream: registrytest, ocitest and gittest run real servers
//     in-process (New(tb, ...), closed with the test), addressed by stable
//     host names such as registry.example.test and git.example.test, so
//     that the lock files a test expects stay the same from run to run.
//
// Programs that only read or write lock files import
// [github.com/tflock/tflock/lockfile] alone, which links no networking.
//
// The model and its vocabulary:
//
//   - [github.com/tflock/tflock/lockfile]: the typed model of
//     .terraform.lock.hcl (providers and modules keyed by call path), a
//     strict parser with HCL diagnostics, the canonical writer (byte-identical
//     to tofu for providers), a preserving editor, Changes and Merge.
//   - [github.com/tflock/tflock/hash]: the h1: and zh: package hashes in one
//     read, their provenance, and verification with trust on first use.
//   - [github.com/tflock/tflock/resolve/versions]: versions and OpenTofu's two
//     version-constraint dialects (providers and modules), with the canonical
//     lock-file form of a constraint.
//
// Choosing and installing:
//
//   - [github.com/tflock/tflock/resolve/config]: the reader of
//     configuration (.tf, .tf.json, .tofu files, module trees, early
//     evaluation of module sources and versions, tflock annotations) and
//     of state: requirements with their origins.
//   - [github.com/tflock/tflock/resolve]: the requirement vocabulary and
//     the solver, which picks versions and explains each pick.
//   - [github.com/tflock/tflock/resolve/install]: the whole "tofu init" for
//     dependencies as a library call, and the read side for plan and apply.
//
// Where packages come from:
//
//   - [github.com/tflock/tflock/source]: the interfaces sources implement,
//     package identities, typed errors, events, and the Multi and Memoize
//     decorators.
//   - [github.com/tflock/tflock/source/address]: module and provider source
//     addresses, parsed as OpenTofu parses them.
//   - [github.com/tflock/tflock/source/registry]: the provider and module
//     registry protocols, signed checksums and credentials.
//   - [github.com/tflock/tflock/source/mirror]: filesystem and network mirrors
//     and dev overrides.
//   - [github.com/tflock/tflock/source/git]: git module sources with version
//     constraints over semver tags.
//   - [github.com/tflock/tflock/source/oci]: OCI registries for modules and
//     provider mirrors.
//   - [github.com/tflock/tflock/source/cache]: the content-addressed package
//     cache that many processes can share.
//   - [github.com/tflock/tflock/source/cliconfig]: sources built from
//     OpenTofu's CLI configuration file.
//   - [github.com/tflock/tflock/source/providercache]: tofu's on-disk provider
//     layout.
//   - [github.com/tflock/tflock/source/sourcetest]: the conformance suite for
//     sources and an in-memory source for tests.
//
// Real servers for tests and demos, run in-process:
//
//   - [github.com/tflock/tflock/source/registry/registrytest]: a provider and
//     module registry with signed checksums, latency and lying modes.
//   - [github.com/tflock/tflock/source/oci/ocitest]: an OCI registry with
//     OpenTofu's module and provider artifacts.
//   - [github.com/tflock/tflock/source/git/gittest]: git repositories with
//     tags, served over smart HTTP with optional basic authentication.
//   - [github.com/tflock/tflock/resolve/install/installtest]: a whole offline
//     world (registry, git repository, OCI registry) for end-to-end tests.
//
// The examples directory holds small runnable programs that use them.
package tflock
