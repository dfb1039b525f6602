package install_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/cache/ocitier"
	"github.com/tflock/tflock/source/oci"
	"github.com/tflock/tflock/source/oci/ocitest"
)

// TestAttackOldLockTierOfAnotherModule is TestOldLockCacheOfAnotherModule
// with the package in the remote tier instead of the local cache: a lock
// without "subdir" (the package root) for a registry module whose
// location names modules/good, and a tier that holds the package (one
// h1:) only as another module's, whose location names the root. The tier
// entry does not confirm that this module's location names the root: the
// origin must be asked, and the subdirectory it names is a change (refused
// read-only), never the root installed from the tier. (The tier keys a
// located package's root by its identity: see ocitier's moduleTag.)
func TestAttackOldLockTierOfAnotherModule(t *testing.T) {
	w := monoWorld(t, map[string]string{"app": "modules/good", "other": ""})
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": monoConfig("app")})
	initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: openCache(t)})
	old := strings.Replace(readLock(t, dir), "  subdir      = \"modules/good\"\n", "", 1)
	writeFiles(t, dir, map[string]string{install.LockFileName: old})

	srv := ocitest.New(t, ocitest.ServerOptions{})
	runner := func() *cache.Cache {
		tier, err := ocitier.New("oci://"+srv.Host()+"/fleet", ocitier.Options{OCI: oci.Options{PlainHTTP: true, HTTPClient: srv.Client()}})
		if err != nil {
			t.Fatal(err)
		}
		c, err := cache.Open(t.TempDir(), cache.Options{Remote: tier})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	other := t.TempDir()
	writeFiles(t, other, map[string]string{"main.tf": monoConfig("other")})
	initAndWrite(t, install.Options{Dir: other, Source: w.Source, Cache: runner()})

	freshMachine(t, dir)
	if _, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: runner(), ReadOnly: true}); err == nil || !strings.Contains(err.Error(), "modules/good") {
		t.Errorf("read-only Init: %v, want a refusal naming the subdirectory; installed %v", err, installedDirs(t, dir))
	}
	freshMachine(t, dir)
	res, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: runner()})
	if err != nil || len(res.Changes) != 1 || !strings.Contains(res.Changes[0].String(), "subdir (none) -> modules/good") {
		t.Errorf("Init: %v, changes %v", err, res.Changes)
	}
	if got := installedDirs(t, dir)["app"]; got != ".terraform/modules/app/modules/good" {
		t.Errorf("installed %s", got)
	}
	// The tier still serves the root to the module whose own entry it is.
	freshMachine(t, other)
	src := &counting{src: w.Source}
	if _, err := install.Init(context.Background(), install.Options{Dir: other, Source: src, Cache: runner()}); err != nil {
		t.Fatal(err)
	}
	if n := src.fetches.Load(); n != 0 {
		t.Errorf("%d downloads of the module whose own root entry the tier holds, want the tier to serve it", n)
	}
	if got := installedDirs(t, other)["other"]; got != ".terraform/modules/other" {
		t.Errorf("other installed from %s", got)
	}
}
