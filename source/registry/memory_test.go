package registry_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/registry/registrytest"
)

var smallFixtures = registrytest.Fixtures{Providers: []registrytest.Provider{{
	Addr:     "acme/big",
	Versions: []registrytest.ProviderVersion{{Version: "1.0.0", Platforms: []string{"linux_amd64"}}},
}}}

// Under source.WithArchiveInMemory a small package is handed over in
// memory, with no file or directory made for it; without, as a file. The
// cache hashes and stores either to the same h1: and zh:.
func TestSmallArchiveInMemory(t *testing.T) {
	_, src, pkg, info, _ := streamWorldOf(t, smallFixtures, registrytest.Options{})
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "pkg")
	f, err := src.FetchArchive(source.WithArchiveInMemory(ctx), pkg, dir)
	if err != nil {
		t.Fatal(err)
	}
	if f.ArchiveData == nil || f.Archive != "" || f.Release == nil {
		t.Fatalf("Fetched: ArchiveData %d bytes, Archive %q, Release set %v; want the archive in memory", len(f.ArchiveData), f.Archive, f.Release != nil)
	}
	if int64(len(f.ArchiveData)) != f.Size {
		t.Errorf("ArchiveData is %d bytes, Size %d", len(f.ArchiveData), f.Size)
	}
	f.Release()
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Errorf("%s made for an archive in memory: %v", dir, err)
	}
	f, err = src.FetchArchive(ctx, pkg, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if f.ArchiveData != nil || f.Archive == "" {
		t.Fatalf("without WithArchiveInMemory: ArchiveData %d bytes, Archive %q; want a file", len(f.ArchiveData), f.Archive)
	}
	for _, method := range []string{"Hash", "Fill"} {
		c, err := cache.Open(t.TempDir(), cache.Options{})
		if err != nil {
			t.Fatal(err)
		}
		bring := c.Fill
		if method == "Hash" {
			bring = c.Hash
		}
		e, _, err := bring(ctx, pkg, nil, fillFrom(src, pkg))
		if err != nil {
			t.Fatal(err)
		}
		if e.H1 != info.H1 || len(e.Hashes) != 2 || e.Hashes[1] != info.ZH && e.Hashes[0] != info.ZH {
			t.Errorf("%s: %s %v; want %s and %s", method, e.H1, e.Hashes, info.H1, info.ZH)
		}
		if ents, _ := os.ReadDir(filepath.Join(c.Dir(), "tmp")); len(ents) != 0 {
			t.Errorf("%s: tmp holds %d items after it", method, len(ents))
		}
	}
}

// A lying or failing server gives the same errors for a small package
// handed over in memory as for one in a file (a tampered package a
// checksum mismatch; a truncated body, retried, an error), through Hash
// and Fill, and leaves nothing in the cache; once honest, the cache fills.
func TestSmallArchiveInMemoryFaults(t *testing.T) {
	for _, tc := range []struct {
		fault    registrytest.Fault
		mismatch bool
	}{
		{registrytest.TamperedPackage, true},
		{registrytest.TruncatedBody, false},
		{registrytest.BadSignature, true},
	} {
		for _, method := range []string{"Hash", "Fill"} {
			t.Run(fmt.Sprint(tc.fault, method), func(t *testing.T) {
				srv, src, pkg, info, _ := streamWorldOf(t, smallFixtures, registrytest.Options{Fault: tc.fault})
				c, err := cache.Open(t.TempDir(), cache.Options{})
				if err != nil {
					t.Fatal(err)
				}
				bring := c.Fill
				if method == "Hash" {
					bring = c.Hash
				}
				_, _, err = bring(context.Background(), pkg, nil, fillFrom(src, pkg))
				if err == nil {
					t.Fatal("succeeded")
				}
				if got := errors.Is(err, source.ErrChecksumMismatch); got != tc.mismatch {
					t.Errorf("errors.Is(%v, ErrChecksumMismatch) = %v, want %v", err, got, tc.mismatch)
				}
				emptyCache(t, c)
				srv.SetFault(registrytest.NoFault)
				if e, _, err := bring(context.Background(), pkg, nil, fillFrom(src, pkg)); err != nil || e.H1 != info.H1 {
					t.Errorf("once honest: %s, %v; want %s", e.H1, err, info.H1)
				}
			})
		}
	}
}
