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
// hashes and pin. Checksums are not checked against a lock here (a plain
// Fetch does not know them); use [Cache.Fill] for that. With no hash to
// check an entry against, only what this Cache fetched itself is served
// from it (see [Cache.Lookup]): another process's fill is fetched again.
func (c *Cache) Fetcher(f source.Fetcher) source.Fetcher {
	return &cachedFetcher{c: c, f: f}
}

type cachedFetcher struct {
	c *Cache
	f source.Fetcher
}

// Fetch implements [source.Fetcher].
func (cf *cachedFetcher) Fetch(ctx context.Context, pkg source.Package, dir string) (*source.Fetched, error) {
	c, f := cf.c, cf.f
	var origin []hash.Record
	e, _, err := c.Fill(ctx, pkg, nil, func(ctx context.Context, tmp string) (*source.Fetched, error) {
		got, err := f.Fetch(ctx, pkg, tmp)
		if got != nil {
			origin = got.Origin
		}
		return got, err
	})
	if err != nil {
		return nil, err
	}
	if err := CopyDir(dir, e.Dir); err != nil {
		_ = os.RemoveAll(dir)
		return nil, &source.Error{Source: "cache " + c.dir, Package: pkg, Err: err}
	}
	return &source.Fetched{Package: pkg, Dir: dir, Location: e.Location, Hashes: e.Hashes, Origin: origin, Pin: e.Pin, Subdir: e.Subdir}, nil
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
