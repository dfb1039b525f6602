package interop

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// TestInteropProvidersLock: "tofu providers lock -platform=X…" and tflock's
// "providers-lock -platform X…" write the same file, against a registry
// that reports every platform's h1: (OpenTofu 1.12's packages field) and
// one that does not: the h1: of the platforms asked for only (issue 13
// item 9), the zh: of every platform.
func TestInteropProvidersLock(t *testing.T) {
	tofu := tool(t, "TFLOCK_TOFU", "tofu")
	for _, packages := range []bool{true, false} {
		w := newWorldWith(t, installtest.DefaultFixtures(), registrytest.Options{Packages: packages})
		w.config(map[string]string{"main.tf": providersTF})
		plats := installtest.Platforms()[1:] // not the current platform
		var targs, largs []string
		for _, p := range plats {
			targs = append(targs, "-platform="+p)
			largs = append(largs, "-platform", p)
		}
		tofuOut := w.run(0, tofu, append([]string{"providers", "lock", "-no-color"}, targs...)...)
		theirs := w.read(".terraform.lock.hcl")
		t.Logf("packages field %v: tofu providers lock downloaded %d packages", packages, w.registryDownloads())
		w.removeInstall()
		args := append(append([]string{"providers-lock", "-cache-dir", filepath.Join(w.home, "tflock-cache")}, largs...), w.dir)
		out := w.run(0, tflockBinary(t), args...)
		if !strings.Contains(out, "Locking providers for "+strings.Join(plats, ", ")) {
			t.Errorf("packages field %v: tflock output does not name the platforms:\n%s", packages, out)
		}
		if mine := w.read(".terraform.lock.hcl"); !bytes.Equal(mine, theirs) {
			t.Errorf("packages field %v: lock files differ\n--- tofu\n%s\n--- tflock\n%s\n%s\n%s", packages, theirs, mine, tofuOut, out)
		}
	}
}
