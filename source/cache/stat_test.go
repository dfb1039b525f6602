//go:build unix

package cache_test

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source/cache"
)

// sameSizeEdit rewrites name in dir with other bytes of the same length
// and puts its modification time back: a change the file system's
// metadata does not show.
func sameSizeEdit(t *testing.T, dir, name string) {
	t.Helper()
	p := filepath.Join(dir, name)
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] = 'X'
	}
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
}

// A verified entry whose files are unchanged by their metadata is used
// without being read; a change the metadata cannot show (same size, the
// modification time put back) is therefore not seen by the default check,
// and is seen under Reverify, which hashes again: the threat model the
// package documents.
func TestStatTrustAndReverify(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []string{"default", "Options.Reverify", "Reverify(ctx)"} {
		t.Run(mode, func(t *testing.T) {
			c, err := cache.Open(t.TempDir(), cache.Options{Reverify: mode == "Options.Reverify"})
			if err != nil {
				t.Fatal(err)
			}
			var calls atomic.Int32
			e, _, err := c.Fill(ctx, testPkg, nil, countingFetch(t, testFiles, &calls))
			if err != nil {
				t.Fatal(err)
			}
			sameSizeEdit(t, e.Dir, "README.md")
			fctx := ctx
			if mode == "Reverify(ctx)" {
				fctx = cache.Reverify(ctx)
			}
			_, hit, err := c.Fill(fctx, testPkg, []hash.Hash{e.H1}, countingFetch(t, testFiles, &calls))
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
			sameSizeEdit(t, dir, "README.md")
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
			c, err := cache.Open(t.TempDir(), cache.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var calls atomic.Int32
			e, _, err := c.Fill(ctx, testPkg, nil, countingFetch(t, testFiles, &calls))
			if err != nil {
				t.Fatal(err)
			}
			edit(t, e.Dir)
			_, hit, err := c.Fill(ctx, testPkg, []hash.Hash{e.H1}, countingFetch(t, testFiles, &calls))
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
	c, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	e, _, err := c.Fill(ctx, testPkg, nil, countingFetch(t, testFiles, &calls))
	if err != nil {
		t.Fatal(err)
	}
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
