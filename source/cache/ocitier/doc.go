// Package ocitier is the remote tier of the package cache: a store on an
// OCI Distribution registry (CNCF distribution, Harbor, ECR, GHCR,
// Artifactory…) shared by a fleet of machines, each with its own local
// cache.
//
// A [Tier] reads and writes package archives: [Tier.Get] writes the
// archive the tier holds for a package to a file, [Tier.Put] stores a
// verified one. The tier never vouches for what it returns: the caller
// checks it as it checks a download from the package's origin.
//
// # Layout
//
// The tier lives under one location "HOST[:PORT]/PREFIX". Every lookup
// resolves one tag: nothing is ever listed.
//
// Providers are written in OpenTofu's own provider mirror format, so that
// tofu with
//
//	provider_installation {
//	  oci_mirror {
//	    repository_template = "HOST/PREFIX/${hostname}/${namespace}/${type}"
//	  }
//	}
//
// installs from the same registry:
//
//	repository  PREFIX/<hostname>/<namespace>/<type>
//	tag         the version, "+" written "_"
//	            → image index: mediaType application/vnd.oci.image.index.v1+json,
//	              artifactType application/vnd.opentofu.provider, one entry per
//	              platform: mediaType application/vnd.oci.image.manifest.v1+json,
//	              artifactType application/vnd.opentofu.provider-target,
//	              platform {os, architecture}
//	            → image manifest per platform: the same mediaType and
//	              artifactType, the empty config, one layer of media type
//	              archive/zip: the provider's zip, whose sha256 digest is
//	              its zh: hash
//
// A version's index gains platforms as machines of other platforms write
// them, and does not lose one: once its blobs and manifest are up, a
// writer reads the index, adds its platform, writes the merged index,
// waits [Options.Settle] and reads it back, merging again (a bounded
// number of times) while its platform or one it had seen is missing.
// Entries it does not understand are kept as they are. The OCI
// distribution API has no compare-and-swap, so this is as close as a
// registry allows: a platform can be lost only if another writer read the
// index before it was written and wrote its own more than Settle after
// that write was read back, a gap of one request in which nothing else
// is done.
//
// Modules are written in OpenTofu's OCI module-package format, keyed by
// content:
//
//	repository  PREFIX/tflock/modules
//	tag         "h1-" + the hex SHA-256 of the package's h1: hash, and for a
//	            module installed from a subdirectory of its package (a
//	            registry location's "//SUBDIR"), "-s" + the first 16 hex
//	            digits of the SHA-256 of that subdirectory; for the root of a
//	            package whose location its source names (a registry
//	            module, an HTTP address: source.ModulePackage.Located),
//	            "-i" + the first 16 hex digits of the SHA-256 of the
//	            package's identity (address and version, no credentials)
//	            → image manifest: artifactType application/vnd.opentofu.modulepkg,
//	              the empty config, one layer of media type archive/zip: a
//	              deterministic zip of the package (see below)
//
// A module is looked up only by the h1: a lock file records: a module
// named by nothing the caller can verify is never taken from the tier.
// The repository has two path segments below PREFIX and a provider's has
// three, so the two never meet. A module's zip holds its regular files,
// sorted, with one fixed time and modes 0644 or 0755, so that every
// machine writes the same bytes for the same package and a re-push is a
// no-op; the manifest records the subdirectory the origin designated
// (annotation [AnnotationSubdir]). Two modules of one package (a monorepo)
// are two tags sharing one blob, so that neither is installed from the
// other's directory; a reader uses an entry only when its annotation is a
// clean relative path and the subdirectory its lock file binds (else the
// cache warns and goes to the origin). The root of a located package is
// keyed by its identity because the root is also what a lock written
// before subdirectories were recorded says: only the entry that package
// wrote, never another module's of the same package, confirms that its
// location names no subdirectory (such entries written by an earlier
// tflock, keyed without it, are misses, filled again from the origin).
//
// # Writing
//
// Blobs are pushed first (each only if the repository lacks it, into
// every repository that needs it: a blob belongs to a repository), then
// the manifests, and the tag (the index, for a provider) last, so that a
// reader never finds a tag whose content is missing. Manifests are
// serialised deterministically, so that machines writing the same package
// write the same digests: pushes are idempotent, and a package already
// there costs one tag resolution and one manifest read.
//
// # Failures
//
// The tier is an optimisation. A miss wraps [source.ErrNotFound]. A
// registry that cannot be reached, refuses a credential, answers with a
// server error or is too slow ([Options.Timeout]) marks the tier
// unavailable: that call and every later one fail fast with an error
// wrapping [ErrUnavailable], so that a run pays for a dead tier once.
//
// # Credentials and TLS
//
// [Options.OCI] configures the client exactly as it configures the OCI
// source ([oci.OpenRepository]): docker/containers credential files,
// credential helpers, an explicit credential function; HTTPS through the
// given client, which by default trusts the system roots and the
// SSL_CERT_FILE a Go program honours.
package ocitier
