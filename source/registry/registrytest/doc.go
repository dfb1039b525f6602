// Package registrytest runs an in-process provider and module registry
// that speaks the real protocols over TLS, for tests and offline demos.
//
// A [Server] is built from a declarative [Fixtures] value: providers with
// their versions and platforms, modules with their versions and files. The
// server generates real provider zip archives, a SHA256SUMS document per
// release signed with a real OpenPGP key (generated once per process),
// module archives (.tar.gz or .zip), and answers service discovery
// (/.well-known/terraform.json), the provider registry protocol v1
// (including the legacy "-" namespace lookup and, optionally, OpenTofu
// 1.12's "packages" field) and the module registry protocol v1 (JSON
// location, 204 with X-Terraform-Get, or a direct download with
// use_registry_credentials).
//
// The server answers for any number of host names: [Server.Client] returns
// an *http.Client that trusts the server's certificate and connects every
// host name to it, so that addresses in tests look like real ones.
//
// Misbehaviour is switched on with [Options] or at run time: per-request
// latency ([Server.SetLatency], also as a handler decorator [WithLatency]),
// a flaky server that answers 503 before succeeding ([Options.FailFirst]),
// and lying servers ([Fault]): a bad signature, a package that does not
// match its shasum, a truncated body, a zh: not in the signed list.
package registrytest
