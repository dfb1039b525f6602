//go:build unix

package cache_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/internal/flock"
	"github.com/tflock/tflock/source/cache"
)

// outsideTree makes a directory outside any cache, as a user's files: an
// old file, and a read-only directory holding another old file. It returns
// the directory and a function that checks the tree is as it was made.
func outsideTree(t *testing.T) (string, func(what string)) {
	t.Helper()
	dir := t.TempDir()
	old := time.Now().Add(-72 * time.Hour)
	writeFiles(t, dir, map[string]string{"notes.txt": "mine\n", "ro/kept.txt": "mine too\n"})
	for _, p := range []string{"notes.txt", "ro/kept.txt", "ro"} {
		if err := os.Chtimes(filepath.Join(dir, p), old, old); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(dir, "ro"), 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(filepath.Join(dir, "ro"), 0o755) })
	return dir, func(what string) {
		t.Helper()
		for _, p := range []string{"notes.txt", "ro/kept.txt"} {
			if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
				t.Errorf("%s: %s outside the cache is gone: %v", what, p, err)
			}
		}
		if fi, err := os.Stat(filepath.Join(dir, "ro")); err != nil {
			t.Errorf("%s: the read-only directory outside the cache is gone: %v", what, err)
		} else if fi.Mode().Perm() != 0o555 {
			t.Errorf("%s: the read-only directory outside the cache was made %v", what, fi.Mode())
		}
	}
}

// TestSweepStaysInside is the regression test for issue 22 item 5 (the
// sweep): a symbolic link planted at the cache's tmp/ made Open's sweep
// delete the old files of the directory it points to, making its
// read-only directories writable first. Open now refuses the link with an
// error naming it, and changes nothing outside the cache.
func TestSweepStaysInside(t *testing.T) {
	outside, intact := outsideTree(t)
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	if err := os.Symlink(outside, tmp); err != nil {
		t.Fatal(err)
	}
	_, err := cache.Open(dir, cache.Options{})
	var ue *cache.UnsafePathError
	if !errors.Is(err, cache.ErrUnsafePath) || !errors.As(err, &ue) || ue.Path != tmp {
		t.Errorf("Open with tmp/ a link = %v, want an *UnsafePathError naming %s", err, tmp)
	}
	intact("Open with tmp/ a link")
}

// The sweep of a real tmp/ removes the links planted there under names it
// makes (the links, not what they point to), leaves names it does not
// make alone, and changes no mode outside the cache.
func TestSweepRemovesLinksNotTargets(t *testing.T) {
	outside, intact := outsideTree(t)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	key := "fill-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef-x"
	for _, name := range []string{"damaged-x", key} {
		if err := os.Symlink(outside, filepath.Join(dir, "tmp", name)); err != nil {
			t.Fatal(err)
		}
	}
	foreign := filepath.Join(dir, "tmp", "someone-elses")
	writeFiles(t, foreign, map[string]string{"f": "x"})
	old := time.Now().Add(-72 * time.Hour)
	if err := os.Chtimes(foreign, old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := cache.Open(dir, cache.Options{}); err != nil {
		t.Fatal(err)
	}
	intact("sweep of links in tmp/")
	for _, name := range []string{"damaged-x", key} {
		if _, err := os.Lstat(filepath.Join(dir, "tmp", name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the link tmp/%s was not swept (%v)", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(foreign, "f")); err != nil {
		t.Errorf("the sweep removed a name the cache does not make: %v", err)
	}
}

// TestOwnDirsNotFollowed is the regression test for issue 22 item 5 (the
// cache's directories): a symbolic link at objects/, index/, stat/ or
// locks/ made every fill and record land in the link's target. Open
// refuses a link found there, and a fill refuses one planted after Open,
// naming it; nothing is written outside the cache.
func TestOwnDirsNotFollowed(t *testing.T) {
	for _, sub := range []string{"objects", "index", "stat", "locks", "tmp"} {
		for _, when := range []string{"before Open", "after Open"} {
			t.Run(sub+" "+when, func(t *testing.T) {
				outside := t.TempDir()
				dir := t.TempDir()
				link := filepath.Join(dir, sub)
				plant := func() {
					if err := os.Symlink(outside, link); err != nil {
						t.Fatal(err)
					}
				}
				if when == "before Open" {
					plant()
				}
				c, err := cache.Open(dir, cache.Options{})
				if when == "after Open" {
					if err != nil {
						t.Fatal(err)
					}
					plant()
					_, _, err = c.Fill(context.Background(), testPkg, nil, countingFetch(t, testFiles, new(atomic.Int32)))
				}
				var ue *cache.UnsafePathError
				if !errors.As(err, &ue) || ue.Path != link || !errors.Is(err, cache.ErrUnsafePath) {
					t.Errorf("err = %v, want an *UnsafePathError naming %s", err, link)
				}
				if ents, _ := os.ReadDir(outside); len(ents) != 0 {
					t.Errorf("%d files written through the link %s", len(ents), link)
				}
			})
		}
	}
}

// A file where the cache keeps a directory is refused by name too.
func TestOwnDirIsAFile(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"index": "not a directory"})
	_, err := cache.Open(dir, cache.Options{})
	var ue *cache.UnsafePathError
	if !errors.As(err, &ue) || ue.Path != filepath.Join(dir, "index") || !strings.Contains(err.Error(), "is a regular file, not a directory") {
		t.Errorf("Open with index/ a file = %v, want an *UnsafePathError naming it", err)
	}
}

// A link planted as an entry in objects/ is not used (it would have the
// package read from outside the cache): it is removed, not what it points
// to, and the package is fetched.
func TestLinkedEntryNotUsed(t *testing.T) {
	dir := t.TempDir()
	c, err := cache.Open(dir, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int32
	e, _, err := c.Fill(context.Background(), testPkg, nil, countingFetch(t, testFiles, &n))
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	if err := os.Rename(e.Dir, filepath.Join(outside, "pkg")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "pkg"), e.Dir); err != nil {
		t.Fatal(err)
	}
	reopened, err := cache.Open(dir, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	again, hit, err := reopened.Fill(context.Background(), testPkg, e.Hashes[:1], countingFetch(t, testFiles, &n))
	if err != nil || hit || n.Load() != 2 {
		t.Fatalf("fill over a linked entry: hit=%v fetches=%d err=%v, want a fetch", hit, n.Load(), err)
	}
	if fi, err := os.Lstat(again.Dir); err != nil || !fi.IsDir() {
		t.Errorf("the entry is not a directory of the cache's own: %v %v", fi, err)
	}
	if _, err := os.Stat(filepath.Join(outside, "pkg", "README.md")); err != nil {
		t.Errorf("the link's target was touched: %v", err)
	}
}

// TestKilledStatWriteIsSwept: a stat record being written (tmp/stat-*) by
// a process that was killed is removed by the next Open; one a live
// process holds is left alone.
func TestKilledStatWriteIsSwept(t *testing.T) {
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	killed := filepath.Join(tmp, "stat-1234")
	live := filepath.Join(tmp, "stat-5678")
	writeFiles(t, tmp, map[string]string{"stat-1234": "{", "stat-5678": "{"})
	lf, err := os.Open(live)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	if ok, err := flock.LockOpenFile(lf); err != nil || !ok {
		t.Fatalf("locking the live file: %v %v", ok, err)
	}
	// Older than the moment between creating a file and locking it.
	old := time.Now().Add(-time.Minute)
	for _, p := range []string{killed, live} {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cache.Open(dir, cache.Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(killed); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the killed writer's %s survived Open (%v)", killed, err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("Open removed a live writer's %s: %v", live, err)
	}
}

// A record (index/, stat/) that is a link is not followed out of the
// cache: the index record is ignored (a miss), the stat record too (the
// entry is hashed again, and its record written anew in the cache).
func TestLinkedRecordsNotFollowed(t *testing.T) {
	dir := t.TempDir()
	c, err := cache.Open(dir, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int32
	e, _, err := c.Fill(context.Background(), testPkg, nil, countingFetch(t, testFiles, &n))
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	for _, sub := range []string{"index", "stat"} {
		recs, _ := filepath.Glob(filepath.Join(dir, sub, "*.json"))
		if len(recs) != 1 {
			t.Fatalf("%s/ holds %v", sub, recs)
		}
		moved := filepath.Join(outside, sub+".json")
		if err := os.Rename(recs[0], moved); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(moved, recs[0]); err != nil {
			t.Fatal(err)
		}
	}
	reopened, err := cache.Open(dir, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := reopened.Lookup(context.Background(), testPkg, []hash.Hash{e.H1}); ok {
		t.Error("a provider was found through an index record outside the cache")
	}
	if _, _, err := reopened.Fill(context.Background(), testPkg, []hash.Hash{e.H1}, countingFetch(t, testFiles, &n)); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"index", "stat"} {
		recs, _ := filepath.Glob(filepath.Join(dir, sub, "*.json"))
		if fi, err := os.Lstat(recs[0]); err != nil {
			t.Errorf("%s record after the fill: %v", sub, err)
		} else if !fi.Mode().IsRegular() {
			t.Errorf("%s record after the fill is %v, want a regular file of the cache's own", sub, fi.Mode())
		}
	}
}
