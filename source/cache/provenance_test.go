package cache_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/registry"
	"github.com/tflock/tflock/source/registry/registrytest"
)

func registrySource(srv *registrytest.Server, unsigned ...string) *registry.Source {
	return registry.NewSource(registry.Options{
		HTTPClient:    srv.Client(),
		Credentials:   registry.Tokens{},
		MinBackoff:    time.Millisecond,
		MaxBackoff:    time.Millisecond,
		LookupEnv:     func(string) (string, bool) { return "", false },
		UnsignedHosts: append([]string{}, unsigned...),
	})
}

func providerAt(addr, version, platform string) source.ProviderPackage {
	pl, _ := source.ParsePlatform(platform)
	return source.ProviderPackage{Addr: tfaddr.MustParseProviderSource(addr), Version: versions.MustParse(version), Platform: pl}
}

// A fill returns what vouched for the package (issue 28 item 2), and so
// does a hit, from the index; an index written without it says "verified
// locally" only.
func TestFillProvenance(t *testing.T) {
	srv := registrytest.New(t, registrytest.Fixtures{Providers: []registrytest.Provider{
		{Addr: "acme/tool", Versions: []registrytest.ProviderVersion{{Version: "1.0.0", Platforms: []string{"linux_amd64", "darwin_arm64"}}}},
	}}, registrytest.Options{})
	src := registrySource(srv)
	c, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pkg := providerAt("registry.example.test/acme/tool", "1.0.0", "linux_amd64")
	fetch := func(ctx context.Context, dir string) (*source.Fetched, error) { return src.FetchArchive(ctx, pkg, dir) }
	want := hash.Provenance{SignedBy: []string{srv.KeyID}, Registries: []string{"registry.example.test"}, VerifiedLocally: true, Platforms: []string{"linux_amd64"}}
	check := func(what string, e cache.Entry) {
		t.Helper()
		if p := e.Provenance; !slices.Equal(p.SignedBy, want.SignedBy) || !slices.Equal(p.Registries, want.Registries) || !p.VerifiedLocally || !slices.Equal(p.Platforms, want.Platforms) || len(p.Mirrors) != 0 {
			t.Errorf("%s: provenance %+v, want %+v", what, p, want)
		}
		other, _ := srv.ProviderPackage("acme/tool", "1.0.0", "darwin_arm64")
		if !slices.ContainsFunc(e.Origin, func(r hash.Record) bool { return r.Hash == other.ZH }) {
			t.Errorf("%s: origin %v lacks the other platform's signed zh: %s", what, e.Origin, other.ZH)
		}
	}
	e, hit, err := c.Fill(ctx, pkg, nil, fetch)
	if err != nil || hit {
		t.Fatalf("fill: hit %v, %v", hit, err)
	}
	check("fill", e)
	h1 := e.H1
	e, hit, err = c.Fill(ctx, pkg, nil, fetch)
	if err != nil || !hit {
		t.Fatalf("second fill: hit %v, %v", hit, err)
	}
	check("hit", e)
	// Another process, whose hit the index describes (the lock file's
	// h1: finds the entry).
	c, err = cache.Open(c.Dir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if e, ok, _ := c.Lookup(ctx, pkg, []hash.Hash{h1}); ok {
		check("lookup from the index", e)
	} else {
		t.Error("lookup missed")
	}

	// An index record written before provenance was kept.
	files, _ := filepath.Glob(filepath.Join(c.Dir(), "index", "*.json"))
	if len(files) != 1 {
		t.Fatalf("index files %v", files)
	}
	b, _ := os.ReadFile(files[0])
	var rec map[string]any
	if err := json.Unmarshal(b, &rec); err != nil || rec["origin"] == nil {
		t.Fatalf("index record %s: no origin (%v)", b, err)
	}
	delete(rec, "origin")
	b, _ = json.Marshal(rec)
	if err := os.WriteFile(files[0], b, 0o644); err != nil {
		t.Fatal(err)
	}
	e, hit, err = c.Fill(ctx, pkg, []hash.Hash{h1}, fetch)
	if err != nil || !hit {
		t.Fatalf("fill on an old index: hit %v, %v", hit, err)
	}
	if e.Origin != nil || !e.Provenance.VerifiedLocally || len(e.Provenance.SignedBy)+len(e.Provenance.Registries)+len(e.Provenance.Platforms) != 0 {
		t.Errorf("old index: origin %v, provenance %+v; want none but verified locally", e.Origin, e.Provenance)
	}
}

// A fill returns the warnings of its download (issue 28 item 4), each
// fill its own, even when the source verified the release once for both.
func TestFillWarnings(t *testing.T) {
	srv := registrytest.New(t, registrytest.Fixtures{Providers: []registrytest.Provider{
		{Addr: "acme/open", Unsigned: true, Versions: []registrytest.ProviderVersion{{Version: "1.0.0", Platforms: []string{"linux_amd64", "darwin_arm64"}}}},
	}}, registrytest.Options{})
	src := registrySource(srv, "registry.example.test")
	c, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, plat := range []string{"linux_amd64", "darwin_arm64"} {
		pkg := providerAt("registry.example.test/acme/open", "1.0.0", plat)
		e, _, err := c.Fill(context.Background(), pkg, nil, func(ctx context.Context, dir string) (*source.Fetched, error) {
			return source.FetchArchive(ctx, src, pkg, dir)
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(e.Warnings) != 1 || !strings.Contains(e.Warnings[0], "lists no signing key") {
			t.Errorf("%s: warnings %q, want the unsigned release's", plat, e.Warnings)
		}
		if len(e.Provenance.SignedBy) != 0 || !slices.Equal(e.Provenance.Registries, []string{"registry.example.test"}) {
			t.Errorf("%s: provenance %+v, want reported by the registry, unsigned", plat, e.Provenance)
		}
	}
}

// The cache's fetcher answers hash-only requests (issue 28 item 3):
// another platform's hashes without its files, once.
func TestFetcherHashes(t *testing.T) {
	srv := registrytest.New(t, registrytest.Fixtures{Providers: []registrytest.Provider{
		{Addr: "acme/tool", Versions: []registrytest.ProviderVersion{{Version: "1.0.0", Platforms: []string{"linux_amd64", "darwin_arm64"}}}},
	}}, registrytest.Options{})
	c, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	hs, ok := c.Fetcher(registrySource(srv)).(source.Hasher)
	if !ok {
		t.Fatal("the cache's fetcher is not a source.Hasher")
	}
	pkg := providerAt("registry.example.test/acme/tool", "1.0.0", "darwin_arm64")
	info, _ := srv.ProviderPackage("acme/tool", "1.0.0", "darwin_arm64")
	f, err := hs.FetchHashes(context.Background(), pkg)
	if err != nil {
		t.Fatal(err)
	}
	if f.Dir != "" || !slices.Contains(f.Hashes, info.H1) || !slices.Contains(f.Hashes, info.ZH) || len(f.Origin) == 0 {
		t.Errorf("got dir %q, hashes %v, %d origin records; want no dir, %s and %s, the signed records", f.Dir, f.Hashes, len(f.Origin), info.H1, info.ZH)
	}
	if objs, _ := os.ReadDir(filepath.Join(c.Dir(), "objects")); len(objs) != 0 {
		t.Errorf("hash-only stored %d entries", len(objs))
	}
	zip := "/files/providers/registry.example.test/acme/tool/1.0.0/" + info.Filename
	zips := srv.RequestsTo(zip)
	if zips == 0 {
		t.Fatalf("no request to %s", zip)
	}
	if f, err = hs.FetchHashes(context.Background(), pkg); err != nil || !slices.Contains(f.Hashes, info.H1) || f.Origin != nil {
		t.Errorf("again: %v, %v (origin %v: an index is not the origin's word)", f, err, f.Origin)
	}
	if n := srv.RequestsTo(zip); n != zips {
		t.Errorf("the second hash-only request downloaded again (%d, %d)", zips, n)
	}
}
