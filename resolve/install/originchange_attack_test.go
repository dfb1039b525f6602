package install_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/cache/ocitier"
	"github.com/tflock/tflock/source/oci"
	"github.com/tflock/tflock/source/oci/ocitest"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// cloudWorld starts a world whose registry serves acme/cloud 1.0.0 built
// with an executable of size bytes: two such worlds answer for the same
// address with different packages and different signed checksums (a
// release replaced at its origin).
func cloudWorld(t *testing.T, size int) *installtest.World {
	fx := registrytest.Fixtures{Providers: []registrytest.Provider{{Addr: installtest.RegistryHost + "/acme/cloud", Versions: []registrytest.ProviderVersion{
		{Version: "1.0.0", Platforms: installtest.Platforms(), Size: size}}}}}
	return startWorldWith(t, installtest.Options{NoGit: true, Fixtures: &fx})
}

// TestAttackNewSelectionCachedThenOriginDiffers: a provider version is
// put in the cache (one Cache shared by two runs, as a wrapper running
// many units does; or the remote tier another runner wrote) from its
// origin's first release; the origin then serves another package for it,
// with checksums it signs. A run without a lock entry (a new selection)
// must record what the origin vouches for now, or refuse: never the
// cached package's hashes.
func TestAttackNewSelectionCachedThenOriginDiffers(t *testing.T) {
	first, now := cloudWorld(t, 1024), cloudWorld(t, 2048)
	ref := t.TempDir()
	writeFiles(t, ref, map[string]string{"main.tf": cloudConfig("1.0.0")})
	initAndWrite(t, install.Options{Dir: ref, Source: now.Source, Cache: openCache(t)})
	want := readLock(t, ref)
	old := t.TempDir()
	writeFiles(t, old, map[string]string{"main.tf": cloudConfig("1.0.0")})
	initAndWrite(t, install.Options{Dir: old, Source: first.Source, Cache: openCache(t)})
	if readLock(t, old) == want {
		t.Fatal("the two releases have the same hashes")
	}
	check := func(t *testing.T, c func() *cache.Cache) {
		fill := t.TempDir()
		writeFiles(t, fill, map[string]string{"main.tf": cloudConfig("1.0.0")})
		initAndWrite(t, install.Options{Dir: fill, Source: first.Source, Cache: c()})
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{"main.tf": cloudConfig("1.0.0")})
		res, err := install.Init(context.Background(), install.Options{Dir: dir, Source: now.Source, Cache: c()})
		if err != nil {
			if !strings.Contains(err.Error(), "checksum") {
				t.Fatalf("Init: %v", err)
			}
			t.Logf("refused: %v", err)
			return // refused: fine
		}
		if _, err := install.WriteLock(dir+"/"+install.LockFileName, res); err != nil {
			t.Fatal(err)
		}
		if got := readLock(t, dir); got != want {
			t.Errorf("lock:\n%s\nwant what the origin vouches for now:\n%s", got, want)
		}
	}
	t.Run("one cache", func(t *testing.T) {
		c := openCache(t)
		check(t, func() *cache.Cache { return c })
	})
	t.Run("remote tier", func(t *testing.T) {
		srv := ocitest.New(t, ocitest.ServerOptions{})
		check(t, func() *cache.Cache {
			tier, err := ocitier.New("oci://"+srv.Host()+"/fleet", ocitier.Options{OCI: oci.Options{PlainHTTP: true, HTTPClient: srv.Client()}})
			if err != nil {
				t.Fatal(err)
			}
			c, err := cache.Open(t.TempDir(), cache.Options{Remote: tier})
			if err != nil {
				t.Fatal(err)
			}
			return c
		})
	})
}
