package interop

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// TestInteropProvidersLockSequence runs what a user runs around a
// providers lock, against a registry without the packages field (every
// platform's package downloaded): tflock's providers lock of one
// provider; the configuration edited to add a second and tflock's
// providers lock again, which writes the file tofu's providers lock
// writes from scratch; stock tofu's init on that lock file (accepted,
// left unchanged); tflock's init after tofu's (tofu's install kept: no
// download); then, with the install removed, tflock's init cold
// (providers lock keeps no package: this platform's are downloaded
// once) and warm (none).
func TestInteropProvidersLockSequence(t *testing.T) {
	tofu := tool(t, "TFLOCK_TOFU", "tofu")
	w := newWorldWith(t, installtest.DefaultFixtures(), registrytest.Options{})
	plats := installtest.Platforms()
	var targs, largs []string
	for _, p := range plats {
		targs = append(targs, "-platform="+p)
		largs = append(largs, "-platform", p)
	}
	cache := filepath.Join(w.home, "tflock-cache")
	lockArgs := append(append([]string{"providers-lock", "-cache-dir", cache}, largs...), w.dir)
	cloudOnly := strings.Replace(providersTF, "    dns = {\n      source  = \"registry.example.test/acme/dns\"\n      version = \">= 2.0.0\"\n    }\n", "", 1)
	if cloudOnly == providersTF {
		t.Fatal("the configuration without dns is the same as with it")
	}

	// One provider, then the configuration edited and locked again.
	w.config(map[string]string{"main.tf": cloudOnly})
	w.run(0, tflockBinary(t), lockArgs...)
	first := w.read(".terraform.lock.hcl")
	if bytes.Contains(first, []byte("acme/dns")) {
		t.Fatalf("the lock of cloud alone names dns:\n%s", first)
	}
	w.config(map[string]string{"main.tf": providersTF})
	w.run(0, tflockBinary(t), lockArgs...)
	mine := w.read(".terraform.lock.hcl")
	cloud := first[bytes.Index(first, []byte(`provider "registry.example.test/acme/cloud"`)):]
	if !bytes.Contains(mine, cloud) {
		t.Errorf("locking again after the edit changed cloud's entry\n--- before\n%s\n--- after\n%s", first, mine)
	}
	if err := os.Remove(w.path(".terraform.lock.hcl")); err != nil {
		t.Fatal(err)
	}
	w.run(0, tofu, append([]string{"providers", "lock", "-no-color"}, targs...)...)
	if theirs := w.read(".terraform.lock.hcl"); !bytes.Equal(mine, theirs) {
		t.Fatalf("tflock's lock after the edit differs from tofu's from scratch\n--- tflock\n%s\n--- tofu\n%s", mine, theirs)
	}

	// tofu init on the lock file, then tflock init.
	w.run(0, tofu, "init", "-input=false", "-no-color")
	if got := w.read(".terraform.lock.hcl"); !bytes.Equal(got, mine) {
		t.Errorf("tofu init changed the lock file\n--- before\n%s\n--- after\n%s", mine, got)
	}
	before := w.providerDownloads()
	w.tflock(0)
	if got := w.read(".terraform.lock.hcl"); !bytes.Equal(got, mine) {
		t.Errorf("tflock init after tofu init changed the lock file\n--- before\n%s\n--- after\n%s", mine, got)
	}
	if n := w.providerDownloads() - before; n != 0 {
		t.Errorf("tflock init after tofu init downloaded %d packages, want 0 (tofu's install matches the lock)", n)
	}

	// Cold and warm tflock init from the lock file alone.
	for _, round := range []struct {
		name string
		want int
	}{{"cold", 2}, {"warm", 0}} {
		if err := os.RemoveAll(w.path(".terraform")); err != nil {
			t.Fatal(err)
		}
		before := w.providerDownloads()
		w.tflock(0)
		if got := w.read(".terraform.lock.hcl"); !bytes.Equal(got, mine) {
			t.Errorf("%s tflock init changed the lock file\n--- before\n%s\n--- after\n%s", round.name, mine, got)
		}
		if n := w.providerDownloads() - before; n != round.want {
			t.Errorf("%s tflock init downloaded %d packages, want %d", round.name, n, round.want)
		}
	}
}
