package install_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
)

// TestAttackZhOnlyLockForgedRecord: a lock file whose provider entry has
// only zh: hashes (no h1: the cache could find an entry by), and a cache
// whose index record of 1.1.0 is edited to point at 1.0.0's intact entry,
// listing 1.1.0's zh: hashes. The record is no authority: 1.1.0's
// executable is installed, from its origin.
func TestAttackZhOnlyLockForgedRecord(t *testing.T) {
	w := startWorldWith(t, installtest.Options{NoGit: true})
	locked := t.TempDir()
	writeFiles(t, locked, map[string]string{"main.tf": authorityConfig("1.1.0")})
	genuine := initAndWrite(t, install.Options{Dir: locked, Source: w.Source, Cache: openCache(t)})
	exe110, err := os.ReadFile(filepath.Join(genuine.Providers[0].Dir, "terraform-provider-cloud_v1.1.0"))
	if err != nil {
		t.Fatal(err)
	}
	var zh []hash.Hash
	lock := readLock(t, locked)
	var kept []string
	for _, line := range strings.Split(lock, "\n") {
		if strings.Contains(line, `"h1:`) && !strings.Contains(lock[:strings.Index(lock, line)], "module \"vpc\"") {
			continue // the provider's h1: hashes
		}
		if i := strings.Index(line, `"zh:`); i >= 0 {
			zh = append(zh, hash.Hash(strings.Trim(strings.TrimSpace(line), `",`)))
		}
		kept = append(kept, line)
	}
	if len(zh) == 0 {
		t.Fatalf("no zh: in\n%s", lock)
	}
	zhOnly := strings.Join(kept, "\n")

	cacheDir := t.TempDir()
	old := t.TempDir()
	writeFiles(t, old, map[string]string{"main.tf": authorityConfig("1.0.0")})
	initAndWrite(t, install.Options{Dir: old, Source: w.Source, Cache: openCacheIn(cacheDir)})
	forgeRecord(t, cacheDir, "acme/cloud", "1.0.0", "1.1.0", zh)

	for _, reverify := range []bool{false, true} {
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{"main.tf": authorityConfig("1.1.0"), install.LockFileName: zhOnly})
		res, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: openCacheIn(cacheDir), Reverify: reverify})
		if err != nil {
			t.Fatal(err)
		}
		exe, err := os.ReadFile(filepath.Join(res.Providers[0].Dir, "terraform-provider-cloud_v1.1.0"))
		if err != nil || string(exe) != string(exe110) {
			t.Errorf("reverify=%v: the provider installed as 1.1.0 is not 1.1.0's executable", reverify)
		}
	}
}

// authorityLocks returns the lock files of authorityConfig 1.0.0 and
// 1.1.0, by version.
func authorityLocks(t *testing.T, w *installtest.World) map[string]string {
	t.Helper()
	lockOf := map[string]string{}
	for _, v := range []string{"1.0.0", "1.1.0"} {
		d := t.TempDir()
		writeFiles(t, d, map[string]string{"main.tf": authorityConfig(v)})
		initAndWrite(t, install.Options{Dir: d, Source: w.Source, Cache: openCache(t)})
		lockOf[v] = readLock(t, d)
	}
	return lockOf
}

// TestAttackConcurrentRunsDifferentLocks: two runs at once on one cache
// directory (two processes: two Cache values; and one Cache shared), one
// with the lock file of 1.0.0 and one with that of 1.1.0, each from an
// empty install directory. Each installs what its own lock names, and
// neither lock file changes.
func TestAttackConcurrentRunsDifferentLocks(t *testing.T) {
	w := startWorldWith(t, installtest.Options{NoGit: true})
	lockOf := authorityLocks(t, w)
	for _, shared := range []bool{false, true} {
		cacheDir := t.TempDir()
		one := openCacheIn(cacheDir)
		for round := range 3 {
			var wg sync.WaitGroup
			for _, v := range []string{"1.0.0", "1.1.0", "1.0.0", "1.1.0"} {
				dir := t.TempDir()
				writeFiles(t, dir, map[string]string{"main.tf": authorityConfig(v), install.LockFileName: lockOf[v]})
				c := one
				if !shared {
					c = openCacheIn(cacheDir)
				}
				wg.Go(func() {
					res, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: c, ReadOnly: true})
					if err != nil {
						t.Errorf("shared=%v round %d %s: %v", shared, round, v, err)
						return
					}
					if _, err := os.Stat(filepath.Join(res.Providers[0].Dir, "terraform-provider-cloud_v"+v)); err != nil {
						t.Errorf("shared=%v round %d: the provider installed for %s: %v", shared, round, v, err)
					}
					if b, _ := os.ReadFile(filepath.Join(dir, ".terraform", "modules", "vpc", "README.md")); string(b) != "vpc "+v+"\n" {
						t.Errorf("shared=%v round %d: the module installed for %s has README %q", shared, round, v, b)
					}
				})
			}
			wg.Wait()
		}
	}
}

// TestAttackCacheEntryGainsVCSMetadata: a writer of the cache directory
// adds version-control metadata to a module's entry (left out of its h1:,
// so the entry still verifies). Module packages are installed without
// any: the install from that entry holds none, with Reverify or without.
func TestAttackCacheEntryGainsVCSMetadata(t *testing.T) {
	w := startWorldWith(t, installtest.Options{NoGit: true})
	cacheDir := t.TempDir()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": authorityConfig("1.1.0")})
	initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: openCacheIn(cacheDir)})
	entries, _ := filepath.Glob(filepath.Join(cacheDir, "objects", "h1-*", "README.md"))
	if len(entries) != 1 {
		t.Fatalf("module entries %v", entries)
	}
	entry := filepath.Dir(entries[0])
	writeFiles(t, entry, map[string]string{".git/config": "[core]\n\tfsmonitor = evil\n", "sub/.svn/x.tf": "evil\n"})
	for _, reverify := range []bool{false, true} {
		freshMachine(t, dir)
		if _, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: openCacheIn(cacheDir), ReadOnly: true, Reverify: reverify}); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{".git", "sub/.svn", "sub"} {
			if _, err := os.Lstat(filepath.Join(dir, ".terraform", "modules", "vpc", p)); err == nil {
				t.Errorf("reverify=%v: the install holds %s, which the cache's writer added", reverify, p)
			}
		}
	}
}
