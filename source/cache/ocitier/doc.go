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
// The tier lives under one location "HOST[:PORT]/PREFIX". A lookup
// resolves tags by name: one, or two for a provider platform missing from
// its version's index. Only a writer of a provider lists tags (see below).
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
//	tag         "tflock-" + the version's tag + "-" + OS_ARCH, such as
//	            tflock-5.1.0_ent-linux_amd64 (a tag no one reads as a
//	            version) → the same image manifest of that platform
//
// The OCI distribution API has no compare-and-swap: a writer that read a
// version's index before another wrote it, and writes its own after, can
// replace the index without the other's platform. So the index is a hint,
// and a platform's own tag the record. A writer pushes its platform's
// blobs, then its manifest under the platform's tag, which only writers
// of that platform write, and then merges the index: it reads the index,
// adds its platform, writes the merged index, waits [Options.Settle],
// reads it back, lists the version's platform tags (the tags following
// "tflock-VERSIONTAG-", where the distribution specification's sorted
// listing puts them), and merges again (a bounded number of times) while
// its platform, one it had seen, or one with a tag of its own is missing.
// The writer whose index lands last thus finds every platform whose tag
// was written before, and the index OpenTofu reads heals. On a registry
// that refuses to list tags the index can still lose a platform, which
// the tier's readers then find by its tag (and tofu does not). Entries
// the index lists that the tier does not understand are kept as they
// are. A reader whose version index lacks its platform reads the
// platform's tag, checked as an index's platform manifest is; a platform
// the index lists is read as OpenTofu reads it, so what a previous
// tflock wrote (an index without platform tags) reads as before, a
// platform of it written again gains its tag, and a previous tflock reads
// what this one writes. A platform whose tag would
// be longer than the 128 characters a tag may have is kept in the index
// only.
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
// the manifests (a provider platform's under its own tag), and the tag
// (the index, for a provider) last, so that a reader never finds a tag
// whose content is missing. Manifests are
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
