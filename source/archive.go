package source

import "context"

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
