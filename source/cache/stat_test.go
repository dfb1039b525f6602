//go:build unix

package cache_test

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tflock/tflock/internal/testfs"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source/cache"
)

// A verified entry whose files are unchanged by their metadata is used
// without being read; a change the metadata cannot show (same size, the
// modification time put back) is therefore not seen by the default check,
// and is seen under Reverify, which hashes again: the threat model the
// package documents.
func TestStatTrustAndReverify(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []string{"default", "Options.Reverify", "Reverify(ctx)"} {
		t.Run(mode, func(t *testing.T) {
			c, e, calls := filled(t, cache.Options{Reverify: mode == "Options.Reverify"})
			testfs.RewriteInPlace(t, filepath.Join(e.Dir, "README.md"), false)
			fctx := ctx
			if mode == "Reverify(ctx)" {
				fctx = cache.Reverify(ctx)
			}
			_, hit, err := c.Fill(fctx, testPkg, []hash.Hash{e.H1}, countingFetch(t, testFiles, calls))
			if err != nil {
				t.Fatal(err)
			}
			if wantHit := mode == "default"; hit != wantHit {
				t.Fatalf("hit = %v, want %v (calls %d)", hit, wantHit, calls.Load())
			}
		})
	}
}

// Any change the metadata shows (an edit in place, a replaced file, a file
// added) makes the entry hashed again, found damaged and fetched again.
func TestStatTrustSeesEdits(t *testing.T) {
	ctx := context.Background()
	edits := map[string]func(t *testing.T, dir string){
		"append": func(t *testing.T, dir string) {
			f, err := os.OpenFile(filepath.Join(dir, "README.md"), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("more\n")
			f.Close()
		},
		"same size, new time": func(t *testing.T, dir string) {
			testfs.RewriteInPlace(t, filepath.Join(dir, "README.md"), false)
			later := time.Now().Add(time.Hour)
			if err := os.Chtimes(filepath.Join(dir, "README.md"), later, later); err != nil {
				t.Fatal(err)
			}
		},
		"replaced": func(t *testing.T, dir string) {
			p := filepath.Join(dir, "README.md")
			fi, _ := os.Stat(p)
			tmp := p + ".new"
			if err := os.WriteFile(tmp, []byte("null provideX\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			os.Chtimes(tmp, fi.ModTime(), fi.ModTime())
			if err := os.Rename(tmp, p); err != nil {
				t.Fatal(err)
			}
		},
		"added": func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "extra"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, edit := range edits {
		t.Run(name, func(t *testing.T) {
			c, e, calls := filled(t, cache.Options{})
			edit(t, e.Dir)
			_, hit, err := c.Fill(ctx, testPkg, []hash.Hash{e.H1}, countingFetch(t, testFiles, calls))
			if err != nil {
				t.Fatal(err)
			}
			if hit || calls.Load() != 2 {
				t.Fatalf("hit = %v, calls = %d: the edited entry was used", hit, calls.Load())
			}
		})
	}
}

// linkTree hard-links (or, with copyFiles, copies) the files of src into dst.
func linkTree(t *testing.T, src, dst string, copyFiles bool) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		if copyFiles {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(to, b, 0o644)
		}
		return os.Link(p, to)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Installed vouches for a directory of hard links to an unchanged entry,
// and for nothing else.
func TestInstalled(t *testing.T) {
	ctx := context.Background()
	c, e, _ := filled(t, cache.Options{})
	linked := filepath.Join(t.TempDir(), "linked")
	linkTree(t, e.Dir, linked, false)
	if h1, ok := c.Installed(ctx, testPkg, linked); !ok || h1 != e.H1 {
		t.Fatalf("Installed(links) = %s, %v; want %s, true", h1, ok, e.H1)
	}
	if _, ok := c.Installed(cache.Reverify(ctx), testPkg, linked); ok {
		t.Error("Installed vouched under Reverify")
	}
	copied := filepath.Join(t.TempDir(), "copied")
	linkTree(t, e.Dir, copied, true)
	if _, ok := c.Installed(ctx, testPkg, copied); ok {
		t.Error("Installed vouched for a copy")
	}
	other := testPkg
	other.Platform.Arch = "arm64"
	if _, ok := c.Installed(ctx, other, linked); ok {
		t.Error("Installed vouched for another platform's package")
	}
	if err := os.WriteFile(filepath.Join(linked, "extra"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Installed(ctx, testPkg, linked); ok {
		t.Error("Installed vouched for a directory with an extra file")
	}
	os.Remove(filepath.Join(linked, "extra"))
	f, err := os.OpenFile(filepath.Join(linked, "README.md"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("edited through the link\n")
	f.Close()
	if _, ok := c.Installed(ctx, testPkg, linked); ok {
		t.Error("Installed vouched for an edited file")
	}
}

// filled opens a cache with opts, fills testPkg into it with a counting
// fetch, and returns the cache, the entry and the fetch counter.
func filled(t *testing.T, opts cache.Options) (*cache.Cache, cache.Entry, *atomic.Int32) {
	t.Helper()
	c, err := cache.Open(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	calls := new(atomic.Int32)
	e, _, err := c.Fill(context.Background(), testPkg, nil, countingFetch(t, testFiles, calls))
	if err != nil {
		t.Fatal(err)
	}
	return c, e, calls
}
