package mirrorserve

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/internal/archive"
	"github.com/tflock/tflock/source/internal/fsutil"
)

// bringOptions are what bringArchive fetches with.
type bringOptions struct {
	Source source.Fetcher
	Cache  *cache.Cache
	Remote cache.Remote
}

// bringArchive brings pkg's archive to dst, which does not exist: from the
// remote tier when it has it, else from the origin (counted is called for
// each fetch). The archive is checked (checkArchive) before it is renamed into place, so
// that dst is a verified archive or nothing; the work files are removed.
func bringArchive(ctx context.Context, o bringOptions, pkg source.ProviderPackage, want []hash.Hash, dst string, counted func()) (hash.ZipSum, error) {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return hash.ZipSum{}, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dst), tmpPrefix)
	if err != nil {
		return hash.ZipSum{}, err
	}
	defer os.RemoveAll(tmp)
	zip := filepath.Join(tmp, "package.zip")
	if o.Remote != nil && hasComputable(want) {
		if _, err := o.Remote.Get(ctx, pkg, want, zip); err == nil {
			counted()
			if sum, err := checkArchive(ctx, o.Cache, pkg, zip, want, nil); err == nil {
				return sum, os.Rename(zip, dst)
			}
		}
		// A miss or a bad copy: the origin is asked, as the cache does.
		_ = os.Remove(zip)
	}
	f, err := source.FetchArchive(ctx, o.Source, pkg, filepath.Join(tmp, "fetch"))
	if err != nil {
		return hash.ZipSum{}, err
	}
	counted()
	if f.Pending != nil {
		if err := f.Pending.Wait(); err != nil {
			return hash.ZipSum{}, err
		}
		f.Pending = nil
	}
	switch {
	case f.Archive == "" && f.Dir != "":
		// An extracted package (an unpacked filesystem mirror): served as
		// a deterministic zip of its files, whose h1: is the tree's; its
		// zh: is its own, no origin's.
		err = writeZip(ctx, f.Dir, zip)
		f = &source.Fetched{Package: f.Package, Location: f.Location, Limits: f.Limits}
	case f.Archive == "":
		return hash.ZipSum{}, &source.Error{Package: pkg, Err: fmt.Errorf("the installation method serving it (%s) gives no package", f.Location)}
	case inside(tmp, f.Archive):
		err = os.Rename(f.Archive, zip)
	default:
		// A filesystem mirror's own file, which is only read.
		err = fsutil.CopyFile(f.Archive, zip, 0o644)
	}
	if err != nil {
		return hash.ZipSum{}, err
	}
	sum, err := checkArchive(ctx, o.Cache, pkg, zip, want, f)
	if err != nil {
		return hash.ZipSum{}, err
	}
	return sum, os.Rename(zip, dst)
}

// checkArchive puts the archive at p through the cache c: filled from it
// (verified against want and what the source stated, extracted within the
// source's limits, written through to the remote tier) when the cache does
// not hold pkg yet; compared with the entry when it does.
func checkArchive(ctx context.Context, c *cache.Cache, pkg source.ProviderPackage, p string, want []hash.Hash, f *source.Fetched) (hash.ZipSum, error) {
	zh, err := hash.ZH(p)
	if err != nil {
		return hash.ZipSum{}, &source.Error{Package: pkg, Err: err}
	}
	if hasScheme(want, hash.SchemeZH) && !slices.Contains(want, zh) && !hasScheme(want, hash.SchemeH1) {
		return hash.ZipSum{}, &source.Error{Package: pkg, Err: &cache.MismatchError{Got: []hash.Hash{zh}, Want: want}}
	}
	used := false
	e, _, err := c.Fill(ctx, pkg, want, func(ctx context.Context, dir string) (*source.Fetched, error) {
		used = true
		out := &source.Fetched{Package: pkg, Archive: p, Hashes: []hash.Hash{zh}}
		if f != nil {
			out.Location, out.Origin, out.Limits = f.Location, f.Origin, f.Limits
			for _, x := range f.Hashes {
				if !slices.Contains(out.Hashes, x) {
					out.Hashes = append(out.Hashes, x)
				}
			}
		}
		return out, nil
	})
	if err != nil {
		return hash.ZipSum{}, err
	}
	sum := hash.ZipSum{H1: e.H1, ZH: zh}
	if used || slices.Contains(e.Hashes, zh) || slices.Contains(want, zh) {
		return sum, nil
	}
	// The cache held pkg already (or its remote tier did): this archive
	// must be that package.
	h1, err := hash.H1Zip(p)
	if err != nil {
		return hash.ZipSum{}, &source.Error{Package: pkg, Err: err}
	}
	if h1 != e.H1 {
		return hash.ZipSum{}, &source.Error{Package: pkg, Err: &cache.MismatchError{Got: []hash.Hash{h1, zh}, Want: []hash.Hash{e.H1}}}
	}
	return sum, nil
}

// writeZip writes the files under dir to the new file p as a
// deterministic zip.
func writeZip(ctx context.Context, dir, p string) error {
	out, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if err := archive.WriteZip(ctx, dir, out); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// tmpPrefix names the work files and directories of this package in an
// archive or tool directory.
const tmpPrefix = ".tflock-tmp-"

// staleAfter is how old a work directory must be before sweep takes it for
// the debris of a killed run rather than the work of a running one.
const staleAfter = time.Hour

// sweep removes under dir the work directories and files of runs that
// were killed (older than staleAfter). Errors are ignored: debris costs
// only space.
func sweep(dir string) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !strings.HasPrefix(d.Name(), tmpPrefix) {
			return nil
		}
		if info, err := d.Info(); err == nil && time.Since(info.ModTime()) > staleAfter {
			_ = os.RemoveAll(p)
		}
		if d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	})
}

func hasScheme(hs []hash.Hash, s hash.Scheme) bool {
	return slices.ContainsFunc(hs, func(x hash.Hash) bool { return x.Scheme() == s })
}

func hasComputable(hs []hash.Hash) bool {
	return slices.ContainsFunc(hs, func(x hash.Hash) bool { return hash.Computable(x.Scheme()) })
}

func inside(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
