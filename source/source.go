// Package source defines where versions and packages come from: small
// capability interfaces that the solver and the installer consume, the
// package identities they speak about, typed errors, and decorators that
// compose sources (see [Multi] and [Memoize]).
//
// Concrete sources live in sub-packages: source/registry (the provider and
// module registry protocols), source/mirror (filesystem and network mirrors),
// source/git and source/oci. None of them is imported by this package.
//
// # Capabilities
//
// A source implements [Lister] (which versions exist) and [Fetcher] (bring one
// package to a directory). A source that already knows the checksums its
// origin vouches for, without downloading, also implements
// [ChecksumReporter]; callers discover that by type assertion. A source
// that downloads archives is an [ArchiveFetcher]: it hands a package over
// unextracted to a caller that verifies and extracts it in one pass. A source
// whose module packages are stored elsewhere (a module registry) is a
// [ModuleLocator]: it reports where, and does not fetch from git or OCI
// itself.
//
// # What a package may hold
//
// Every source that downloads or extracts an archive takes one [Limits]
// field in its options (defaults stated once, on [Limits]) and refuses a
// package beyond them with an error wrapping [ErrTooLarge]. A module
// package is installed without version-control metadata (".git", ".hg",
// ".svn", ".bzr", by the one rule in [hash.IsVCSMetadata]), which its h1:
// leaves out too, so that the tree installed is exactly the tree the lock
// file's hash covers; a provider package is installed whole.
//
// # Events
//
// Sources, the cache and the installer report progress as [Event] values
// to an [Events] handler given in their options. Each event caused by a
// call carries the unit of work named on the call's context ([WithUnit]),
// and also goes to the handlers attached to that context ([WithEvents]):
// a program that runs many configurations at once on shared sources and
// a shared cache tells their events apart without a handler per unit.
package source

import (
	"context"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source/address"
)

// Lister lists the versions of a package that a source can provide.
type Lister interface {
	// Versions returns the versions available for the package family of
	// pkg; the Version and Platform fields of pkg are ignored. The result
	// is sorted by ascending version. A package the source does not know
	// gives an error wrapping [ErrNotFound].
	Versions(ctx context.Context, pkg Package) ([]Available, error)
}

// Fetcher brings one exact package version to a local directory.
type Fetcher interface {
	// Fetch downloads (or copies) pkg and extracts it into dir, which must
	// not exist yet or be empty. On error nothing is left in dir.
	Fetch(ctx context.Context, pkg Package, dir string) (*Fetched, error)
}

// Source is the usual combination of a [Lister] and a [Fetcher].
type Source interface {
	Lister
	Fetcher
}

// ChecksumReporter is an optional capability of a [Source]: it reports the
// hashes its origin vouches for (signed SHA256SUMS, a mirror's hashes, OCI
// layer digests), for every platform where it can, without fetching the
// package. Each returned hash carries its provenance.
type ChecksumReporter interface {
	Checksums(ctx context.Context, pkg Package) ([]hash.Record, error)
}

// Hasher is an optional capability of a [Fetcher]: it reports the hashes
// of the package it would fetch without leaving its files anywhere, for
// hash-only locking ("tofu providers lock" for platforms other than this
// machine's, whose packages nothing here installs). The [Fetched] it
// returns has no Dir; its Hashes are the package's own (its h1: and, for
// a provider zip, the zh: of its archive), checked as Fetch checks them,
// and Origin what its origin vouched for when it was downloaded now. The
// fetcher of a cache (source/cache's Cache.Fetcher) is a Hasher.
type Hasher interface {
	FetchHashes(ctx context.Context, pkg Package) (*Fetched, error)
}

// ModuleLocator is an optional capability of a [Source] whose module
// packages are stored elsewhere: a module registry, whose download
// endpoint names where a version's package is, and an HTTP address that
// names another location in its X-Terraform-Get answer. It reports that
// location, and a dispatcher (source/assemble's Dispatch) routes it to the
// source of its kind: git, OCI or an HTTP archive. A locator never fetches
// from another kind of source itself.
type ModuleLocator interface {
	// ModuleLocation reports where pkg is. A location on this machine's
	// disk is refused with an error. A package the source does not know
	// gives an error wrapping [ErrNotFound], an unknown version one
	// wrapping [ErrVersionNotFound].
	ModuleLocation(ctx context.Context, pkg ModulePackage) (ModuleLocation, error)
}

// ModuleLocation is where a [ModuleLocator] says a module package is.
type ModuleLocation struct {
	// Address is the package's location, written as a module source
	// address: "git::URL?ref=REF", "oci://REPOSITORY?tag=TAG" or the URL
	// of a .zip or .tar.gz archive, each optionally followed by
	// "//SUBDIR", the directory of the package that is the module's root.
	Address string
	// Archive, set when Address is an HTTP(S) archive, downloads and
	// extracts it with what the locator knows of it (the module
	// registry's credentials when the registry asks for them); the
	// package it is given is the one located, for events and messages.
	// Nil otherwise.
	Archive Fetcher
	// Addr is Address typed, set by a locator that parsed it; the zero
	// value when it did not ([ModuleLocation.Remote] parses Address
	// then).
	Addr address.Remote
}

// Available is one version a [Lister] reports.
type Available struct {
	// Version is the version available.
	Version versions.Version
	// Platforms lists the platforms a provider version is built for, when
	// the source knows; nil means unknown. Always nil for modules.
	Platforms []Platform
	// Protocols lists the provider plugin protocol versions ("5.0", "6.0")
	// when the source reports them.
	Protocols []string
	// Ref is the name the version is published under at the origin when it
	// differs from the version's own spelling: a git tag ("v1.2.0") or an OCI
	// tag ("1.2.0_build"). Empty otherwise.
	Ref string
	// Pin is the immutable identity of the version when the origin has one
	// and reports it while listing: a git commit (40 hex digits) or an OCI
	// manifest digest ("sha256:..."). Empty otherwise.
	Pin string
}

// Fetched describes a package that [Fetcher.Fetch] brought to disk.
type Fetched struct {
	// Package is the package fetched.
	Package Package
	// Dir is the directory holding the package contents. For a module with a
	// subdirectory (//sub), Dir is the package root; the caller joins the
	// subdirectory.
	Dir string
	// Location is where the package came from (a URL or path), with any
	// credentials removed, for messages.
	Location string
	// Size is the number of bytes transferred (the archive size), or 0.
	Size int64
	// Hashes are the hashes computed locally of what was fetched: always the
	// h1: of Dir, plus the zh: of the archive when the package was a
	// provider zip (for an Archive, see there).
	Hashes []hash.Hash
	// Origin are the hashes the origin vouches for, with provenance, such as
	// the signed zh: of every platform of a provider release. May be empty.
	Origin []hash.Record
	// Pin is the immutable identity the package was fetched at: a git commit
	// or an OCI manifest digest. Empty for other sources.
	Pin string
	// Archive, set only by an [ArchiveFetcher]'s FetchArchive,
	// is the path of the package's zip archive, downloaded (into the
	// directory the fetch was given) or found (a filesystem mirror's
	// file, which the caller only reads), checked against what the origin
	// states for it as far as that needs no extraction (size, zh:), but
	// not extracted; Dir is then empty and Hashes hold the archive's zh:
	// and any h1: the origin states for it. The caller extracts the
	// archive within Limits, computes its h1: and checks it against
	// Hashes.
	Archive string
	// ArchiveData, set only by an [ArchiveFetcher]'s FetchArchive under a
	// context made with [WithArchiveInMemory], is the package's zip
	// archive, complete, held in memory instead of a file: Archive and
	// Dir are then empty, and it is checked and read as an Archive is. A
	// registry source keeps an archive there when its response announces
	// at most 2 MiB and the process's budget for such archives (32 MiB
	// in all) has room; the caller calls Release once done with it.
	ArchiveData []byte
	// Release, set only with ArchiveData, gives the memory ArchiveData
	// holds back to its source's budget; the caller calls it once, when
	// it no longer reads ArchiveData.
	Release func()
	// Pending, set only with Archive, is that archive while it is still
	// being downloaded (see [PendingArchive]): the caller may read it
	// before its last byte has arrived, and must call its Wait, which
	// also ends the download's own checks. Nil when Archive is complete.
	Pending PendingArchive
	// Limits are the limits of the source that delivered Archive, which
	// the caller applies when it extracts.
	Limits Limits
	// Subdir is a subdirectory of Dir that the origin designated as the
	// module's root (a module registry whose download location ends in
	// "//SUBDIR"), slash-separated; "" when the root is Dir itself. The
	// caller joins its own "//subdir" below it.
	Subdir string
	// Warnings are the warnings about this fetch meant for the user (a
	// release accepted without a signature, one signed with an expired
	// key), also reported as [EventWarning] events; a source that
	// learns a warning once for many fetches (a release's checksums,
	// verified once) returns it with each of them. Nil when there is none.
	Warnings []string
}
