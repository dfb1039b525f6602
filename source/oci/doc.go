// Package oci reads OpenTofu module packages and provider mirrors from OCI
// Distribution registries, through oras-go (as OpenTofu does). [NewSource]
// returns a [Source] that implements [source.Lister], [source.Fetcher] and
// [source.ChecksumReporter].
//
// # Versions
//
// The versions of a module or provider are the repository's tags that are
// strict semantic versions ("1.2.0", "1.3.0-beta.1"). OCI tags cannot hold
// "+", so "_" stands for it: the tag "1.2.0_build.5" is version
// "1.2.0+build.5". "latest" and every other tag are ignored. Beyond
// OpenTofu (which allows no version constraint on oci:// module sources,
// opentofu/opentofu#2495), a module can thus be selected by a constraint
// such as "~> 1.2" and locked by version and manifest digest.
//
// # Modules
//
// A module package address is "oci://HOST/REPOSITORY" (the canonical form,
// without subdirectory, tag or digest). [source.ModulePackage.Ref] selects
// a tag or a digest ("sha256:..."); without it the version's tag is used,
// and without a version the tag "latest". The reference must resolve to an
// image manifest with artifactType "application/vnd.opentofu.modulepkg"
// and exactly one layer of media type "archive/zip", which is extracted
// (no entry may leave the target directory; links and devices are refused;
// sizes and entries are bounded by [Options.Limits]) without its
// version-control metadata, and hashed by the module rule, as every module
// source does (see [github.com/tflock/tflock/hash.IsVCSMetadata]). The
// manifest digest is the module's pin: when
// [source.ModulePackage.Pin] holds the digest a lock file recorded and the
// tag named by Ref or by the version now refers to another, Fetch fails
// with a [*MovedTagError]; a digest named by Ref must be the pinned one. A
// module with neither Ref nor Version follows the implied "latest", which
// moves on by design: with Pin set, the pinned digest itself is fetched.
//
// # Provider mirrors
//
// [Options.ProviderRepository] maps a provider address to a repository,
// like OpenTofu's oci_mirror repository_template. A provider version's tag
// refers to an image index with artifactType
// "application/vnd.opentofu.provider" listing one image manifest per
// platform (artifactType "application/vnd.opentofu.provider-target",
// platform os and architecture set), each with one "archive/zip" layer.
// The layer's SHA-256 digest is the package's zh: hash, so the mirror
// vouches for every platform's zh: without any archive being downloaded
// ([Source.Checksums] with [Options.AllPlatformChecksums]). Artifacts of
// another shape (an image manifest where an index is required, a module
// package, a container image, two manifests for one platform, a manifest
// without a zip layer) give an [*ArtifactError].
//
// # Integrity
//
// Manifests larger than 4 MiB are refused ([ErrManifestTooLarge]). Every
// manifest and layer is checked against its descriptor's size and digest
// as it is read; a mismatch wraps [source.ErrChecksumMismatch] and nothing
// is left in the target directory.
//
// # Credentials
//
// Access is anonymous unless configured. [Options.Credentials] gives
// credentials directly. Otherwise [Options.ConfigFiles] lists
// docker/containers-style files (see [DefaultConfigFiles] for OpenTofu's
// search order); in them "auths" entries (base64 "auth",
// "username"/"password", "identitytoken"), "credHelpers" and the
// "credsStore" fallback, whose helpers are run as
// "docker-credential-NAME get". The entry whose key ("host", or a
// repository prefix "host/namespace") most specifically matches the
// repository wins.
package oci
