package cache

import (
	"context"
	"os"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/internal/fsutil"
)

// Fetcher returns a [source.Fetcher] that serves packages through the cache:
// on a miss it fetches from f into a new entry; either way it copies the
// entry into the directory asked for. The returned Fetched has the entry's
// hashes and pin, and, when f was asked now, the hashes f's origin vouched
// for and the fetch's warnings. Checksums are not checked against a lock
// here (a plain Fetch does not know them); use [Cache.Fill] for that. With
// no hash to check an entry against, only what this Cache fetched itself
// is served from it (see [Cache.Lookup]): another process's fill is
// fetched again.
//
// The fetcher is also a [source.Hasher]: its FetchHashes is [Cache.Hash]
// (a package's hashes without its files, for hash-only locking), for an
// installer that holds only this fetcher.
func (c *Cache) Fetcher(f source.Fetcher) source.Fetcher {
	return &cachedFetcher{c: c, f: f}
}

var _ source.Hasher = (*cachedFetcher)(nil)

type cachedFetcher struct {
	c *Cache
	f source.Fetcher
}

// Fetch implements [source.Fetcher].
func (cf *cachedFetcher) Fetch(ctx context.Context, pkg source.Package, dir string) (*source.Fetched, error) {
	c := cf.c
	e, origin, err := cf.through(ctx, c.Fill, pkg)
	if err != nil {
		return nil, err
	}
	if err := CopyDir(dir, e.Dir); err != nil {
		_ = os.RemoveAll(dir)
		return nil, &source.Error{Source: "cache " + c.dir, Package: pkg, Err: err}
	}
	return &source.Fetched{Package: pkg, Dir: dir, Location: e.Location, Hashes: e.Hashes, Origin: origin, Pin: e.Pin, Subdir: e.Subdir, Warnings: e.Warnings}, nil
}

// FetchHashes implements [source.Hasher] with [Cache.Hash].
func (cf *cachedFetcher) FetchHashes(ctx context.Context, pkg source.Package) (*source.Fetched, error) {
	e, origin, err := cf.through(ctx, cf.c.Hash, pkg)
	if err != nil {
		return nil, err
	}
	return &source.Fetched{Package: pkg, Location: e.Location, Hashes: e.Hashes, Origin: origin, Pin: e.Pin, Subdir: e.Subdir, Warnings: e.Warnings}, nil
}

// through brings pkg through the cache method given (Fill or Hash),
// fetching it from the fetcher's source on a miss. origin is what the
// source vouched for when it was asked now; an index's record of it
// (Entry.Origin) is never returned as the origin's word.
func (cf *cachedFetcher) through(ctx context.Context, method func(context.Context, source.Package, []hash.Hash, FetchFunc) (Entry, bool, error), pkg source.Package) (Entry, []hash.Record, error) {
	var origin []hash.Record
	e, _, err := method(ctx, pkg, nil, func(ctx context.Context, tmp string) (*source.Fetched, error) {
		got, err := source.FetchArchive(ctx, cf.f, pkg, tmp)
		if got != nil {
			origin = got.Origin
		}
		return got, err
	})
	return e, origin, err
}

// CopyDir copies the tree at src into dst (created if missing): regular
// files with their permission bits (made writable by their owner),
// directories, and symbolic links as links. Other file types are left
// out. It is how a module package leaves the cache for its install
// directory (providers are hard-linked, see source/providercache).
func CopyDir(dst, src string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	return fsutil.CopyDirLinks(context.Background(), src, dst)
}
