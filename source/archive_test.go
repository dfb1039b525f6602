package source_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/sourcetest"
)

// notForwarding is a decorator that does not know the ArchiveFetcher
// capability: embedding the interface gives it Versions and Fetch only.
type notForwarding struct{ source.Source }

// The routing sources forward FetchArchive to the source they pick, which
// hands its archive over; a decorator that does not forward it, and a
// source that is not an ArchiveFetcher, are asked with Fetch and give
// files. Through a cache, each gives the tree a plain Fetch extracts.
func TestFetchArchiveForwarding(t *testing.T) {
	ctx := context.Background()
	local, remote := localRemote()
	remote.Archives = true
	onlyRemote := pkg(randAddr, "3.6.0", linuxAMD64)
	fromLocal := pkg(nullAddr, "3.2.0", linuxAMD64)
	for _, tc := range []struct {
		name    string
		src     source.Source
		pkg     source.Package
		archive bool // the package is handed over as its archive
	}{
		{"archives", remote, onlyRemote, true},
		{"multi", source.Multi(local, remote), onlyRemote, true},
		{"multi first source extracts", source.Multi(local, remote), fromLocal, false},
		{"selector", source.Selector{Source: remote}, onlyRemote, true},
		{"multi of selectors", source.Multi(source.Selector{Source: local}, source.Selector{Source: remote}), onlyRemote, true},
		{"memoize", source.Memoize(remote), onlyRemote, true},
		{"memoize of not forwarding", source.Memoize(notForwarding{remote}), onlyRemote, false},
		{"not forwarding", notForwarding{remote}, onlyRemote, false},
		{"multi of not forwarding", source.Multi(notForwarding{remote}), onlyRemote, false},
		{"not an archive fetcher", local, fromLocal, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := source.FetchArchive(ctx, tc.src, tc.pkg, filepath.Join(t.TempDir(), "p"))
			if err != nil {
				t.Fatal(err)
			}
			if got := f.Archive != ""; got != tc.archive || (f.Dir != "") == got {
				t.Fatalf("FetchArchive: Archive %q, Dir %q; want an archive: %v", f.Archive, f.Dir, tc.archive)
			}
			plain, err := tc.src.Fetch(ctx, tc.pkg, filepath.Join(t.TempDir(), "plain"))
			if err != nil {
				t.Fatal(err)
			}
			if plain.Archive != "" || plain.Dir == "" {
				t.Fatalf("Fetch handed over an archive (%q) or no files (%q)", plain.Archive, plain.Dir)
			}
			c, err := cache.Open(t.TempDir(), cache.Options{})
			if err != nil {
				t.Fatal(err)
			}
			e, _, err := c.Fill(ctx, tc.pkg, nil, func(ctx context.Context, dir string) (*source.Fetched, error) {
				return source.FetchArchive(ctx, tc.src, tc.pkg, dir)
			})
			if err != nil {
				t.Fatal(err)
			}
			if e.H1 != plain.Hashes[0] {
				t.Errorf("the cache stored %s, a plain Fetch gives %s", e.H1, plain.Hashes[0])
			}
			want := "local:"
			if tc.pkg == onlyRemote {
				want = "remote:"
			}
			if !strings.HasPrefix(f.Location, want) {
				t.Errorf("fetched from %q, want %s", f.Location, want)
			}
		})
	}
}

// A Static handing over archives passes the conformance suite, its
// FetchArchive checks among them.
func TestStaticArchivesConformance(t *testing.T) {
	_, remote := localRemote()
	remote.Archives = true
	sourcetest.Run(t, remote, remoteCases(pkg(nullAddr, "3.2.0", darwinARM)))
}
