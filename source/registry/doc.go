// Package registry is a [source.Source] that speaks the provider registry
// protocol v1 and the module registry protocol v1, as OpenTofu and
// Terraform do, to whichever host each package address names.
//
// # Service discovery
//
// A host's services are read from https://HOST/.well-known/terraform.json
// ("providers.v1", "modules.v1"), once per host for the life of a [Source].
// Service URLs may be absolute or relative to the discovery document.
// [Options.Hosts] replaces discovery for some hosts, as the CLI
// configuration's host blocks do.
//
// # Providers
//
// Versions lists ":namespace/:type/versions" with each version's protocols
// and platforms. Fetch asks ":namespace/:type/:version/download/:os/:arch",
// downloads SHA256SUMS and its detached OpenPGP signature, verifies the
// signature against the signing keys the response lists (see
// [SignaturePolicy]), checks that the document lists the package's shasum
// under its file name, downloads the zip while computing its SHA-256,
// compares it with the shasum, extracts it safely and computes its h1:
// hash. When the response has OpenTofu 1.12's "packages" field (the hashes
// and size of every platform's package), every zh: it lists must be in the
// signed document, this platform's entry must agree with the shasum, the
// size must match, and the extracted contents must match a listed h1:.
// Any failure is an error wrapping [source.ErrChecksumMismatch] (a bad
// signature also wraps [ErrSignature]) and nothing is left in the
// destination. Requests that do not depend on each other's answers are
// sent together: SHA256SUMS, its signature and the zip are all asked for
// once the download response is in, and the zip is extracted only after
// the signed checksums are verified and list it.
//
// Asked with [Source.FetchArchive] ([source.ArchiveFetcher]: a cache
// fill) the zip is handed over unextracted, in [source.Fetched.Archive];
// under a context made with [source.WithArchiveInMemory] (the cache's),
// a zip whose response announces at most 2 MiB is kept in memory instead,
// in [source.Fetched.ArchiveData], while the process's budget of 32 MiB
// for such archives has room (else it goes to a file as any other).
// A zip of 8 MiB or more is handed over while it downloads
// ([source.PendingArchive]): when the download's response announces its
// size, the last 64 KiB (the central directory) are asked for at once
// with a ranged GET, and once they and the verified signed checksums are
// in, FetchArchive returns; the caller reads the
// archive as it arrives and checks its zh:, and the pending archive's Wait
// checks that the file holds the bytes the ranged request sent (a
// difference wraps [source.ErrChecksumMismatch]). A server that does not
// answer the ranged request with exactly that range, and smaller packages,
// are handed over once downloaded and checked.
//
// Fetched.Origin and [Source.Checksums] report, as OpenTofu records them,
// the zh: of every file in the signed SHA256SUMS (SignedBy the key ID,
// Registries the host, Platforms from the file name) and every hash of the
// packages field (Registries the host, Platforms the entry's platform).
// Checksums downloads no package. [Source.SignedBy] reports the signing key
// and its [Trust] classification (official, partner, community).
//
// Legacy addresses ("aws", "-/aws") are resolved with [Source.ResolveProvider]
// through the registry's "-" namespace lookup; "terraform" is the built-in
// provider ([ErrBuiltIn]).
//
// # Modules
//
// Versions lists ":namespace/:name/:system/versions". [Source.ModuleLocation]
// (the [source.ModuleLocator] capability) asks
// ":namespace/:name/:system/:version/download", which answers with a JSON
// "location", with 204 and an X-Terraform-Get header, or with a location and
// "use_registry_credentials" (a direct download sent the registry's token).
// Relative locations are resolved against the download request's URL. An
// HTTP(S) .zip, .tar.gz or .tgz archive (or one named by an "archive" query
// argument) is downloaded and extracted here; another HTTP(S) URL is asked
// for its X-Terraform-Get header or terraform-get meta tag with
// "terraform-get=1" added to its query, as go-getter does (at most 5
// hops), until a git::, oci:// or archive location is reached, which it
// reports. The registry does not fetch from git or OCI: a dispatcher
// (source/assemble's Dispatch) routes every location to the source of its
// kind, and fetches an archive location with the fetcher reported with it
// ([source.ModuleLocation.Archive], which sends the registry's token when
// it asked for it). Fetch of a registry module downloads an archive
// location itself and refuses a git or OCI one ([ErrUnsupportedLocation]).
// (Before, [Options] had a Remote field through which the registry handed
// git and OCI locations back to the dispatcher; it is gone.) A
// "//SUBDIR" in the location is reported in Fetched.Subdir. Archives are
// extracted by the extractor every source shares: no entry may leave the
// package directory, a tar.gz's symbolic links must resolve inside it (a
// zip's are files holding their target, as tofu installs them), size and entry
// count are bounded by [Options.Limits] (an error wrapping
// [source.ErrTooLarge]), and a module package's version-control metadata
// (".git", ".hg", ".svn", ".bzr": the one rule,
// [github.com/tflock/tflock/hash.IsVCSMetadata]) is never written, so that
// the tree installed is the tree its h1: covers. Asked with
// FetchArchive ([source.ArchiveFetcher]: a cache fill) a zip archive is
// handed over unextracted in [source.Fetched.Archive], for the cache to
// extract and hash in one read by the same rules; a tar.gz is extracted
// here.
//
// [ArchiveSource] fetches module packages whose address is itself an
// HTTP(S) URL (no registry involved), with the same download, indirection
// and extraction rules; such packages have no versions.
//
// The download response of a provider platform is kept for five minutes
// per Source, so that Checksums and then Fetch of one package ask for it
// once.
//
// # Credentials
//
// Bearer tokens come from [Credentials]: TF_TOKEN_<host> environment
// variables ([EnvCredentials]) and the CLI configuration's credentials
// blocks ([Tokens]), combined with [Chain]. Tokens are sent to the registry
// host's API (including discovery) and, for the module archive's own host
// or with use_registry_credentials, with module downloads. They never
// appear in errors, warnings or file names, and are sent only over https:
// a service or download URL over plain http gets no token (and a warning),
// unless [Options.LoopbackHTTPTokens] allows it for a loopback host.
// OpenTofu sends them whatever the scheme.
//
// # HTTP
//
// Every HTTP request of a [Source] and an [ArchiveSource] goes through the
// HTTP layer every tflock HTTP source shares (the network mirror too), so
// that retries, timeouts, redirects and credentials follow one policy:
//
//   - Retries (by default 2, or TF_PROVIDER_DOWNLOAD_RETRY, as in
//     OpenTofu) with exponential backoff and jitter, after connection
//     errors, 429 and 5xx responses other than 501 (honouring
//     Retry-After, capped by [Options.MaxBackoff]). Nothing else is
//     retried: other 4xx responses, a redirect loop or a refused
//     redirect, a certificate error, a timeout, the context ending, a
//     local write error (a full disk, a quota, a read-only filesystem), a
//     checksum error.
//   - An idle timeout ([Options.IdleTimeout], 60s): the server must send
//     the headers, and then each next part of the body, within it. A
//     metadata request also has an overall timeout
//     ([Options.RequestTimeout], 30s); a package download has none by
//     default ([Options.DownloadTimeout]), as in OpenTofu, so that a large
//     package over a slow link installs while data keeps coming.
//   - Redirects: one from https to http is refused; the Authorization
//     header is dropped when a redirect leads to another host (another
//     host name or port); at most 10 redirects are followed.
//   - Responses are size-limited; the User-Agent is an option.
//
// The default client speaks HTTP/2 where the server offers it (one
// connection carries every concurrent request) and keeps 64 idle HTTP/1.1
// connections per host, not the standard library's 2, so that the bursts
// of a lock run reuse their connections instead of paying a TLS handshake
// each.
//
// # Provenance over plain http
//
// A provider release accepted without a signature ([PolicyOpenTofu] on an
// exempt host) is reported with a warning; it says the checksums are
// trusted on the strength of TLS only when the download response and
// SHA256SUMS both came over https, and otherwise that they came over plain
// http, which nothing authenticates.
//
// # Module locations
//
// A module location that names this machine's disk (file://, file::,
// git::file://, or a path after a getter prefix), given by a registry or by
// an X-Terraform-Get answer, is refused with an error wrapping
// [ErrLocalLocation] that names the URL that gave it: a remote must not aim
// the installer at local files.
package registry
