package cache_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
)

// Hash takes no lock file (this process's lock only): a providers lock
// hashes most packages without storing them, and each new file costs.
// Two caches on one directory (two processes) hashing the same package at
// once both succeed, with the same hashes, and leave nothing in locks/,
// tmp/ or index/: Hash writes no record (the index is no authority, and a
// record would only confirm an h1: its reader has), so a third process
// fetches the package again, as "providers lock" always does.
func TestHashTakesNoLockFile(t *testing.T) {
	entries := []zipEntry{{name: "terraform-provider-null", body: "#!/bin/sh\necho null\n"}}
	dir := t.TempDir()
	open := func() *cache.Cache {
		c, err := cache.Open(dir, cache.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	got := make([]cache.Entry, 2)
	errs := make([]error, 2)
	release := make(chan struct{})
	for i, c := range []*cache.Cache{open(), open()} {
		fetch := archiveFetch(t, entries, nil, source.Limits{})
		wg.Go(func() {
			got[i], _, errs[i] = c.Hash(ctx, testPkg, nil, func(ctx context.Context, dir string) (*source.Fetched, error) {
				<-release // both are fetching: neither waited for the other
				return fetch(ctx, dir)
			})
		})
	}
	close(release)
	wg.Wait()
	for i := range got {
		if errs[i] != nil {
			t.Fatalf("Hash %d: %v", i, errs[i])
		}
		if got[i].H1 != got[0].H1 || len(got[i].Hashes) != 2 {
			t.Errorf("Hash %d = %s %v; want %s and its zh:", i, got[i].H1, got[i].Hashes, got[0].H1)
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "locks")); len(ents) != 0 {
		t.Errorf("locks/ holds %d files after Hash, want none", len(ents))
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(ents) != 0 {
		t.Errorf("tmp/ holds %d items after Hash, want none", len(ents))
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "index")); len(ents) != 0 {
		t.Errorf("index/ holds %d records after Hash, want none", len(ents))
	}
	fetched := false
	third, hit, err := open().Hash(ctx, testPkg, []hash.Hash{got[0].H1}, func(ctx context.Context, dir string) (*source.Fetched, error) {
		fetched = true
		return archiveFetch(t, entries, nil, source.Limits{})(ctx, dir)
	})
	if err != nil || hit || !fetched || third.H1 != got[0].H1 {
		t.Errorf("a third Hash: %s, hit %v, fetched %v, %v; want the package fetched again and the same h1:", third.H1, hit, fetched, err)
	}
}

// What a Hash leaves in tmp/ ("hash-..."), which no lock file protects,
// is swept by a later Open once it has not changed for an hour, and left
// alone while it is recent (a live Hash's).
func TestHashTempsSweptWhenOld(t *testing.T) {
	dir := t.TempDir()
	if _, err := cache.Open(dir, cache.Options{}); err != nil {
		t.Fatal(err)
	}
	key := strings.Repeat("ab", 32)
	young := filepath.Join(dir, "tmp", "hash-"+key+"-young")
	old := filepath.Join(dir, "tmp", "hash-"+key+"-old")
	oldDir := filepath.Join(dir, "tmp", "hash-"+key+"-olddir")
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{young, old} {
		if err := os.WriteFile(p, []byte("zip"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(oldDir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	then := time.Now().Add(-2 * time.Hour)
	for _, p := range []string{old, oldDir} {
		if err := os.Chtimes(p, then, then); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cache.Open(dir, cache.Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(young); err != nil {
		t.Errorf("a recent hash temp was swept: %v", err)
	}
	for _, p := range []string{old, oldDir} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s, unchanged for two hours, was not swept (%v)", filepath.Base(p), err)
		}
	}
}
