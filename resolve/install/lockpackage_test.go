package install_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/address"
)

// TestLockEntryPackageIdentity: the package that a lock change's event and
// Check's problems name for a module is built from the lock entry's typed
// address: its Source is the package address (the call's own "//good" is
// no part of it), its Addr the typed address (but in an event, whose
// package is redacted), and its Subdir the
// subdirectory the entry's "subdir" records, never "//subdir" in Source.
func TestLockEntryPackageIdentity(t *testing.T) {
	w := monoWorld(t, map[string]string{"app": "modules"})
	dir := t.TempDir()
	pkgAddr := installtest.RegistryHost + "/acme/app/cloud"
	call := pkgAddr + "//good"
	writeFiles(t, dir, map[string]string{"main.tf": "module \"app\" {\n  source  = \"" + call + "\"\n  version = \"1.0.0\"\n}\n"})
	rec := &recorder{}
	initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: openCache(t), Events: rec})
	lock := readLock(t, dir)
	if !strings.Contains(lock, `source      = "`+call+`"`) || !strings.Contains(lock, `subdir      = "modules"`) {
		t.Fatalf("lock:\n%s", lock)
	}
	if got := installedDirs(t, dir)["app"]; got != ".terraform/modules/app/modules/good" {
		t.Fatalf("installed %s", got)
	}
	want := func(what string, pkg source.Package, typed bool) {
		t.Helper()
		m, ok := pkg.(source.ModulePackage)
		if !ok {
			t.Fatalf("%s: package %#v, want a module package", what, pkg)
		}
		if m.Source != pkgAddr || strings.Contains(m.Source, "//") {
			t.Errorf("%s: Source %q, want the package address %q", what, m.Source, pkgAddr)
		}
		if m.Subdir != "modules" {
			t.Errorf("%s: Subdir %q, want the lock's subdir %q", what, m.Subdir, "modules")
		}
		if r, ok := m.Addr.(address.Registry); typed && (!ok || r.Package() != m.Source || r.Subdir != "") {
			t.Errorf("%s: Addr %#v, want the typed package address", what, m.Addr)
		}
		if m.Version.String() != "1.0.0" {
			t.Errorf("%s: Version %v", what, m.Version)
		}
	}
	n := 0
	for _, e := range rec.take() {
		if e.Kind == source.EventLockChanged && strings.Contains(e.Detail, "app") {
			n++
			want("Init's lock change", e.Package, false) // an event's package is redacted: no Addr
		}
	}
	if n != 1 {
		t.Errorf("%d lock change events for the module, want 1", n)
	}

	// Check: a constraint the locked version no longer meets.
	writeFiles(t, dir, map[string]string{"main.tf": "module \"app\" {\n  source  = \"" + call + "\"\n  version = \"2.0.0\"\n}\n"})
	res, _ := install.Check(context.Background(), install.CheckOptions{Dir: dir})
	n = 0
	for _, p := range res.Problems {
		if p.Call == "app" {
			n++
			if p.Kind != install.ProblemConstraintsChanged {
				t.Errorf("problem %v, want constraints changed", p)
			}
			want("Check's problem", p.Package, true)
		}
	}
	if n != 1 {
		t.Errorf("%d problems for the module, want 1: %v", n, res.Problems)
	}
}
