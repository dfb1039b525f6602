package cache_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/mod/sumdb/dirhash"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
)

// FuzzIndex replaces the index record of a cached package with fuzzed
// bytes and checks that the cache stays sound: nothing panics; an entry
// Lookup returns lies inside the cache's objects directory and hashes to
// its H1; the intact entry is never taken for a damaged one and
// discarded; and Fill afterwards serves the same content and rewrites a
// usable record, through which a lookup by the entry's own h1: and zh:
// hits. (A provider entry is found through its record only, so a damaged
// record may make a lookup miss; it never makes one give another entry.)
func FuzzIndex(f *testing.F) {
	zh := hash.NewHash(hash.SchemeZH, [32]byte{1, 2, 3})
	seedDir := f.TempDir()
	c, err := cache.Open(seedDir, cache.Options{})
	if err != nil {
		f.Fatal(err)
	}
	var calls atomic.Int32
	e, _, err := c.Fill(context.Background(), testPkg, nil, countingFetch(f, testFiles, &calls, zh))
	if err != nil {
		f.Fatal(err)
	}
	rec, err := os.ReadFile(indexFile(f, seedDir))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(rec)
	// The same record with another spelling of the entry's h1: (the last
	// base64 digit's unused bits set).
	v := e.H1.Value()
	last := strings.IndexByte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", v[len(v)-2])
	other := string(e.H1)[:len(e.H1)-2] + string("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[last^1]) + "="
	f.Add([]byte(strings.ReplaceAll(string(rec), string(e.H1), other)))
	f.Add([]byte(`{"package":"x","h1":"h1:../../etc","hashes":null}`))
	f.Add([]byte("{"))

	f.Fuzz(func(t *testing.T, record []byte) {
		ctx := context.Background()
		dir := t.TempDir()
		var damaged atomic.Int32
		c, err := cache.Open(dir, cache.Options{Events: source.EventsFunc(func(ev source.Event) {
			if ev.Kind == source.EventWarning {
				damaged.Add(1)
			}
		})})
		if err != nil {
			t.Fatal(err)
		}
		var calls atomic.Int32
		e, _, err := c.Fill(ctx, testPkg, nil, countingFetch(t, testFiles, &calls, zh))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(indexFile(t, dir), record, 0o644); err != nil {
			t.Fatal(err)
		}
		objects := filepath.Join(c.Dir(), "objects") + string(filepath.Separator)
		for _, want := range [][]hash.Hash{nil, {e.H1}, {zh}, {hash.NewHash(hash.SchemeH1, [32]byte{7})}, {hash.NewHash(hash.SchemeZH, [32]byte{7})}} {
			got, ok, err := c.Lookup(ctx, testPkg, want)
			if err != nil {
				t.Fatalf("Lookup(%v): %v", want, err)
			}
			if ok && got.H1 != e.H1 {
				t.Errorf("Lookup(%v) gives the entry %s, not the package's %s", want, got.H1, e.H1)
			}
			if !ok {
				continue
			}
			if !strings.HasPrefix(got.Dir, objects) {
				t.Errorf("Lookup(%v) gives %s, outside %s", want, got.Dir, objects)
			}
			if h, err := dirhash.HashDir(got.Dir, "", dirhash.Hash1); err != nil || h != string(got.H1) {
				t.Errorf("Lookup(%v) gives %s whose content hashes to %s (%v), not %s", want, got.Dir, h, err, got.H1)
			}
		}
		if n := damaged.Load(); n != 0 {
			t.Errorf("the intact entry was reported damaged %d times", n)
		}
		if _, err := os.Stat(e.Dir); err != nil {
			t.Errorf("the intact entry is gone: %v", err)
		}
		e2, _, err := c.Fill(ctx, testPkg, []hash.Hash{zh}, countingFetch(t, testFiles, &calls, zh))
		if err != nil {
			t.Fatalf("Fill after the damaged record: %v", err)
		}
		if e2.H1 != e.H1 {
			t.Errorf("Fill after the damaged record gives %s, want %s", e2.H1, e.H1)
		}
		if _, ok, _ := c.Lookup(ctx, testPkg, []hash.Hash{zh}); !ok {
			t.Errorf("after Fill, the record does not find the entry by its zh:")
		}
		if got, ok, _ := c.Lookup(ctx, testPkg, []hash.Hash{e.H1}); !ok || got.H1 != e.H1 {
			t.Errorf("after Fill, a lookup by the entry's own h1: ok=%v, entry %+v", ok, got)
		}
	})
}

// indexFile returns the one index record in the cache directory dir.
func indexFile(t testing.TB, dir string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "index", "*.json"))
	if len(files) != 1 {
		t.Fatalf("want one index record, have %v", files)
	}
	return files[0]
}
