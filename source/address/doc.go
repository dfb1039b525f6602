// Package address parses the source addresses of OpenTofu module calls and
// provider requirements, with OpenTofu's rules, and gives each a canonical
// form for the lock file.
//
// # Module sources
//
// [ParseModuleSource] reads the "source" argument of a module block the way
// OpenTofu's addrs.ParseModuleSource does, and returns one of three types
// (a closed set, see [ModuleSource]):
//
//   - [Local]: a path starting with "./" or "../" (or ".\" and "..\", which
//     are normalised to forward slashes). Local modules belong to their
//     caller's package and are never locked.
//   - [Registry]: "NAMESPACE/NAME/SYSTEM" or "HOST/NAMESPACE/NAME/SYSTEM",
//     optionally followed by "//SUBDIR". A missing host is
//     [Options.DefaultRegistryHost] (registry.opentofu.org unless set),
//     never the terraform-registry-address library's own default. A host
//     must contain a dot ("localhost:8080/a/b/c" is not a registry address).
//   - [Remote]: everything else, in go-getter's syntax: an optional forced
//     getter ("git::", "hg::", "s3::", "gcs::", "http::", "https::",
//     "file::"), a URL, an optional "//SUBDIR" and query arguments. A
//     string without a URL scheme goes through the go-getter detectors
//     OpenTofu configures, in its order, applied as string rewrites:
//     "github.com/ORG/REPO[/SUBDIR]" becomes
//     "git::https://github.com/ORG/REPO.git" (the query string is set aside
//     first, so "?ref=tags/v1" is a ref, never a subdirectory), scp-like
//     "git@HOST:PATH" becomes "git::ssh://git@HOST/PATH",
//     "bitbucket.org/PATH" becomes "git::https://bitbucket.org/PATH.git",
//     S3 and GCS host names are rewritten to the path-style URL go-getter
//     makes, and an absolute path becomes a "file:///" URL, not cleaned. A
//     Windows drive path ("C:\modules\vpc") is a file package kept
//     verbatim, as OpenTofu keeps it on every platform. "oci://HOST/REPO"
//     addresses OpenTofu's OCI module packages, with the "tag" (default
//     "latest") or "digest" argument.
//
// A subdirectory is cleaned with path.Clean and no more, as OpenTofu does:
// "///sub" keeps the subdirectory "/sub" and "//." the subdirectory ".",
// so that String is what OpenTofu prints.
//
// As in OpenTofu, a string is a registry address only if it parses as one;
// anything else is tried as a remote address. Unlike OpenTofu, which leaves
// some malformed remote addresses to fail during installation, this package
// rejects at parse time what can never be installed: an empty URL after a
// forced getter, an unknown getter or URL scheme (such as the "localhost"
// go-getter sees in "localhost:8080/a/b/c"), a URL without a host or with
// a fragment, a subdirectory ".." that leads out of the package, a
// malformed "ref", "depth" or "sshkey" argument of a git address, and the
// malformed OCI addresses OpenTofu's OCI getter rejects (with OpenTofu's
// error texts), including an "archive" argument on an OCI address.
//
// # Canonical forms
//
// String returns the address as OpenTofu prints it after parsing (the
// go-getter "detected" form, with any subdirectory before the query).
// Package returns the package address without subdirectory and without the
// arguments that select a revision (git "ref", OCI "tag" and "digest"): the
// value of source.ModulePackage.Source, from which a fetcher can fetch (git
// "depth" and "sshkey" stay). LockSource is the "source" attribute of a
// module block in the lock file: Package without git's download options
// (so that a private key is never written) and with "//SUBDIR".
//
// Credentials embedded in a URL ("https://user:token@host/...") and a git
// "sshkey" argument are kept in String and Package, because a fetcher needs
// them (and OpenTofu's modules.json records String as written). Nothing
// else holds them: [Redact] replaces them by "REDACTED" in messages (every
// error of this package is already redacted, and so is every event and
// source error of tflock), and [StripCredentials] removes them from what
// is kept, such as LockSource and the package cache's keys.
//
// # Provider sources
//
// [ParseProviderSource] reads a provider source address ("aws",
// "hashicorp/aws", "example.com/ns/type") as OpenTofu reads the "source" of
// a required_providers entry: a bare type is in the "hashicorp" namespace,
// a missing host is [Options.DefaultRegistryHost], a host may carry a port,
// namespaces and types are single DNS-style labels (no underscores), and
// the redundant type prefixes "terraform-" and "opentofu-" are refused. It
// is a thin wrapper over the one provider-address parser that the lock
// file decoder, the configuration reader and the CLI configuration use
// too, so all of them read every address alike. [Provider.Kind] tells
// ordinary providers from the built-in ("terraform.io/builtin/NAME",
// "opentofu.org/builtin/NAME", as OpenTofu 1.12 marks them) and
// legacy ("-/NAME") ones.
package address
