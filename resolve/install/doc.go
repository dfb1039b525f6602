// Package install is the whole "tofu init" for dependencies, as a library
// call, with modules locked too: [Init] reads a configuration, resolves,
// fetches, verifies, caches and installs its providers and modules, and
// returns the new lock file, what changed and why each version was picked.
// [Check] is the read side, for what runs after init.
//
// # Which entry point
//
//   - A tool in the place of "tofu init" (or "tofu providers lock"):
//     [Init] on a directory, then [WriteLock] (see the Init example).
//   - What runs after init (plan, apply): [Check], whose
//     [CheckResult.Problems] lists what is wrong, typed (kind, package,
//     module call, file and line), and whose error prints OpenTofu's text.
//   - A dependency bot that bumps one version in a configuration it has not
//     checked out: [LockProvider] (one provider, a version, the platforms)
//     or [LockModule] (one module call, its source and version argument)
//     updates a lock file with Init's hash policy and nothing else (see the
//     LockProvider example).
//   - A wrapper running many units: [Init] and [Check] take the root module
//     as an [io/fs.FS] ([Options.FS]) or already read
//     ([Options.Config], from [config.ReadTree] or [config.ReadTreeFS]);
//     units run at once on one shared [cache.Cache] and shared sources, and
//     each one's context names it ([source.WithUnit]) so every event
//     ([source.Event.Unit]) says which unit it belongs to (see the Init
//     "units" example).
//   - Tests: the servers of source/registry/registrytest, source/oci/ocitest
//     and source/git/gittest (all started by New(tb, ...), closed with the
//     test, addressed by stable host names), or the whole world of
//     [github.com/tflock/tflock/resolve/install/installtest].
//
// # Init
//
// [Init] reads the root module and the local modules it calls in place
// (package resolve/config), then resolves the remote module calls, fetches each module package and
// reads it in turn (its call path is the caller's joined with a dot: "a.b"),
// level by level, until the module tree is complete. It then resolves every
// provider over the whole tree (see package resolve), fetches every selected
// package through the cache (package source/cache; bounded concurrency),
// verifies each against the hashes the lock file records (trust on first
// use when it records none) and installs:
//
//   - providers in tofu's layout, INSTALLDIR/providers/HOST/NAMESPACE/TYPE/VERSION/OS_ARCH/
//     (package source/providercache);
//   - remote modules in INSTALLDIR/modules/KEY/ with the manifest
//     INSTALLDIR/modules/modules.json in tofu's format, so that tofu finds
//     them and a following "tofu init" downloads nothing.
//
// INSTALLDIR is Dir/.terraform unless said otherwise. The new lock file
// records, for each provider, the h1: of the installed package and the
// hashes its origin vouches for, by OpenTofu 1.12.6's rule (its
// ShouldEnforceGPGValidationForProvider and its installer's "signed
// hashes"): a registry's hashes signed by a key it lists (the zh: of
// every platform), and, for a registry whose host needs no signature
// (registry.opentofu.org unless OPENTOFU_ENFORCE_GPG_VALIDATION=true:
// [registry.Options.UnsignedHosts]), every hash it reports, signed or not
// (with OpenTofu 1.12's "packages" field, the h1: and zh: of every
// platform), so that the file is tofu's byte for byte. From a mirror, Init
// records the hashes of every platform the mirror holds (a filesystem
// mirror's h1:, and a packed one's zh:), more than tofu, which records the
// installed package's, so that a lock made on one platform verifies the
// others' packages from the same mirror; tofu and terraform keep such a
// file unchanged. [Options.ProvidersLock] records, for the platforms
// asked for, their h1: (from the origin, or from their package hashed
// here) and what the origin vouches for by the same rule, a mirror's
// hashes of those platforms only. The interop suite
// (internal/interop, TestInteropHashSources*) checks each source against
// the real tofu. For each remote module call its version, source, h1:, and its git commit
// or OCI manifest digest, and, for a call pinned by its source, the git
// "ref" or OCI "tag" as written (package lockfile specifies them).
// Providers and modules that the configuration no longer requires leave
// the lock file.
//
// A module call's lock entry binds what is installed only while it was
// made for what the call asks ([resolve.ModuleLockApplies]): an edited
// ref, tag or digest is a changed requirement, resolved and fetched again
// (the change reported, such as `module "net": repinned: ref v1.0.0 ->
// v1.1.0, ...`) or, in read-only mode, refused with a [*LockChangedError]
// naming what the configuration asks and what the lock records. Each call
// is its own requirement: two calls of one repository, one constrained and
// one pinned, get their own content and their own entry. A call that
// follows a branch, the default branch or OCI's implied "latest" installs
// the recorded commit or digest, wherever the branch points now; an
// upgrade moves it to the current head and records exactly what it
// fetched. Only a tag that now points elsewhere than the lock records is
// "moved".
//
// Modes, as in OpenTofu: Upgrade in [Options.Resolve] (or upgrading named
// providers and module calls), [Options.ReadOnly] (refuse to change the selections,
// for CI; a lock file with no module block, as tofu writes it, has not
// adopted module locking: its module calls are installed unlocked with one
// warning) and [Options.ProvidersLock] ("tofu providers lock": record the
// hashes of the platforms asked for without installing; from a
// [source.ChecksumReporter] where it vouches for them by the rule above,
// else by downloading each platform's package once, in parallel, and
// hashing it as it is read: like tofu's, it keeps no package, in the cache
// or anywhere).
//
// Managed refs: a git or OCI module call constrained by a "# tflock:
// version = ..." comment in its module block ([config.AnnotationPrefix];
// the form stock tofu and terraform load, which refuse the module-locking
// RFC's version argument on such a source) is resolved like a call with
// a version argument, and its source's git "ref" or OCI "tag" argument is
// tflock's output: before the packages are installed, Init writes the
// selected version's tag there (on the first lock, after -upgrade, or
// when the argument was edited by hand: the lock decides), replacing only
// the source's string literal and renaming a temporary file over the
// .tf file, so that tofu and terraform install the locked commit or
// digest. The rewrite is all or nothing: every file is staged before any
// is replaced, a failure puts back those replaced and installs nothing
// (a [*RewriteError] lists the files), and a failed install puts the
// sources back. Only the configuration's own files are rewritten: the
// root module's and its local modules' files inside the root module's
// directory, never a fetched package; a file without a write bit, a
// symbolic link (or a file reached through one), a hard-linked file or a
// file outside the root module's directory is left alone with a warning
// naming the source to write, unless [Options.RewriteProtectedFiles]. The
// rewrites are in [Result].Rewritten. A read-only run fails with a
// [*ManagedRefError] instead, [Options.KeepManagedRefs] turns the rewrite
// into a warning, and providers lock mode leaves the files alone.
//
// .terraform/providers and .terraform/modules are made 0755, as tofu
// makes them; [WriteLock] writes no file when there is none and nothing
// to lock, as tofu.
//
// Messages: [WriteLock]'s note and [lockfile.Summary] are OpenTofu's text
// word for word when only providers are recorded or changed, and name
// modules when modules are. When a changed lock file records, for some
// provider, only the checksums computed here (no registry signed or
// reported one: a filesystem mirror, a plugin directory), [Result.Warnings]
// holds OpenTofu's "Incomplete lock file information for providers"
// warning ([IncompleteLockWarningSummary]). [Result.Listed] and the
// EventResolving events count each package listed once.
//
// Words: every error, problem and warning that advises carries its remedy
// as data ([Remedy]: what to do, to which provider or module call) and
// speaks the program's words ([Options.Words]; by default the flavour's,
// [WordsFor]: "tofu init", OpenTofu's texts word for word, or "terraform
// init"). A wrapper names itself and its commands there, or renders each
// remedy itself ([Words.Render]); [WriteLock]'s notes use [Result.Words].
//
// Lookups (version lists, checksums, module fetches) mostly wait on the
// network and run up to Concurrency of [Options.Resolve] at once (default 64);
// provider package downloads, which also extract and hash, are bounded
// separately by [Options.DownloadConcurrency] (default 64, or 4 per CPU
// if more). In ProvidersLock mode each provider's checksums are asked for
// as soon as its own version is chosen ([resolve.Options.ProviderPicked]),
// not after every provider has been listed. resolve/install/BENCHMARKS.md
// has the figures: 50 providers for 4 platforms in 1.39-1.47 times the
// chain of dependent requests (a local registry with 20 ms of latency,
// in its own process), about 37 times faster than one request after
// another.
//
// When the lock file and the cache (or the install) agree (every locked
// version still satisfies its constraints and the cache or the install
// directory holds the locked package by its locked hashes) no source is
// asked for versions and nothing is downloaded: unlike OpenTofu
// (opentofu/opentofu#3508), a warm re-init contacts no registry.
//
// # Living beside tofu and terraform
//
// Providers are installed package by package and modules call by call, as
// tofu does: a package already installed (by an earlier run, or by tofu or
// terraform) whose h1: matches the lock file is kept in place, neither
// fetched nor copied ([ProviderResult.Reused]; a git checkout keeps its
// .git), and nothing else in the install directory is deleted (other
// versions, other platforms, calls that are gone, tofu's own files), as
// tofu 1.12 leaves them. A module call the lock file does not mention but
// the previous install's modules.json does (a tofu rewrite dropped its
// block) keeps the installed version or commit and is reported as
// [lockfile.Rerecorded]. The lock file keeps its flavour ([Flavor]).
//
// Failures leave everything as it was: packages are fetched into the cache
// and staged in temporary directories inside the install directory, then
// moved into place at the end, under a lock that one install holds (the
// next run sweeps what a killed one left); the lock file is not written by
// Init at all ([WriteLock] writes it atomically). A package that matches none of the
// recorded hashes fails the run with a [*ChecksumError], which wraps
// [source.ErrChecksumMismatch] and a [*hash.MismatchError].
//
// # Settings
//
// [Options] holds what Init reads; [CheckOptions], only what Check reads.
// The settings the two share (directories, platform, the lock file and its
// flavour, the default registry host, the state's requirements) are
// normalized in one place for both, so that the two never read one
// configuration differently; [Options.ForCheck] gives the options to check
// what an Init installed. Init's Resolve field is the solver's own
// [resolve.Options], handed to [resolve.Resolve] in one place with
// install's defaults: a nil Lock reads DIR/.terraform.lock.hcl leniently,
// DefaultHost and TranslatePredecessor follow the lock file's [Flavor],
// Concurrency bounds every lookup (checksums and module fetches too), and
// a ProviderPicked the caller sets is called beside Init's own use of it.
// The field doc says what each one means to Init.
//
// # Sources
//
// Init takes one [source.Source] for everything, and this package imports
// no concrete source (so a program that only runs [Check] links no network
// code). Package source/assemble is the front door, apart from this
// engine: one call,
// [github.com/tflock/tflock/source/assemble.NewSources], builds from the
// CLI configuration and the environment the sources tofu would use on
// this machine (registries with their host blocks and tokens, the
// provider_installation methods with their include and exclude patterns,
// dev overrides, the implied mirror directories, git, OCI and HTTP module
// archives), and reports the dev-overridden providers, the plugin cache
// directory and the configuration's warnings. Its
// [github.com/tflock/tflock/source/assemble.Dispatch] routes each package
// to a source per kind, and each module location a registry reports.
//
// # Bots
//
// [LockProvider] and [LockModule] re-lock one package without a
// configuration directory. They run the code Init runs from a selection
// to a lock file (the same version checks, the same fetches through the
// cache, the same hashes: what the origin vouches for plus each package's
// h1:), as Init with -upgrade for that one provider or module call would,
// and leave every other entry of the lock file as it is
// ([resolve.Selection.Update]).
//
// # Check
//
// [Check] reads the configuration and the installed modules (through
// modules.json), and reports requirements the lock file does not satisfy
// (OpenTofu's "Inconsistent dependency lock file") and selected providers
// whose installed package is missing or does not match the lock file ("the
// cached package for X does not match any of the checksums recorded in the
// dependency lock file"). It returns each usable provider's package
// directory and executable, and every problem as a [Problem].
package install
