package interop

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/tflock/tflock/lockfile"

	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// providersTF requires the two providers of the installtest registry.
const providersTF = `terraform {
  required_providers {
    cloud = {
      source  = "registry.example.test/acme/cloud"
      version = "~> 1.0"
    }
    dns = {
      source  = "registry.example.test/acme/dns"
      version = ">= 2.0.0"
    }
  }
}
`

// modulesTF calls a registry module, a git module pinned to a tag and an
// OCI module pinned to a tag: the module sources every tool accepts.
func (w *world) modulesTF() string {
	return fmt.Sprintf(`module "vpc" {
  source  = "registry.example.test/acme/vpc/cloud"
  version = "~> 1.0"
}

module "network" {
  source = "%s"
}

module "storage" {
  source = "oci://%s/modules/storage?tag=1.0.0"
  name   = "demo"
}
`, w.modulesTFNetwork(), w.ociHost)
}

// parseLock parses lock file bytes, failing the test on error.
func parseLock(t testing.TB, b []byte) *lockfile.File {
	t.Helper()
	lf, err := lockfile.Parse(b, ".terraform.lock.hcl")
	if err != nil {
		t.Fatal(err)
	}
	return lf
}

// withoutModules is a lock file's bytes without its module blocks, as tofu
// 1.12 and terraform write it.
func withoutModules(t *testing.T, b []byte) []byte {
	t.Helper()
	lf := parseLock(t, b)
	var calls []string
	for m := range lf.Modules() {
		calls = append(calls, m.Path)
	}
	for _, c := range calls {
		lf.RemoveModule(c)
	}
	return lf.Bytes()
}

// markModules drops a file into each installed remote module directory: a
// tool that reinstalls the module removes it.
func (w *world) markModules(calls ...string) {
	w.t.Helper()
	for _, c := range calls {
		writeFile(w.t, w.path(".terraform/modules/"+c+"/interop-marker"), "left by the test\n")
	}
}

// modulesTFNetwork is the git source of the network module in modulesTF.
func (w *world) modulesTFNetwork() string { return installtest.Network + "?ref=v1.0.0" }

// initKeeps runs "NAME init" on the directory tflock installed and checks
// that the tool keeps what tflock made: the lock file byte for byte (one
// warning about its module blocks), nothing downloaded (provider package,
// module archive, OCI manifest or blob), no module reinstalled (a marker
// file is dropped into each call's directory first) and the install
// directory unchanged: the modules.json tflock wrote is reused.
func (w *world) initKeeps(name, bin string, calls ...string) {
	w.t.Helper()
	lock := w.read(".terraform.lock.hcl")
	w.markModules(calls...)
	before := w.snapshot(".terraform")
	downloads, fetches := w.registryDownloads(), w.ociFetches()
	out := w.run(0, bin, "init", "-input=false", "-no-color")
	if got := w.read(".terraform.lock.hcl"); !bytes.Equal(got, lock) {
		w.t.Errorf("%s changed the lock file tflock wrote\n--- tflock\n%s\n--- after %s init\n%s", name, lock, name, got)
	}
	if n := strings.Count(out, "Dependency locks for modules are not yet supported"); n != 1 {
		w.t.Errorf("%s warned %d times about module blocks, want once:\n%s", name, n, out)
	}
	if d := w.registryDownloads() - downloads; d != 0 {
		w.t.Errorf("%s downloaded %d packages from the registry after tflock:\n%s", name, d, out)
	}
	if d := w.ociFetches() - fetches; d != 0 {
		w.t.Errorf("%s fetched %d OCI manifests or blobs after tflock:\n%s", name, d, out)
	}
	if d := diffSnapshots(before, w.snapshot(".terraform")); d != "" {
		w.t.Errorf("%s init changed the install directory tflock made:\n%s\n%s", name, d, out)
	}
}

// TestInteropTflockThenTofu: tflock locks and installs, then "tofu init"
// on the same directory keeps the lock file byte for byte (module blocks:
// one warning), downloads nothing (no provider package, module archive,
// OCI blob; no module reinstalled: the modules.json tflock wrote is
// reused) and leaves the install directory as it was. A second tflock run
// prints the same output as the first re-run.
func TestInteropTflockThenTofu(t *testing.T) {
	tofu := tool(t, "TFLOCK_TOFU", "tofu")
	w := newWorld(t)
	w.config(map[string]string{"main.tf": providersTF + "\n" + w.modulesTF()})
	w.tflock(0)
	lock := w.read(".terraform.lock.hcl")
	lf := parseLock(t, lock)
	for _, call := range []string{"vpc", "network", "storage"} {
		if lf.Module(call) == nil {
			t.Errorf("tflock locked no module %q:\n%s", call, lock)
		}
	}
	again := w.tflock(0)
	for _, want := range []string{"0 version lists fetched, 0 packages downloaded.", "No changes to "} {
		if !strings.Contains(again, want) {
			t.Errorf("tflock re-run output lacks %q:\n%s", want, again)
		}
	}
	if third := w.tflock(0); third != again {
		t.Errorf("tflock re-run output is not stable:\n--- second run\n%s\n--- third run\n%s", again, third)
	}

	w.initKeeps("tofu", tofu, "vpc", "network", "storage")
}

// TestInteropRegistryLocksIdentical: tflock and "tofu init", each on an
// empty directory, write the same bytes for the registry's providers; for
// a configuration with modules, tofu's file is tflock's without the module
// blocks. Against a registry (not tofu's default one) that reports every
// platform's h1: in OpenTofu 1.12's packages field too: tofu 1.12.6
// records the installed platform's h1: only, and so does tflock's init
// (TestInteropHashSourcesRegistry has the default registry, where both
// record them all).
func TestInteropRegistryLocksIdentical(t *testing.T) {
	tofu := tool(t, "TFLOCK_TOFU", "tofu")
	w := newWorld(t)
	for _, tc := range []struct {
		name, tf string
	}{
		{"providers", providersTF},
		{"providers and modules", providersTF + "\n" + w.modulesTF()},
	} {
		mine, theirs := w.bothFresh(tofu, tc.tf)
		if want := withoutModules(t, mine); !bytes.Equal(theirs, want) {
			t.Errorf("%s: tofu's lock file differs from tflock's (module blocks left out)\n--- tflock\n%s\n--- tofu\n%s", tc.name, want, theirs)
		}
		if tc.tf == providersTF && !bytes.Equal(theirs, mine) {
			t.Errorf("%s: lock files differ\n--- tflock\n%s\n--- tofu\n%s", tc.name, mine, theirs)
		}
	}

	wp := newWorldWith(t, installtest.DefaultFixtures(), registrytest.Options{Packages: true})
	mine, theirs := wp.bothFresh(tofu, providersTF)
	if !bytes.Equal(mine, theirs) {
		t.Errorf("with the packages field, lock files differ (tflock %d h1: hashes, tofu %d)\n--- tflock\n%s\n--- tofu\n%s", bytes.Count(mine, []byte(`"h1:`)), bytes.Count(theirs, []byte(`"h1:`)), mine, theirs)
	}
}

// bothFresh writes the configuration tf, runs tflock then tofu init, each
// on an empty directory, and returns the lock file each wrote.
func (w *world) bothFresh(tofu, tf string) (mine, theirs []byte) {
	w.t.Helper()
	w.removeInstall()
	w.config(map[string]string{"main.tf": tf})
	w.tflock(0)
	mine = w.read(".terraform.lock.hcl")
	w.removeInstall()
	w.run(0, tofu, "init", "-input=false", "-no-color")
	return mine, w.read(".terraform.lock.hcl")
}
