package install_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/registry"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// TestProvidersLockAskedPlatformsOnly: issue 13 item 9. When the registry
// reports every platform's h1: (OpenTofu 1.12's packages field),
// "providers lock -platform X" records the h1: of the platforms asked for
// and no other, with the zh: of every platform from the signed SHA256SUMS,
// as tofu 1.12.6 does.
func TestProvidersLockAskedPlatformsOnly(t *testing.T) {
	all := []string{"linux_amd64", "darwin_arm64", "windows_amd64"}
	const addr = "registry.example.test/acme/tool"
	fx := registrytest.Fixtures{Providers: []registrytest.Provider{
		{Addr: addr, Versions: []registrytest.ProviderVersion{{Version: "1.0.0", Platforms: all}}},
	}}
	srv := registrytest.New(t, fx, registrytest.Options{Packages: true})
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": `terraform {
  required_providers {
    tool = { source = "` + addr + `" }
  }
}
`})
	for _, asked := range [][]string{{"darwin_arm64"}, {"windows_amd64", "linux_amd64"}} {
		var plats []source.Platform
		var want []hash.Hash
		for _, p := range all {
			info, ok := srv.ProviderPackage(addr, "1.0.0", p)
			if !ok {
				t.Fatalf("no package for %s", p)
			}
			want = append(want, info.ZH)
			if slices.Contains(asked, p) {
				want = append(want, info.H1)
				pl, _ := source.ParsePlatform(p)
				plats = append(plats, pl)
			}
		}
		slices.Sort(want)
		_, got := lockProviders(t, srv, dir, openCache(t), plats, addr)
		if !slices.Equal(got, want) {
			t.Errorf("platforms %v: hashes\n got %v\nwant %v", asked, got, want)
		}
		if _, err := os.Stat(filepath.Join(dir, ".terraform")); !os.IsNotExist(err) {
			t.Errorf("providers lock installed something (stat: %v)", err)
		}
	}
}

// TestProvidersLockStoresNothing: without the packages field, providers
// lock downloads each platform's package for its h1: and hashes it as it
// reads it, writing none of its files, this machine's package too (as
// tofu, which keeps nothing: each stored package cost seven new files and
// directories, the most of a providers lock's time on some file systems).
// The cache's directory holds no entry and no index record afterwards. A
// second run from an empty lock file downloads them again, as tofu does:
// the hashes a lock file gets are computed from the packages, never taken
// from what the cache says of them (issue 22). Both lock files hold the
// h1: the registry publishes for each platform.
func TestProvidersLockStoresNothing(t *testing.T) {
	const addr = "registry.example.test/acme/tool"
	this := source.CurrentPlatform.String()
	all := []string{this}
	for _, p := range []string{"linux_amd64", "darwin_arm64", "windows_amd64"} {
		if p != this {
			all = append(all, p)
		}
	}
	fx := registrytest.Fixtures{Providers: []registrytest.Provider{
		{Addr: addr, Versions: []registrytest.ProviderVersion{{Version: "1.0.0", Platforms: all}}},
	}}
	srv := registrytest.New(t, fx, registrytest.Options{})
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": `terraform {
  required_providers {
    tool = { source = "` + addr + `" }
  }
}
`})
	var plats []source.Platform
	var want []hash.Hash
	for _, p := range all {
		pl, _ := source.ParsePlatform(p)
		plats = append(plats, pl)
		info, _ := srv.ProviderPackage(addr, "1.0.0", p)
		want = append(want, info.H1, info.ZH)
	}
	slices.Sort(want)
	cacheDir := t.TempDir()
	for _, round := range []string{"cold", "warm"} {
		res, got := lockProviders(t, srv, dir, openCacheIn(cacheDir), plats, addr)
		if !slices.Equal(got, want) {
			t.Errorf("%s: hashes\n got %v\nwant %v", round, got, want)
		}
		if wantDL := map[string]int{"cold": len(all), "warm": len(all)}[round]; res.Downloads != wantDL {
			t.Errorf("%s: %d downloads, want %d", round, res.Downloads, wantDL)
		}
		for _, sub := range []string{"objects", "index", "tmp"} {
			if ents, _ := os.ReadDir(filepath.Join(cacheDir, sub)); len(ents) != 0 {
				t.Errorf("%s: the cache's %s/ holds %d items, want none", round, sub, len(ents))
			}
		}
	}
}

// lockProviders runs a providers lock of dir's configuration for plats,
// from an empty lock file, against srv through c, and returns the result
// with the sorted hashes locked for addr.
func lockProviders(t *testing.T, srv *registrytest.Server, dir string, c *cache.Cache, plats []source.Platform, addr string) (*install.Result, []hash.Hash) {
	t.Helper()
	res, err := install.Init(context.Background(), install.Options{
		Dir: dir, Source: registry.NewSource(registry.Options{HTTPClient: srv.Client()}), Cache: c, Resolve: resolve.Options{Lock: lockfile.New()},
		ProvidersLock: true, Platforms: plats,
	})
	if err != nil {
		t.Fatal(err)
	}
	got := slices.Clone(res.Lock.ProviderHashes(tfaddr.MustParseProviderSource(addr)))
	slices.Sort(got)
	return res, got
}
