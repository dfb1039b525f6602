// Package tflock is a Go SDK for OpenTofu and Terraform dependency locking:
// providers and modules, version constraints, checksums and caching.
//
// It has no code of its own; the work is done by its packages:
//
//   - [github.com/tflock/tflock/lockfile]: the typed model of
//     .terraform.lock.hcl (providers and modules), a strict parser with HCL
//     diagnostics, the canonical writer and a preserving editor.
//   - [github.com/tflock/tflock/hash]: the h1: and zh: package hashes,
//     their provenance, and verification with trust on first use.
//   - [github.com/tflock/tflock/resolve/versions]: versions and OpenTofu's two
//     version-constraint dialects (providers and modules).
//   - [github.com/tflock/tflock/resolve]: requirements read from
//     configuration, and the solver that chooses versions.
//   - [github.com/tflock/tflock/source]: the interfaces sources implement,
//     package identities, errors and decorators.
//
// The examples directory holds small runnable programs that use them.
package tflock
