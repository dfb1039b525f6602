package interop

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/tflock/tflock/resolve/install"
)

// TestInteropTofuThenTflock: "tofu init" first, then tflock on the same
// directory: the provider blocks tofu wrote are kept byte for byte (a
// provider-only configuration: the whole file, and tflock says "No
// changes"), tflock adds its module blocks, and a following "tofu init"
// accepts the result without changing it; with an empty cache, tflock
// reuses the provider packages and the modules (registry, git with its
// .git, OCI) tofu installed, with no download, and deletes none of tofu's
// files (issue 13 item 1).
func TestInteropTofuThenTflock(t *testing.T) {
	tofu := tool(t, "TFLOCK_TOFU", "tofu")
	w := newWorld(t)

	// Providers only: the file tofu wrote is the file tflock keeps.
	w.config(map[string]string{"main.tf": providersTF})
	w.run(0, tofu, "init", "-input=false", "-no-color")
	theirs := w.read(".terraform.lock.hcl")
	out := w.tflock(0)
	if !strings.Contains(out, "No changes to ") {
		t.Errorf("tflock after tofu init (providers only) reports changes:\n%s", out)
	}
	if got := w.read(".terraform.lock.hcl"); !bytes.Equal(got, theirs) {
		t.Errorf("tflock changed tofu's lock file\n--- tofu\n%s\n--- tflock\n%s", theirs, got)
	}

	// With modules: tofu's provider blocks kept, module blocks added. The
	// tflock cache is empty, as on a machine where only tofu ran.
	w.removeInstall()
	w.removeCache()
	w.config(map[string]string{"main.tf": providersTF + "\n" + w.modulesTF()})
	w.run(0, tofu, "init", "-input=false", "-no-color")
	theirs = w.read(".terraform.lock.hcl")
	tofuProviders := w.snapshot(".terraform/providers")
	providers, modules, fetches := w.providerDownloads(), w.moduleDownloads(), w.ociFetches()
	out = w.tflock(0)
	mine := w.read(".terraform.lock.hcl")
	if got := withoutModules(t, mine); !bytes.Equal(got, theirs) {
		t.Errorf("tflock changed the provider blocks tofu wrote\n--- tofu\n%s\n--- tflock, module blocks left out\n%s\n%s", theirs, got, out)
	}
	lf := parseLock(t, mine)
	for _, call := range []string{"vpc", "network", "storage"} {
		if lf.Module(call) == nil {
			t.Errorf("tflock did not lock module %q:\n%s", call, mine)
		}
	}
	// Unchanged: both tools agree there is nothing to do.
	if again := w.tflock(0); !strings.Contains(again, "0 version lists fetched, 0 packages downloaded.") || !strings.Contains(again, "No changes to ") {
		t.Errorf("second tflock run changed something:\n%s", again)
	}
	tofuOut := w.run(0, tofu, "init", "-input=false", "-no-color")
	if got := w.read(".terraform.lock.hcl"); !bytes.Equal(got, mine) {
		t.Errorf("tofu init changed tflock's lock file\n--- tflock\n%s\n--- tofu\n%s\n%s", mine, got, tofuOut)
	}

	// Issue 13 item 1: what tofu installed is reused and its files kept.
	if n := w.providerDownloads() - providers; n != 0 {
		t.Errorf("tflock downloaded %d provider packages that tofu had installed", n)
	}
	if n := w.moduleDownloads() - modules; n != 0 {
		t.Errorf("tflock downloaded %d module archives that tofu had installed", n)
	}
	if n := w.ociFetches() - fetches; n != 0 {
		t.Errorf("tflock fetched %d OCI manifests or blobs that tofu had installed", n)
	}
	after := w.snapshot(".terraform/providers")
	var removed []string
	for p := range tofuProviders {
		if _, ok := after[p]; !ok {
			removed = append(removed, p)
		}
	}
	if len(removed) != 0 {
		t.Errorf("tflock removed tofu's files %v", removed)
	}
	if _, err := os.Stat(w.path(".terraform/modules/network/.git")); err != nil {
		t.Errorf("tflock replaced tofu's git checkout of module network by a copy without .git: %v", err)
	}
}

// TestInteropReadOnlyAfterTofu: issue 13 item 3. On a CI checkout (no
// .terraform) whose lock file tofu wrote (providers only), tflock
// -lockfile=readonly installs the modules, warns once and keeps the file
// byte for byte; tofu -lockfile=readonly then accepts what tflock
// installed. Once the lock file has module blocks, a module call it lacks
// fails the read-only run, naming the call.
func TestInteropReadOnlyAfterTofu(t *testing.T) {
	tofu := tool(t, "TFLOCK_TOFU", "tofu")
	w := newWorld(t)
	w.config(map[string]string{"main.tf": providersTF + "\n" + w.modulesTF()})
	w.run(0, tofu, "init", "-input=false", "-no-color")
	theirs := w.read(".terraform.lock.hcl")
	if err := os.RemoveAll(w.path(".terraform")); err != nil {
		t.Fatal(err)
	}
	out := w.tflock(0, "-lockfile=readonly")
	if n := strings.Count(out, install.ModulesNotLockedWarning); n != 1 {
		t.Errorf("read-only tflock warned %d times that modules are not locked, want once:\n%s", n, out)
	}
	if got := w.read(".terraform.lock.hcl"); !bytes.Equal(got, theirs) {
		t.Errorf("read-only tflock changed the lock file\n--- tofu\n%s\n--- after\n%s", theirs, got)
	}
	for _, call := range []string{"vpc", "network", "storage"} {
		if _, err := os.Stat(w.path(".terraform/modules/" + call + "/main.tf")); err != nil {
			t.Errorf("module %q not installed: %v\n%s", call, err, out)
		}
	}
	w.run(0, tofu, "init", "-lockfile=readonly", "-input=false", "-no-color")

	// Module locking adopted: a call the lock file lacks fails.
	w.tflock(0)
	locked := w.read(".terraform.lock.hcl")
	w.config(map[string]string{"more.tf": "module \"network2\" {\n  source = \"" + w.modulesTFNetwork() + "\"\n}\n"})
	out = w.tflock(1, "-lockfile=readonly")
	if !strings.Contains(out, "lock file is read-only") || !strings.Contains(out, `module "network2"`) {
		t.Errorf("read-only tflock with an unlocked call: want a read-only error naming module \"network2\":\n%s", out)
	}
	if got := w.read(".terraform.lock.hcl"); !bytes.Equal(got, locked) {
		t.Errorf("a refused read-only run changed the lock file:\n%s", got)
	}
}
