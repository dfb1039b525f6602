package cache_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
)

// memoryFetch hands entries' zip over in memory, stating stated (its own
// zh: unless stated is given), and counts its fetches and releases.
func memoryFetch(t *testing.T, entries []zipEntry, stated []hash.Hash, fetches, released *int) cache.FetchFunc {
	return func(ctx context.Context, dir string) (*source.Fetched, error) {
		*fetches++
		p := filepath.Join(t.TempDir(), "package.zip")
		zh, _ := writeZip(t, p, entries)
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		if stated == nil {
			stated = []hash.Hash{zh}
		}
		return &source.Fetched{Location: "test", ArchiveData: data, Release: func() { *released++ }, Hashes: stated}, nil
	}
}

var attackEntries = []zipEntry{{name: "terraform-provider-null", body: "#!/bin/sh\necho null\n"}}

// Attack: a source hands over in memory a well-formed zip that is not
// the one whose zh: it states (a hostile registry's other bytes): Hash and
// Fill report a checksum mismatch, release the memory once, and leave
// nothing in the cache.
func TestAttackInMemoryOtherBytesThanStated(t *testing.T) {
	for _, method := range []string{"Hash", "Fill"} {
		t.Run(method, func(t *testing.T) {
			c, err := cache.Open(t.TempDir(), cache.Options{})
			if err != nil {
				t.Fatal(err)
			}
			bring := c.Fill
			if method == "Hash" {
				bring = c.Hash
			}
			fetches, released := 0, 0
			other := hash.Hash("zh:" + strings.Repeat("0", 64))
			_, _, err = bring(context.Background(), testPkg, nil, memoryFetch(t, attackEntries, []hash.Hash{other}, &fetches, &released))
			if !errors.Is(err, source.ErrChecksumMismatch) {
				t.Fatalf("%s = %v, want a checksum mismatch", method, err)
			}
			if released != 1 {
				t.Errorf("released %d times, want once", released)
			}
			for _, sub := range []string{"objects", "index", "tmp"} {
				if ents, _ := os.ReadDir(filepath.Join(c.Dir(), sub)); len(ents) != 0 {
					t.Errorf("%s/ holds %d items after the mismatch", sub, len(ents))
				}
			}
			if e, ok, _ := c.Lookup(context.Background(), testPkg, nil); ok {
				t.Errorf("Lookup after the mismatch: %+v", e)
			}
		})
	}
}

// Attack: what a Hash remembers in the process never stands in for a
// package: a Fill after it fetches and stores the files, and a Hash asked
// for another h1: (a lock that says otherwise) fetches again and reports
// the mismatch rather than a hit.
func TestAttackHashMemoryIsNoEntry(t *testing.T) {
	c, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	fetches, released := 0, 0
	fetch := memoryFetch(t, attackEntries, nil, &fetches, &released)
	h, _, err := c.Hash(ctx, testPkg, nil, fetch)
	if err != nil {
		t.Fatal(err)
	}
	other := hash.Hash("h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
	if _, hit, err := c.Hash(ctx, testPkg, []hash.Hash{other}, fetch); err == nil || hit {
		t.Fatalf("Hash for another h1: hit %v, %v; want a mismatch", hit, err)
	}
	if fetches != 2 {
		t.Fatalf("%d fetches, want the second Hash to fetch", fetches)
	}
	e, hit, err := c.Fill(ctx, testPkg, []hash.Hash{h.H1}, fetch)
	if err != nil || hit {
		t.Fatalf("Fill after Hash: hit %v, %v; want a fill", hit, err)
	}
	if e.Dir == "" {
		t.Fatal("Fill after Hash gave no directory")
	}
	if b, err := os.ReadFile(filepath.Join(e.Dir, "terraform-provider-null")); err != nil || string(b) != attackEntries[0].body {
		t.Fatalf("Fill after Hash: the entry's file: %q, %v", b, err)
	}
	if released != fetches {
		t.Errorf("%d releases for %d fetches", released, fetches)
	}
}
