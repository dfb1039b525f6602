package install_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/source"
)

// Result.Listed counts each package whose versions were asked of the
// sources once, and EventResolving is emitted once per package: a
// registry module's versions are looked up by the module walk and again by
// Resolve (answered from memory), and were counted and announced twice.
// Cold run, warm re-run, then -upgrade.
func TestListedOncePerPackage(t *testing.T) {
	dir := newConfig(t)
	src := &counting{src: staticFixtures()}
	c := openCacheIn(t.TempDir())
	rec := &recorder{}
	runInit := func(upgrade bool) *install.Result {
		t.Helper()
		res, err := install.Init(context.Background(), install.Options{Dir: dir, Source: src, Cache: c, Events: rec, Resolve: resolve.Options{Upgrade: upgrade}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	check := func(name string, res *install.Result, want []string) {
		t.Helper()
		resolving := map[string]int{}
		for _, e := range rec.take() {
			if e.Kind == source.EventResolving {
				resolving[source.FamilyKey(e.Package)]++
			}
		}
		if res.Listed != len(want) {
			t.Errorf("%s: Listed = %d, want %d (%v)", name, res.Listed, len(want), want)
		}
		if len(resolving) != len(want) {
			t.Errorf("%s: EventResolving for %v, want %v", name, resolving, want)
		}
		for _, k := range want {
			if resolving[k] != 1 {
				t.Errorf("%s: %d EventResolving for %s, want 1", name, resolving[k], k)
			}
		}
	}
	// The configuration asks for aws and random, calls vpc, which needs
	// null and calls subnets: five packages.
	all := []string{
		source.FamilyKey(source.ProviderPackage{Addr: awsAddr}),
		source.FamilyKey(source.ProviderPackage{Addr: randAddr}),
		source.FamilyKey(source.ProviderPackage{Addr: nullAddr}),
		source.FamilyKey(source.ModulePackage{Source: vpcSource}),
		source.FamilyKey(source.ModulePackage{Source: subsSource}),
	}
	cold := runInit(false)
	check("cold", cold, all)
	if _, err := install.WriteLock(filepath.Join(dir, install.LockFileName), cold); err != nil {
		t.Fatal(err)
	}
	check("warm", runInit(false), nil)
	check("upgrade", runInit(true), all)
	if n := src.versions.Load(); n != int64(2*len(all)) {
		t.Errorf("the source was asked %d times for versions in two listing runs, want %d", n, 2*len(all))
	}
}
