package install_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/fstest"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/config"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// unitsFixtures has one provider per unit (acme/p0 ... acme/pN-1) and one
// every unit needs (acme/common).
func unitsFixtures(n int) registrytest.Fixtures {
	plats := []string{source.CurrentPlatform.String()}
	var fx registrytest.Fixtures
	for i := range n {
		fx.Providers = append(fx.Providers, registrytest.Provider{Addr: fmt.Sprintf("%s/acme/p%d", installtest.RegistryHost, i), Versions: []registrytest.ProviderVersion{{Version: "1.0.0", Platforms: plats}}})
	}
	fx.Providers = append(fx.Providers, registrytest.Provider{Addr: installtest.RegistryHost + "/acme/common", Versions: []registrytest.ProviderVersion{{Version: "2.0.0", Platforms: plats}}})
	return fx
}

func unitFS(i int) fstest.MapFS {
	return fstest.MapFS{"main.tf": {Data: []byte(fmt.Sprintf(`terraform {
  required_providers {
    own    = { source = "%[1]s/acme/p%[2]d", version = "1.0.0" }
    common = { source = "%[1]s/acme/common" }
  }
}
`, installtest.RegistryHost, i))}}
}

// TestUnitsShareCacheAndSource runs 8 Inits at once, each configuration
// given as an fs.FS, on one cache and one registry source shared by all,
// with one event handler for everything. Every event carries the unit of
// the Init that caused it, and no unit's events concern a package it does
// not require. A second round on the warm cache is attributed the same
// way and downloads nothing.
func TestUnitsShareCacheAndSource(t *testing.T) {
	const n = 8
	rec := &recorder{}
	fx := unitsFixtures(n)
	w, err := installtest.Start(context.Background(), installtest.Options{Fixtures: &fx, NoGit: true, Events: rec})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	c, err := cache.Open(t.TempDir(), cache.Options{Events: rec})
	if err != nil {
		t.Fatal(err)
	}
	src := source.Memoize(w.Source)
	dirs := make([]string, n)
	for i := range dirs {
		dirs[i] = t.TempDir()
	}
	for round, cold := range []bool{true, false} {
		var wg sync.WaitGroup
		errs := make([]error, n)
		results := make([]*install.Result, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx := source.WithUnit(context.Background(), fmt.Sprintf("unit-%d", i))
				results[i], errs[i] = install.Init(ctx, install.Options{Dir: dirs[i], FS: unitFS(i), Source: src, Cache: c, Events: rec})
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d unit-%d: %v", round, i, err)
			}
			if got := len(results[i].Providers); got != 2 {
				t.Errorf("round %d unit-%d: %d providers installed, want 2", round, i, got)
			}
			if own := results[i].Lock.Provider(tfaddr.NewProvider(installtest.RegistryHost, "acme", fmt.Sprintf("p%d", i))); own == nil || own.Version.String() != "1.0.0" {
				t.Errorf("round %d unit-%d: lock has no acme/p%d 1.0.0", round, i, i)
			}
		}
		seen := map[string]map[source.EventKind]int{}
		for _, e := range rec.take() {
			if e.Unit == "" {
				t.Errorf("round %d: event without a unit: %+v", round, e)
				continue
			}
			var i int
			if _, err := fmt.Sscanf(e.Unit, "unit-%d", &i); err != nil || i < 0 || i >= n {
				t.Errorf("round %d: event of unknown unit %q", round, e.Unit)
				continue
			}
			if e.Package != nil {
				p, ok := e.Package.(source.ProviderPackage)
				if !ok || p.Addr.Type != fmt.Sprintf("p%d", i) && p.Addr.Type != "common" {
					t.Errorf("round %d: %s got an event about %s, which it does not require: %+v", round, e.Unit, e.Package, e)
				}
			}
			if seen[e.Unit] == nil {
				seen[e.Unit] = map[source.EventKind]int{}
			}
			seen[e.Unit][e.Kind]++
		}
		for i := range n {
			k := seen[fmt.Sprintf("unit-%d", i)]
			if k[source.EventVersionChosen] != 2 || k[source.EventVerified] != 2 {
				t.Errorf("round %d unit-%d: %d versions chosen and %d verified, want 2 and 2 (%v)", round, i, k[source.EventVersionChosen], k[source.EventVerified], k)
			}
			if cold && k[source.EventFetchProgress] == 0 {
				t.Errorf("round %d unit-%d: no download progress attributed (%v)", round, i, k)
			}
			if !cold && (k[source.EventCacheHit] < 2 || k[source.EventFetchStarted] != 0) {
				t.Errorf("round %d unit-%d: warm round: %d cache hits, %d fetches; want >= 2 and 0 (%v)", round, i, k[source.EventCacheHit], k[source.EventFetchStarted], k)
			}
		}
	}
}

// TestInitSharedConfig: one configuration read once (with a local module)
// and given to several Inits at once, each installing into its own
// directory, locks and installs as Init reading the directory does; the
// configuration is not changed.
func TestInitSharedConfig(t *testing.T) {
	w := startWorld(t)
	src := t.TempDir()
	writeFiles(t, src, map[string]string{
		"main.tf": `module "net" {
  source = "./modules/net"
}
module "network" {
  source  = "` + installtest.Network + `"
  version = "~> 1.0"
}
`,
		"modules/net/main.tf": `terraform {
  required_providers {
    cloud = { source = "registry.example.test/acme/cloud", version = "1.0.0" }
  }
}
`,
	})
	c := openCache(t)
	want, err := install.Init(context.Background(), install.Options{Dir: src, Source: w.Source, Cache: c, Resolve: resolve.Options{DefaultHost: installtest.RegistryHost}})
	if err != nil {
		t.Fatal(err)
	}
	cfg, diags := config.ReadTree(src, "", config.ReadOptions{DefaultHost: installtest.RegistryHost})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	before := fmt.Sprintf("%+v", cfg.Modules)
	const n = 4
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dir := t.TempDir()
			res, err := install.Init(context.Background(), install.Options{Dir: dir, Config: cfg, Source: w.Source, Cache: c, Resolve: resolve.Options{DefaultHost: installtest.RegistryHost}})
			if err != nil {
				t.Errorf("init %d: %v", i, err)
				return
			}
			if !lockfile.Equal(res.Lock, want.Lock) {
				t.Errorf("init %d: lock differs from Init on the directory:\n%s\nwant\n%s", i, res.Lock.Bytes(), want.Lock.Bytes())
			}
			if len(res.Providers) != 1 || len(res.Modules) != len(want.Modules) {
				t.Errorf("init %d: %d providers, %d modules; want 1 and %d", i, len(res.Providers), len(res.Modules), len(want.Modules))
			}
			for _, m := range res.Modules {
				if m.Key == "net" && m.Dir != "modules/net" {
					t.Errorf("init %d: local module dir %q, want modules/net", i, m.Dir)
				}
			}
		}()
	}
	wg.Wait()
	if after := fmt.Sprintf("%+v", cfg.Modules); after != before {
		t.Error("Init changed the configuration it was given")
	}
}
