package install_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/assemble"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/registry/registrytest"
)

func TestDispatchRoutes(t *testing.T) {
	static := staticFixtures()
	d := &assemble.Dispatch{Providers: static}
	ctx := context.Background()
	// Registry modules go to the provider source when Registry is unset.
	if _, err := d.Versions(ctx, source.ModulePackage{Source: vpcSource}); err != nil {
		t.Errorf("registry module: %v", err)
	}
	if _, err := d.Versions(ctx, source.ProviderPackage{Addr: awsAddr}); err != nil {
		t.Errorf("provider: %v", err)
	}
	// (HTTP archives have a default source: see httparchive_test.go.)
	for _, src := range []string{"git::https://example.test/a/b.git", "oci://example.test/a/b"} {
		_, err := d.Versions(ctx, source.ModulePackage{Source: src})
		if !errors.Is(err, source.ErrNotFound) || !strings.Contains(err.Error(), "no source configured") {
			t.Errorf("%s without a source: %v, want ErrNotFound naming the missing source", src, err)
		}
	}
	recs, err := d.Checksums(ctx, source.ProviderPackage{Addr: awsAddr, Version: mustV("5.1.0"), Platform: source.CurrentPlatform})
	if err != nil || len(recs) != len(testPlats) {
		t.Errorf("Checksums = %v, %v; want one record per platform", recs, err)
	}
	if _, err := (&assemble.Dispatch{}).Versions(ctx, source.ProviderPackage{Addr: awsAddr}); !errors.Is(err, source.ErrNotFound) {
		t.Errorf("no provider source: %v", err)
	}
}

// TestDispatchRoutesModuleLocations: a registry module is fetched from
// the location its registry reports, routed by the Dispatch alone: git
// (over smart HTTP) with a //SUBDIR, OCI by tag, and the registry's own
// archive. Each delivers the same tree as the location fetched directly,
// reports the location's subdirectory, and names the registry package.
func TestDispatchRoutesModuleLocations(t *testing.T) {
	if err := installtest.HaveGit(); err != nil {
		t.Skip(err)
	}
	ctx := context.Background()
	fx := installtest.DefaultFixtures()
	fx.Modules = append(fx.Modules,
		registrytest.Module{Addr: installtest.RegistryHost + "/acme/ingit/cloud", Versions: []registrytest.ModuleVersion{
			{Version: "1.0.0", Location: installtest.Network + "//modules/subnet?ref=v1.0.0"}}},
		registrytest.Module{Addr: installtest.RegistryHost + "/acme/inoci/cloud", Versions: []registrytest.ModuleVersion{
			{Version: "1.1.0", Location: installtest.Storage + "?tag=1.1.0"}}},
	)
	w, err := installtest.Start(ctx, installtest.Options{Fixtures: &fx})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	d := w.Source
	if _, ok := d.Providers.(source.ModuleLocator); !ok {
		t.Fatal("the world's registry source is not a ModuleLocator")
	}
	fetchH1 := func(pkg source.Package) (*source.Fetched, hash.Hash) {
		t.Helper()
		f, err := d.Fetch(ctx, pkg, filepath.Join(t.TempDir(), "pkg"))
		if err != nil {
			t.Fatalf("Fetch %v: %v", pkg, err)
		}
		h, err := hash.Options{Module: true}.H1Dir(ctx, f.Dir)
		if err != nil {
			t.Fatal(err)
		}
		return f, h
	}
	for _, tc := range []struct {
		name   string
		pkg    source.ModulePackage
		direct source.ModulePackage
		subdir string
	}{
		{"git", source.ModulePackage{Source: installtest.RegistryHost + "/acme/ingit/cloud", Version: mustV("1.0.0")},
			source.ModulePackage{Source: installtest.Network, Ref: "v1.0.0"}, "modules/subnet"},
		{"oci", source.ModulePackage{Source: installtest.RegistryHost + "/acme/inoci/cloud", Version: mustV("1.1.0")},
			source.ModulePackage{Source: installtest.Storage, Ref: "1.1.0"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, gotH1 := fetchH1(tc.pkg)
			want, wantH1 := fetchH1(tc.direct)
			if gotH1 != wantH1 || got.Pin == "" || got.Pin != want.Pin {
				t.Errorf("via the registry: h1 %s pin %q; the location itself: h1 %s pin %q", gotH1, got.Pin, wantH1, want.Pin)
			}
			if got.Package != tc.pkg || got.Subdir != tc.subdir {
				t.Errorf("Fetched.Package %v, Subdir %q; want %v, %q", got.Package, got.Subdir, tc.pkg, tc.subdir)
			}
		})
	}
	t.Run("archive", func(t *testing.T) {
		pkg := source.ModulePackage{Source: installtest.RegistryHost + "/acme/vpc/cloud", Version: mustV("1.1.0")}
		got, gotH1 := fetchH1(pkg)
		want, ok := w.Registry.ModuleH1("acme/vpc/cloud", "1.1.0")
		if !ok || gotH1 != want || len(got.Hashes) != 1 || got.Hashes[0] != want || got.Package != pkg {
			t.Errorf("Fetched %+v (h1 of the tree %s), want h1 %s", got, gotH1, want)
		}
	})
	t.Run("no git source", func(t *testing.T) {
		bare := &assemble.Dispatch{Registry: d.Providers}
		dir := filepath.Join(t.TempDir(), "pkg")
		_, err := bare.Fetch(ctx, source.ModulePackage{Source: installtest.RegistryHost + "/acme/ingit/cloud", Version: mustV("1.0.0")}, dir)
		if !errors.Is(err, source.ErrNotFound) || !strings.Contains(err.Error(), "acme/network.git") || !strings.Contains(err.Error(), "no source configured for git modules") {
			t.Errorf("registry module in git without a git source: %v, want ErrNotFound naming the location and the missing source", err)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a failed fetch left %s: %v", dir, err)
		}
	})
}

// listCounter counts the version listings and checksum requests a source
// answers.
type listCounter struct {
	source.Source
	lists, sums atomic.Int64
}

func (c *listCounter) Versions(ctx context.Context, pkg source.Package) ([]source.Available, error) {
	c.lists.Add(1)
	return c.Source.Versions(ctx, pkg)
}

func (c *listCounter) Checksums(ctx context.Context, pkg source.Package) ([]hash.Record, error) {
	c.sums.Add(1)
	if cr, ok := c.Source.(source.ChecksumReporter); ok {
		return cr.Checksums(ctx, pkg)
	}
	return nil, nil
}

// TestDispatchRemember: several runs given one Dispatch with Remember list
// each package once (the wrapper's units share listings without wrapping
// the source themselves); without Remember each run lists for itself; the
// Dispatch of NewSources remembers by default.
func TestDispatchRemember(t *testing.T) {
	for _, remember := range []time.Duration{0, time.Minute} {
		counter := &listCounter{Source: staticFixtures()}
		d := &assemble.Dispatch{Providers: counter, Remember: remember}
		c := openCache(t)
		for range 3 {
			if _, err := install.Init(context.Background(), install.Options{Dir: newConfig(t), Source: d, Cache: c}); err != nil {
				t.Fatal(err)
			}
		}
		perRun := counter.lists.Load()
		if remember > 0 {
			if single := perRunLists(t); perRun != single {
				t.Errorf("Remember %v: %d listings for three runs, want %d (one run's)", remember, perRun, single)
			}
		} else if perRun != 3*perRunLists(t) {
			t.Errorf("no Remember: %d listings for three runs, want three runs' %d", perRun, 3*perRunLists(t))
		}
	}
	srcs, diags := assemble.NewSources(context.Background(), assemble.SourcesOptions{Env: []string{}, Home: t.TempDir(), ConfigFiles: []string{}})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if srcs.Source.Remember != assemble.DefaultRemember {
		t.Errorf("NewSources: Remember %v, want %v", srcs.Source.Remember, assemble.DefaultRemember)
	}
}

// perRunLists is how many listings one Init of newConfig asks for.
func perRunLists(t *testing.T) int64 {
	t.Helper()
	counter := &listCounter{Source: staticFixtures()}
	d := &assemble.Dispatch{Providers: counter}
	if _, err := install.Init(context.Background(), install.Options{Dir: newConfig(t), Source: d, Cache: openCache(t)}); err != nil {
		t.Fatal(err)
	}
	return counter.lists.Load()
}

// notForwarding wraps a source without the source.ArchiveFetcher
// capability (embedding the interface gives it Versions and Fetch only).
type notForwarding struct{ source.Source }

// TestDispatchForwardsFetchArchive: FetchArchive routes as Fetch does and
// asks the source it arrives at for the archive: a provider's zip and a
// registry module's zip (through its location's fetcher) are handed over,
// naming the package asked for, where Fetch extracts them (a tar.gz is
// extracted by the source either way); a provider
// source that does not forward the capability is fetched with its Fetch.
// Through a cache, each stores the tree a plain Fetch extracts.
func TestDispatchForwardsFetchArchive(t *testing.T) {
	ctx := context.Background()
	fx := installtest.DefaultFixtures()
	fx.Modules = append(fx.Modules, registrytest.Module{Addr: installtest.RegistryHost + "/acme/zipped/cloud", Versions: []registrytest.ModuleVersion{
		{Version: "1.0.0", Delivery: registrytest.DeliverHeader, Files: map[string]string{"main.tf": "# zipped\n", "README.md": "zipped\n"}}}})
	w, err := installtest.Start(ctx, installtest.Options{NoGit: true, Fixtures: &fx})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	provider := source.ProviderPackage{Addr: tfaddr.MustParseProviderSource(installtest.RegistryHost + "/acme/cloud"), Version: mustV("1.1.0"), Platform: source.CurrentPlatform}
	zipped := source.ModulePackage{Source: installtest.RegistryHost + "/acme/zipped/cloud", Version: mustV("1.0.0")}
	tarGz := source.ModulePackage{Source: installtest.RegistryHost + "/acme/vpc/cloud", Version: mustV("1.1.0")}
	plainOnly := &assemble.Dispatch{Providers: notForwarding{w.Source.Providers}}
	for _, tc := range []struct {
		name    string
		d       *assemble.Dispatch
		pkg     source.Package
		archive bool
	}{
		{"provider", w.Source, provider, true},
		{"registry module zip", w.Source, zipped, true},
		{"registry module tar.gz", w.Source, tarGz, false}, // extracted by the source
		{"provider source not forwarding", plainOnly, provider, false},
		{"registry module, source not forwarding", plainOnly, zipped, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := tc.d.FetchArchive(ctx, tc.pkg, filepath.Join(t.TempDir(), "a"))
			if err != nil {
				t.Fatal(err)
			}
			if f.Pending != nil {
				if err := f.Pending.Wait(); err != nil {
					t.Fatal(err)
				}
			}
			if got := f.Archive != ""; got != tc.archive || (f.Dir != "") == got || f.Package != tc.pkg {
				t.Fatalf("FetchArchive: Archive %q, Dir %q, Package %v; want an archive: %v, package %v", f.Archive, f.Dir, f.Package, tc.archive, tc.pkg)
			}
			plain, err := tc.d.Fetch(ctx, tc.pkg, filepath.Join(t.TempDir(), "plain"))
			if err != nil {
				t.Fatal(err)
			}
			if plain.Archive != "" || plain.Dir == "" {
				t.Fatalf("Fetch handed over an archive (%q) or no files (%q)", plain.Archive, plain.Dir)
			}
			_, isModule := tc.pkg.(source.ModulePackage)
			want, err := hash.Options{Module: isModule}.H1Dir(ctx, plain.Dir)
			if err != nil {
				t.Fatal(err)
			}
			c, err := cache.Open(t.TempDir(), cache.Options{})
			if err != nil {
				t.Fatal(err)
			}
			e, _, err := c.Fill(ctx, tc.pkg, nil, func(ctx context.Context, dir string) (*source.Fetched, error) {
				return source.FetchArchive(ctx, tc.d, tc.pkg, dir)
			})
			if err != nil || e.H1 != want {
				t.Errorf("the cache stored %s (%v), a plain Fetch extracts %s", e.H1, err, want)
			}
		})
	}
}
