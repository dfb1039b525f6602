package source

import (
	"context"
	"errors"
)

// ArchiveFetcher is an optional capability of a [Fetcher] that downloads
// a package as an archive: FetchArchive may return the archive as
// downloaded, possibly still downloading, for the caller to verify and
// extract in one pass, instead of extracting it. The caller promises to
// handle a [Fetched] whose Archive field is set: it extracts the archive
// within Fetched.Limits, computes its hashes and checks them against
// Fetched.Hashes (and waits for Fetched.Pending). source/cache does this
// on every fill, so that a package is read once (its zh: checked, its
// files extracted and its h1: computed in one pass) instead of being
// extracted by the source and hashed again by the cache.
//
// FetchArchive may also extract the package as Fetch does (a module
// archive that is not a zip, a filesystem mirror's unpacked provider, a
// mirror listing hashes the caller could not check): the caller handles
// both. The registry protocols (source/registry's Source and
// ArchiveSource) and the network and filesystem mirrors implement it; a
// source that routes a package to another ([Multi], a [Selector],
// [Memoize], source/assemble's Dispatch) forwards it to the source it
// picks, calling that one's Fetch when it is not an ArchiveFetcher. A decorator that reads what it fetched before returning
// (and so needs the files) simply does not implement it. Callers use
// [FetchArchive].
type ArchiveFetcher interface {
	FetchArchive(ctx context.Context, pkg Package, dir string) (*Fetched, error)
}

// archiveInMemory is the context key of [WithArchiveInMemory].
type archiveInMemory struct{}

// WithArchiveInMemory returns ctx in which an [ArchiveFetcher]'s
// FetchArchive may hand a small archive over in memory
// ([Fetched.ArchiveData]) rather than as a file: the caller that makes it
// promises to handle that form too (source/cache does). Without it, an
// archive is always a file.
func WithArchiveInMemory(ctx context.Context) context.Context {
	return context.WithValue(ctx, archiveInMemory{}, true)
}

// ArchiveInMemory reports whether ctx allows an archive to be handed over
// in memory ([WithArchiveInMemory]).
func ArchiveInMemory(ctx context.Context) bool {
	v, _ := ctx.Value(archiveInMemory{}).(bool)
	return v
}

// FetchArchive asks f for pkg as its archive when f is an
// [ArchiveFetcher], and calls its Fetch otherwise: the result has either
// Dir or Archive set.
func FetchArchive(ctx context.Context, f Fetcher, pkg Package, dir string) (*Fetched, error) {
	if af, ok := f.(ArchiveFetcher); ok {
		return af.FetchArchive(ctx, pkg, dir)
	}
	return f.Fetch(ctx, pkg, dir)
}

// FetchWith is how a routing source ([Multi], a [Selector],
// source/assemble's Dispatch) fetches pkg from the source f it picked:
// as an archive ([FetchArchive]) when archive is set (its own
// FetchArchive was called), else with f's Fetch.
func FetchWith(ctx context.Context, f Fetcher, pkg Package, dir string, archive bool) (*Fetched, error) {
	if archive {
		return FetchArchive(ctx, f, pkg, dir)
	}
	return f.Fetch(ctx, pkg, dir)
}

// A PendingArchive is a package archive a [Fetcher] is still downloading
// into [Fetched.Archive], handed over by an [ArchiveFetcher] so that the
// caller reads it as it arrives instead of after the download: the cache
// extracts and hashes a large provider while its bytes are still coming.
//
// What the origin states that needs no bytes (the signed checksums listing
// the package) has been checked before it is handed over; what needs the
// bytes (their zh:, the size) is the caller's to check against
// [Fetched.Hashes] on what it read, as for a complete Archive, and nothing
// may be published before Wait has returned nil.
type PendingArchive interface {
	// ReadAt reads the archive, waiting until the bytes asked for have
	// arrived. It fails with the download's error if the download failed
	// first, or with an error wrapping [ErrArchiveRestarted].
	ReadAt(p []byte, off int64) (int, error)
	// Size is the archive's size.
	Size() int64
	// Wait waits for the download to end and returns its error: nil once
	// Archive is complete and holds the bytes ReadAt returned. It must be
	// called once, also after a failed read (the download stops with the
	// context the Fetch was given).
	Wait() error
}

// ErrArchiveRestarted is wrapped by the error of [PendingArchive.ReadAt]
// when the download had to start again from its first byte (a retried
// request): what was read may not be what the archive finally holds. The
// caller waits for Wait and reads the complete archive.
var ErrArchiveRestarted = errors.New("the archive's download restarted")
