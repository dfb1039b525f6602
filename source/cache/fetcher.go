package cache

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
)

// Fetcher returns a [source.Fetcher] that serves packages through the cache:
// on a miss it fetches from f into a new entry; either way it copies the
// entry into the directory asked for. The returned Fetched has the entry's
// hashes and pin. Checksums are not checked against a lock here (a plain
// Fetch does not know them); use [Cache.Fill] for that.
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
// files with their permission bits, directories, and symbolic links as
// links. Other file types are an error.
func CopyDir(dst, src string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case info.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case info.Mode().IsRegular():
			return copyFile(target, p, info.Mode().Perm())
		}
		return fmt.Errorf("%s: unsupported file type %v", p, info.Mode().Type())
	})
}

func copyFile(dst, src string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
