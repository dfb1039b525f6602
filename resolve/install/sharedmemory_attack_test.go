package install_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// appWorld starts a world whose registry serves acme/app/cloud 1.0.0 with
// a main.tf saying which.
func appWorld(t *testing.T, which string) *installtest.World {
	fx := registrytest.Fixtures{Modules: []registrytest.Module{{Addr: installtest.RegistryHost + "/acme/app/cloud", Versions: []registrytest.ModuleVersion{
		{Version: "1.0.0", Files: map[string]string{"main.tf": "# " + which + "\n"}, Delivery: registrytest.DeliverHeader}}}}}
	return startWorldWith(t, installtest.Options{NoGit: true, Fixtures: &fx})
}

// TestAttackSharedCacheOtherOriginNewSelection: two runs on one cache
// whose sources answer the same module address from different origins
// (another unit's CLI configuration, a host override). The first fills
// the module from its origin; the second, with no lock entry (trust on
// first use), must install and lock what its own origin serves, not what
// the cache holds for the same identity from the other.
//
// Held across processes (two Cache values on one directory: the index is
// no authority), and with one Cache value shared by both runs (a wrapper
// running many units in one process): a module the Cache remembers
// fetching and verifying itself is served only to runs of the same source
// (cache.Cache.ForSource). Before, that memory was keyed by the package
// identity alone and kept for the Cache's life, and it served the second
// run's new selection without asking its origin: the module was
// installed and locked with the other origin's h1:. Providers were not
// affected (the trust seam asks the origin's checksums of a new selection
// found in the cache: TestAttackNewSelectionCachedThenOriginDiffers).
func TestAttackSharedCacheOtherOriginNewSelection(t *testing.T) {
	evil, real := appWorld(t, "evil"), appWorld(t, "real")
	cfg := "module \"app\" {\n  source  = \"" + installtest.RegistryHost + "/acme/app/cloud\"\n  version = \"1.0.0\"\n}\n"
	run := func(t *testing.T, first, second *cache.Cache) {
		one := t.TempDir()
		writeFiles(t, one, map[string]string{"main.tf": cfg})
		initAndWrite(t, install.Options{Dir: one, Source: evil.Source, Cache: first})
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{"main.tf": cfg})
		initAndWrite(t, install.Options{Dir: dir, Source: real.Source, Cache: second})
		b, err := os.ReadFile(filepath.Join(dir, ".terraform", "modules", "app", "main.tf"))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != "# real\n" {
			t.Errorf("installed %q, from the other origin", b)
		}
		if readLock(t, dir) == readLock(t, one) {
			t.Errorf("the lock records the other origin's package:\n%s", readLock(t, dir))
		}
	}
	t.Run("two processes", func(t *testing.T) {
		d := t.TempDir()
		run(t, openCacheIn(d), openCacheIn(d))
	})
	t.Run("one Cache", func(t *testing.T) {
		c := openCache(t)
		run(t, c, c)
	})
}
