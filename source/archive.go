package source

import (
	"context"
	"errors"
)

type acceptArchivesKey struct{}

// AcceptArchives returns a context under which a [Fetcher] may deliver a
// package as its archive instead of extracting it: the caller promises to
// handle a [Fetched] whose Archive field is set, extracting and hashing the
// archive itself. source/cache does this on every fill, so that a package
// is read once (its zh: checked, its files extracted and its h1: computed in
// one pass) instead of being extracted by the source and hashed again by
// the cache.
//
// A Fetcher that can deliver an archive (the provider registry protocol,
// network and filesystem mirrors of packed providers) does so only under
// such a context; every other Fetcher ignores it and extracts as usual. A
// decorator that reads what it fetched before returning (and so needs the
// files) must call its inner Fetcher with [WithoutArchives].
func AcceptArchives(ctx context.Context) context.Context {
	return context.WithValue(ctx, acceptArchivesKey{}, true)
}

// WithoutArchives returns a context under which Fetchers extract, undoing
// [AcceptArchives].
func WithoutArchives(ctx context.Context) context.Context {
	if !ArchivesAccepted(ctx) {
		return ctx
	}
	return context.WithValue(ctx, acceptArchivesKey{}, false)
}

// ArchivesAccepted reports whether ctx comes from [AcceptArchives]: a
// Fetcher may then return the package's archive in [Fetched.Archive]
// instead of extracting it.
func ArchivesAccepted(ctx context.Context) bool {
	ok, _ := ctx.Value(acceptArchivesKey{}).(bool)
	return ok
}

// A PendingArchive is a package archive a [Fetcher] is still downloading
// into [Fetched.Archive], handed over under [AcceptArchives] so that the
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
