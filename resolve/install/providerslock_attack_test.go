package install_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/registry"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// attackWorld is a registry of one provider for four platforms (its
// packages small: handed over in memory), a root module requiring it,
// the platforms and the honest hashes.
func attackWorld(t *testing.T, o registrytest.Options) (*registrytest.Server, string, []source.Platform, []hash.Hash) {
	t.Helper()
	const addr = "registry.example.test/acme/tool"
	all := []string{"linux_amd64", "darwin_arm64", "windows_amd64", "linux_arm64"}
	srv := registrytest.New(t, registrytest.Fixtures{Providers: []registrytest.Provider{
		{Addr: addr, Versions: []registrytest.ProviderVersion{{Version: "1.0.0", Platforms: all}}},
	}}, o)
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
	return srv, dir, plats, want
}

func attackLockRun(srv *registrytest.Server, dir string, c *cache.Cache, plats []source.Platform) (*install.Result, error) {
	return install.Init(context.Background(), install.Options{
		Dir: dir, Source: registry.NewSource(registry.Options{HTTPClient: srv.Client()}), Cache: c, Resolve: resolve.Options{Lock: lockfile.New()},
		ProvidersLock: true, Platforms: plats,
	})
}

// Attack: a hostile registry against providers lock, whose packages are
// all hashed in memory and none stored: a tampered package, a bad
// signature, a truncated body, a zh: or h1: the signed SHA256SUMS does not
// vouch for. Nothing unverified reaches the lock (the run fails, or locks
// exactly the honest hashes), the cache keeps nothing, and the next honest
// run in the same process locks the honest hashes.
func TestAttackProvidersLockHostileRegistry(t *testing.T) {
	const addr = "registry.example.test/acme/tool"
	for _, fault := range []registrytest.Fault{registrytest.TamperedPackage, registrytest.BadSignature, registrytest.TruncatedBody, registrytest.UnsignedZH, registrytest.WrongH1, registrytest.TruncatedFirst} {
		t.Run(fmt.Sprint(fault), func(t *testing.T) {
			srv, dir, plats, want := attackWorld(t, registrytest.Options{Fault: fault, Packages: true})
			cacheDir := t.TempDir()
			res, err := attackLockRun(srv, dir, openCacheIn(cacheDir), plats)
			t.Logf("against %v: %v", fault, err)
			mustFail := fault == registrytest.TamperedPackage || fault == registrytest.BadSignature || fault == registrytest.TruncatedBody
			if mustFail && err == nil {
				t.Fatalf("providers lock succeeded against %v", fault)
			}
			if err == nil {
				got := slices.Clone(res.Lock.ProviderHashes(tfaddr.MustParseProviderSource(addr)))
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Fatalf("locked against %v:\n got %v\nwant %v", fault, got, want)
				}
			}
			for _, sub := range []string{"objects", "index", "tmp", "locks"} {
				if ents, _ := os.ReadDir(filepath.Join(cacheDir, sub)); len(ents) != 0 {
					t.Errorf("the cache's %s/ holds %d items after %v", sub, len(ents), fault)
				}
			}
			srv.SetFault(registrytest.NoFault)
			res, err = attackLockRun(srv, dir, openCacheIn(cacheDir), plats)
			if err != nil {
				t.Fatalf("once honest: %v", err)
			}
			got := slices.Clone(res.Lock.ProviderHashes(tfaddr.MustParseProviderSource(addr)))
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("once honest:\n got %v\nwant %v", got, want)
			}
		})
	}
}

// Attack: two processes (two caches opened on one directory) run
// providers lock and an install of the same provider at once: both
// succeed with the honest hashes, and the cache is left with the
// install's entry only, no lock or temporary debris.
func TestAttackTwoProcessesLockAndInstall(t *testing.T) {
	const addr = "registry.example.test/acme/tool"
	srv, dir, plats, want := attackWorld(t, registrytest.Options{})
	cacheDir := t.TempDir()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range 4 {
		wg.Go(func() {
			c := openCacheIn(cacheDir)
			if i%2 == 0 {
				res, err := attackLockRun(srv, dir, c, plats)
				if err == nil {
					got := slices.Clone(res.Lock.ProviderHashes(tfaddr.MustParseProviderSource(addr)))
					slices.Sort(got)
					if !slices.Equal(got, want) {
						err = fmt.Errorf("locked\n got %v\nwant %v", got, want)
					}
				}
				errs[i] = err
				return
			}
			_, _, errs[i] = c.Fill(context.Background(), source.ProviderPackage{Addr: tfaddr.MustParseProviderSource(addr), Version: versions.MustParse("1.0.0"), Platform: plats[0]}, nil,
				func(ctx context.Context, d string) (*source.Fetched, error) {
					return source.FetchArchive(ctx, registry.NewSource(registry.Options{HTTPClient: srv.Client()}), source.ProviderPackage{Addr: tfaddr.MustParseProviderSource(addr), Version: versions.MustParse("1.0.0"), Platform: plats[0]}, d)
				})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("process %d: %v", i, err)
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(cacheDir, "tmp")); len(ents) != 0 {
		t.Errorf("tmp/ holds %d items", len(ents))
	}
}

// Attack: a killed Hash's debris (tmp/hash-..., a partial archive and a
// directory, young and old) does not poison or confuse a later providers
// lock on the same cache: it locks the honest hashes, leaves the young
// debris alone (it may be a live Hash's) and the old is swept.
func TestAttackKilledHashDebris(t *testing.T) {
	const addr = "registry.example.test/acme/tool"
	srv, dir, plats, want := attackWorld(t, registrytest.Options{})
	cacheDir := t.TempDir()
	openCacheIn(cacheDir)
	tmp := filepath.Join(cacheDir, "tmp")
	// Named as Cache.Hash names its work (a sweep removes only names the
	// cache makes).
	key := strings.Repeat("ab", 32)
	young, old, oldDir := "hash-"+key+"-young", "hash-"+key+"-old", "hash-"+key+"-olddir"
	if err := os.MkdirAll(filepath.Join(tmp, oldDir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{young, old} {
		if err := os.WriteFile(filepath.Join(tmp, name), []byte("PK\x03\x04 half an archive"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	then := time.Now().Add(-2 * time.Hour)
	for _, name := range []string{old, oldDir} {
		if err := os.Chtimes(filepath.Join(tmp, name), then, then); err != nil {
			t.Fatal(err)
		}
	}
	res, err := attackLockRun(srv, dir, openCacheIn(cacheDir), plats)
	if err != nil {
		t.Fatal(err)
	}
	got := slices.Clone(res.Lock.ProviderHashes(tfaddr.MustParseProviderSource(addr)))
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("locked\n got %v\nwant %v", got, want)
	}
	ents, _ := os.ReadDir(tmp)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{young}) {
		t.Errorf("tmp/ holds %v, want the young debris only", names)
	}
}
