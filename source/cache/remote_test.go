package cache_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/cache/ocitier"
	"github.com/tflock/tflock/source/oci"
	"github.com/tflock/tflock/source/oci/ocitest"
)

var remotePkg = source.ProviderPackage{
	Addr:     tfaddr.MustParseProviderSource("registry.example.test/hashicorp/null"),
	Version:  versions.MustParse("3.2.1"),
	Platform: source.Platform{OS: "linux", Arch: "amd64"},
}

var remoteEntries = []zipEntry{{name: "terraform-provider-null_v3.2.1", body: "#!/bin/sh\necho null\n"}, {name: "LICENSE", body: "MPL\n"}}

// events collects events.
type events struct {
	mu  sync.Mutex
	all []source.Event
}

func (e *events) Event(ev source.Event) {
	e.mu.Lock()
	e.all = append(e.all, ev)
	e.mu.Unlock()
}

func (e *events) warnings() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, ev := range e.all {
		if ev.Kind == source.EventWarning {
			out = append(out, ev.Detail)
		}
	}
	return out
}

// machine is one runner of a fleet: its own local cache, the shared tier.
func machine(t *testing.T, srv *ocitest.Server, ev *events) *cache.Cache {
	t.Helper()
	o := cache.Options{Remote: remoteOf(t, srv)}
	if ev != nil {
		o.Events = ev
	}
	c, err := cache.Open(t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// remoteOf is the fleet's tier on srv.
func remoteOf(t *testing.T, srv *ocitest.Server) *ocitier.Tier {
	t.Helper()
	tier, err := ocitier.New("oci://"+srv.Host()+"/fleet", ocitier.Options{OCI: oci.Options{PlainHTTP: true, HTTPClient: srv.Client()}})
	if err != nil {
		t.Fatal(err)
	}
	return tier
}

func noFetch(t *testing.T) cache.FetchFunc {
	return func(context.Context, string) (*source.Fetched, error) {
		t.Error("the origin was asked")
		return nil, errors.New("no origin")
	}
}

// A provider fetched from its origin by one machine is written through;
// another machine, with a cache of its own and the lock's hashes, is
// served by the tier without asking the origin, and stores the same tree.
func TestRemoteProviderWriteThroughThenRead(t *testing.T) {
	srv := ocitest.New(t, ocitest.ServerOptions{})
	ctx := context.Background()
	a := machine(t, srv, nil)
	ea, _, err := a.Fill(ctx, remotePkg, nil, archiveFetch(t, remoteEntries, nil, source.Limits{}))
	if err != nil {
		t.Fatal(err)
	}
	ev := &events{}
	b := machine(t, srv, ev)
	eb, hit, err := b.Fill(ctx, remotePkg, ea.Hashes, noFetch(t))
	if err != nil {
		t.Fatal(err)
	}
	if hit || eb.H1 != ea.H1 || strings.Join(hashStrings(eb.Hashes), " ") != strings.Join(hashStrings(ea.Hashes), " ") {
		t.Fatalf("machine b: hit %v, %v; want a fill with %v", hit, eb.Hashes, ea.Hashes)
	}
	if got, want := treeOf(t, eb.Dir), treeOf(t, ea.Dir); len(got) != len(want) || got["LICENSE"] != want["LICENSE"] {
		t.Fatalf("trees differ: %v vs %v", got, want)
	}
	if !strings.HasPrefix(eb.Location, "oci://"+srv.Host()+"/fleet/registry.example.test/hashicorp/null@sha256:") {
		t.Errorf("location %q", eb.Location)
	}
	if w := ev.warnings(); len(w) != 0 {
		t.Errorf("warnings: %v", w)
	}
	// Only by the lock's zh: alone too (a lock of another platform's h1:s).
	c := machine(t, srv, nil)
	if _, _, err := c.Fill(ctx, remotePkg, []hash.Hash{zhIn(ea.Hashes)}, noFetch(t)); err != nil {
		t.Fatal(err)
	}
}

// A first install (nothing to verify the tier's copy by) goes to the origin.
func TestRemoteNotAskedWithoutHashes(t *testing.T) {
	srv := ocitest.New(t, ocitest.ServerOptions{})
	ctx := context.Background()
	if _, _, err := machine(t, srv, nil).Fill(ctx, remotePkg, nil, archiveFetch(t, remoteEntries, nil, source.Limits{})); err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	b := machine(t, srv, nil)
	if _, _, err := b.Fill(ctx, remotePkg, nil, func(ctx context.Context, dir string) (*source.Fetched, error) {
		calls.Add(1)
		return archiveFetch(t, remoteEntries, nil, source.Limits{})(ctx, dir)
	}); err != nil || calls.Load() != 1 {
		t.Fatalf("first install: %v, origin asked %d times", err, calls.Load())
	}
}

// A module fetched as files is written through as a zip of its entry and
// found by its h1: from any address.
func TestRemoteModuleWriteThroughThenRead(t *testing.T) {
	srv := ocitest.New(t, ocitest.ServerOptions{})
	ctx := context.Background()
	files := map[string]string{"main.tf": "variable \"x\" {}\n", "modules/y/main.tf": "# y\n"}
	mod := source.ModulePackage{Source: "git::https://git.example.test/net.git", Ref: "v1.0.0", Pin: "0123456789abcdef0123456789abcdef01234567"}
	var calls atomic.Int32
	ea, _, err := machine(t, srv, nil).Fill(ctx, mod, nil, func(ctx context.Context, dir string) (*source.Fetched, error) {
		f, err := countingFetch(t, files, &calls)(ctx, dir)
		if f != nil {
			f.Subdir, f.Pin = "modules/y", mod.Pin
		}
		return f, err
	})
	if err != nil {
		t.Fatal(err)
	}
	bound := mod
	bound.Subdir = "modules/y" // the lock of machine b records the subdirectory
	eb, _, err := machine(t, srv, nil).Fill(ctx, bound, []hash.Hash{ea.H1}, noFetch(t))
	if err != nil {
		t.Fatal(err)
	}
	if eb.H1 != referenceH1(t, files) || eb.Subdir != "modules/y" || eb.Pin != mod.Pin {
		t.Fatalf("machine b: %s subdir %q pin %q", eb.H1, eb.Subdir, eb.Pin)
	}
}

// What the tier returns is verified like an origin download: a copy that
// does not match the lock is refused with a warning and the origin serves.
func TestRemoteMismatchFallsBackToOrigin(t *testing.T) {
	srv := ocitest.New(t, ocitest.ServerOptions{})
	ctx := context.Background()
	// The tier holds another zip under the package's name.
	poisoned := []zipEntry{{name: "terraform-provider-null_v3.2.1", body: "#!/bin/sh\necho evil\n"}}
	if _, _, err := machine(t, srv, nil).Fill(ctx, remotePkg, nil, archiveFetch(t, poisoned, nil, source.Limits{})); err != nil {
		t.Fatal(err)
	}
	goodZH, goodH1 := writeZip(t, filepath.Join(t.TempDir(), "good.zip"), remoteEntries)
	ev := &events{}
	var calls atomic.Int32
	e, _, err := machine(t, srv, ev).Fill(ctx, remotePkg, []hash.Hash{goodZH}, func(ctx context.Context, dir string) (*source.Fetched, error) {
		calls.Add(1)
		return archiveFetch(t, remoteEntries, nil, source.Limits{})(ctx, dir)
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 1 || e.H1 != goodH1 {
		t.Fatalf("origin asked %d times, entry %s; want the origin's %s", calls.Load(), e.H1, goodH1)
	}
	if w := ev.warnings(); len(w) != 1 || !strings.Contains(w[0], "refused") || !strings.Contains(w[0], "checksum mismatch") {
		t.Fatalf("warnings %q", w)
	}
}

// A tier that goes away mid-run costs one warning; every fill succeeds
// from the origins.
func TestRemoteStoppedMidRun(t *testing.T) {
	srv := ocitest.New(t, ocitest.ServerOptions{})
	ctx := context.Background()
	ev := &events{}
	c := machine(t, srv, ev)
	if _, _, err := c.Fill(ctx, remotePkg, nil, archiveFetch(t, remoteEntries, nil, source.Limits{})); err != nil {
		t.Fatal(err)
	}
	srv.Close()
	for _, v := range []string{"3.2.2", "3.2.3", "3.2.4"} {
		pkg := remotePkg
		pkg.Version = versions.MustParse(v)
		zh, _ := writeZip(t, filepath.Join(t.TempDir(), "ref.zip"), remoteEntries)
		if _, _, err := c.Fill(ctx, pkg, []hash.Hash{zh}, archiveFetch(t, remoteEntries, nil, source.Limits{})); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
	}
	if w := ev.warnings(); len(w) != 1 || !strings.Contains(w[0], "remote cache tier") {
		t.Fatalf("warnings %q, want one about the remote tier", w)
	}
}

func hashStrings(hs []hash.Hash) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.String())
	}
	return out
}

func zhIn(hs []hash.Hash) hash.Hash {
	for _, h := range hs {
		if h.Scheme() == hash.SchemeZH {
			return h
		}
	}
	return ""
}

// A provider archive handed over in memory (source.Fetched.ArchiveData) is
// written through as one handed over as a file, from a fill and from a
// hash-only Cache.Hash: another machine is served by the tier. The
// memory is released.
func TestRemoteWriteThroughFromMemory(t *testing.T) {
	for _, method := range []string{"Fill", "Hash"} {
		t.Run(method, func(t *testing.T) {
			srv := ocitest.New(t, ocitest.ServerOptions{})
			ctx := context.Background()
			a := machine(t, srv, nil)
			released := 0
			fromFile := archiveFetch(t, remoteEntries, nil, source.Limits{})
			inMemory := func(ctx context.Context, dir string) (*source.Fetched, error) {
				if !source.ArchiveInMemory(ctx) {
					t.Error("the cache did not allow an archive in memory")
				}
				f, err := fromFile(ctx, filepath.Join(t.TempDir(), "elsewhere"))
				if err != nil {
					return nil, err
				}
				data, err := os.ReadFile(f.Archive)
				if err != nil {
					return nil, err
				}
				f.Archive, f.ArchiveData, f.Release = "", data, func() { released++ }
				return f, nil
			}
			bring := a.Fill
			if method == "Hash" {
				bring = a.Hash
			}
			ea, _, err := bring(ctx, remotePkg, nil, inMemory)
			if err != nil {
				t.Fatal(err)
			}
			if released != 1 {
				t.Errorf("released %d times, want once", released)
			}
			if ents, _ := os.ReadDir(filepath.Join(a.Dir(), "tmp")); len(ents) != 0 {
				t.Errorf("tmp holds %d items after it", len(ents))
			}
			b := machine(t, srv, nil)
			eb, hit, err := b.Fill(ctx, remotePkg, ea.Hashes, noFetch(t))
			if err != nil {
				t.Fatal(err)
			}
			if hit || eb.H1 != ea.H1 {
				t.Fatalf("machine b: hit %v, %s; want a fill of %s from the tier", hit, eb.H1, ea.H1)
			}
		})
	}
}
