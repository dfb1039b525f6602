package registry_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/internal/httpx"
	"github.com/tflock/tflock/source/registry"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// bigFixtures is one provider whose package is large enough (with
// registry.SetStreamMin) to be handed over while it downloads.
var bigFixtures = registrytest.Fixtures{Providers: []registrytest.Provider{{
	Addr:     "acme/big",
	Versions: []registrytest.ProviderVersion{{Version: "1.0.0", Platforms: []string{"linux_amd64"}, Size: 2 << 20, Binary: true}},
}}}

// streamWorld is a registry serving bigFixtures, a Source on it that hands
// packages of 64 KiB and more over while they download, and the package.
func streamWorld(t *testing.T, o registrytest.Options) (*registrytest.Server, *registry.Source, source.ProviderPackage, registrytest.PackageInfo, string) {
	t.Helper()
	return streamWorldOf(t, bigFixtures, o)
}

// streamWorldOf is streamWorld serving fx, whose one provider is
// registry.example.test/acme/big 1.0.0 for linux_amd64.
func streamWorldOf(t *testing.T, fx registrytest.Fixtures, o registrytest.Options) (*registrytest.Server, *registry.Source, source.ProviderPackage, registrytest.PackageInfo, string) {
	t.Helper()
	setStreamMin(t, 64<<10)
	srv := registrytest.New(t, fx, o)
	src, _ := newSource(srv, nil)
	pkg := providerPkg(t, "registry.example.test/acme/big", "1.0.0", "linux_amd64")
	info, ok := srv.ProviderPackage("registry.example.test/acme/big", "1.0.0", "linux_amd64")
	if !ok {
		t.Fatal("no package")
	}
	return srv, src, pkg, info, "/files/providers/registry.example.test/acme/big/1.0.0/" + info.Filename
}

// setStreamMin lowers the size from which packages are handed over while
// they download, until the test ends.
func setStreamMin(t *testing.T, n int64) {
	old := httpx.StreamMin
	httpx.StreamMin = n
	t.Cleanup(func() { httpx.StreamMin = old })
}

func fillFrom(src *registry.Source, pkg source.Package) cache.FetchFunc {
	return func(ctx context.Context, dir string) (*source.Fetched, error) { return src.FetchArchive(ctx, pkg, dir) }
}

// emptyCache fails unless the cache stores no object and its temporary
// directory holds nothing: a failed fill leaves no debris.
func emptyCache(t *testing.T, c *cache.Cache) {
	t.Helper()
	for _, sub := range []string{"objects", "tmp"} {
		if ents, _ := os.ReadDir(filepath.Join(c.Dir(), sub)); len(ents) != 0 {
			t.Errorf("%s holds %d items after a failed fill", sub, len(ents))
		}
	}
}

// A large package is handed over while it downloads: the cache reads it as
// it arrives (the registry sees the whole download and a ranged request for
// its end), stores the tree dirhash gives the package's h1:, and a warm fill
// asks nothing.
func TestStreamedPackage(t *testing.T) {
	srv, src, pkg, info, file := streamWorld(t, registrytest.Options{})
	f, err := src.FetchArchive(context.Background(), pkg, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if f.Pending == nil || f.Pending.Size() != info.Size {
		t.Fatalf("Fetch handed over Pending %v (size %d); want the archive while it downloads, %d bytes", f.Pending, f.Pending.Size(), info.Size)
	}
	if err := f.Pending.Wait(); err != nil {
		t.Fatal(err)
	}
	if got, err := hash.ZH(f.Archive); err != nil || got != info.ZH {
		t.Errorf("the archive after Wait has zh %s, %v; want %s", got, err, info.ZH)
	}

	c, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	before := srv.RequestsTo(file)
	e, hit, err := c.Fill(context.Background(), pkg, nil, fillFrom(src, pkg))
	if err != nil || hit {
		t.Fatalf("Fill = hit %v, %v", hit, err)
	}
	if e.H1 != info.H1 {
		t.Errorf("entry h1 %s, want the package's %s", e.H1, info.H1)
	}
	if got, err := hash.H1Dir(e.Dir); err != nil || got != info.H1 {
		t.Errorf("the stored tree hashes to %s, %v; want %s", got, err, info.H1)
	}
	if n := srv.RequestsTo(file) - before; n != 2 {
		t.Errorf("%d requests for the package, want 2 (the download and its end)", n)
	}
	before = srv.Requests()
	if _, hit, err := c.Fill(context.Background(), pkg, []hash.Hash{info.ZH}, fillFrom(src, pkg)); err != nil || !hit {
		t.Errorf("warm Fill = hit %v, %v", hit, err)
	}
	if n := srv.Requests() - before; n != 0 {
		t.Errorf("warm Fill sent %d requests", n)
	}

	// Hash-only (providers lock for another platform): the same hashes,
	// nothing stored.
	c2, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, _, err := c2.Hash(context.Background(), pkg, nil, fillFrom(src, pkg))
	if err != nil || h.H1 != info.H1 || h.Dir != "" {
		t.Errorf("Hash = %+v, %v; want h1 %s and no files", h, err, info.H1)
	}
	emptyCache(t, c2)
}

// Over HTTP/1.1 the ranged request for the end takes a connection of its
// own beside the download's: the package streams all the same.
func TestStreamedPackageHTTP1(t *testing.T) {
	srv, src, pkg, info, file := streamWorld(t, registrytest.Options{HTTP1: true})
	c, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var pending bool
	e, _, err := c.Fill(context.Background(), pkg, nil, func(ctx context.Context, dir string) (*source.Fetched, error) {
		f, err := source.FetchArchive(ctx, src, pkg, dir)
		pending = f != nil && f.Pending != nil
		return f, err
	})
	if err != nil || e.H1 != info.H1 || !pending {
		t.Fatalf("Fill = %s, %v (handed over while downloading: %v); want %s, streamed", e.H1, err, pending, info.H1)
	}
	if n := srv.RequestsTo(file); n != 2 {
		t.Errorf("%d requests for the package, want 2", n)
	}
}

// A server without ranges: the package is read once downloaded.
func TestStreamNoRanges(t *testing.T) {
	_, src, pkg, info, _ := streamWorld(t, registrytest.Options{NoRanges: true})
	f, err := src.FetchArchive(context.Background(), pkg, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if f.Pending != nil {
		t.Fatal("handed over while downloading from a server that ignores ranges")
	}
	c, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if e, _, err := c.Fill(context.Background(), pkg, nil, fillFrom(src, pkg)); err != nil || e.H1 != info.H1 {
		t.Errorf("Fill = %s, %v; want %s", e.H1, err, info.H1)
	}
}

// A lying or failing server while the package streams: the fill fails as
// it does for a package read after its download, stores nothing and leaves
// nothing; once the server is honest again, the same cache fills.
func TestStreamFaults(t *testing.T) {
	for _, tc := range []struct {
		fault    registrytest.Fault
		mismatch bool
	}{
		{registrytest.TamperedPackage, true},
		{registrytest.RangeMismatch, true},
		{registrytest.TruncatedBody, false},
		{registrytest.BadSignature, true},
	} {
		t.Run(fmt.Sprint(tc.fault), func(t *testing.T) {
			srv, src, pkg, info, _ := streamWorld(t, registrytest.Options{Fault: tc.fault})
			c, err := cache.Open(t.TempDir(), cache.Options{})
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = c.Fill(context.Background(), pkg, nil, fillFrom(src, pkg))
			if err == nil {
				t.Fatal("Fill succeeded")
			}
			if got := errors.Is(err, source.ErrChecksumMismatch); got != tc.mismatch {
				t.Errorf("errors.Is(%v, ErrChecksumMismatch) = %v, want %v", err, got, tc.mismatch)
			}
			emptyCache(t, c)
			srv.SetFault(registrytest.NoFault)
			if e, _, err := c.Fill(context.Background(), pkg, nil, fillFrom(src, pkg)); err != nil || e.H1 != info.H1 {
				t.Errorf("Fill after the fault = %s, %v; want %s", e.H1, err, info.H1)
			}
		})
	}
}

// A download cut short and retried starts again from its first byte: what
// the cache read of the first attempt is not used, and the package is read
// again, whole, from the completed file.
func TestStreamRestarted(t *testing.T) {
	srv, src, pkg, info, file := streamWorld(t, registrytest.Options{Fault: registrytest.TruncatedFirst})
	c, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e, _, err := c.Fill(context.Background(), pkg, nil, fillFrom(src, pkg))
	if err != nil || e.H1 != info.H1 {
		t.Fatalf("Fill = %s, %v; want %s", e.H1, err, info.H1)
	}
	if got, err := hash.H1Dir(e.Dir); err != nil || got != info.H1 {
		t.Errorf("the stored tree hashes to %s, %v; want %s", got, err, info.H1)
	}
	if n := srv.RequestsTo(file); n != 3 {
		t.Errorf("%d requests for the package, want 3 (a cut download, its end, the retry)", n)
	}
}

// A fill cancelled while the package streams stops the download, returns
// the context's error, and leaves nothing.
func TestStreamCancelled(t *testing.T) {
	_, src, pkg, _, _ := streamWorld(t, registrytest.Options{})
	c, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var pending atomic.Bool
	_, _, err = c.Fill(ctx, pkg, nil, func(ctx context.Context, dir string) (*source.Fetched, error) {
		f, err := source.FetchArchive(ctx, src, pkg, dir)
		if f != nil && f.Pending != nil {
			pending.Store(true)
			cancel() // before the cache reads anything
		}
		return f, err
	})
	if !pending.Load() {
		t.Fatal("the package was not handed over while downloading")
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Fill = %v, want context.Canceled", err)
	}
	emptyCache(t, c)
}
