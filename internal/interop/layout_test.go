package interop

import (
	"os"
	"strings"
	"testing"
)

// TestInteropLayout: issue 13 item 9. The install directories tflock makes
// have tofu's modes (.terraform/providers and .terraform/modules 0755, and
// every directory and file of the provider packages as tofu makes them),
// and a configuration with nothing to lock gets no lock file from either
// tool.
func TestInteropLayout(t *testing.T) {
	tofu := tool(t, "TFLOCK_TOFU", "tofu")
	w := newWorld(t)
	w.config(map[string]string{"main.tf": providersTF + "\n" + w.modulesTF()})
	w.run(0, tofu, "init", "-input=false", "-no-color")
	theirs := w.modes(".terraform/providers")
	theirModules := w.modes(".terraform/modules")
	w.removeInstall()
	w.tflock(0)
	mine := w.modes(".terraform/providers")
	mineModules := w.modes(".terraform/modules")
	for p, m := range theirs {
		if strings.HasSuffix(p, ".lock") {
			continue // tofu's own install locks
		}
		if got, ok := mine[p]; !ok {
			t.Errorf("providers/%s: tofu installs it (%v), tflock does not", p, m)
		} else if got != m {
			t.Errorf("providers/%s: mode %v, tofu's %v", p, got, m)
		}
	}
	for _, p := range []string{".", "vpc", "network", "storage", "modules.json"} {
		if mineModules[p] != theirModules[p] {
			t.Errorf("modules/%s: mode %v, tofu's %v", p, mineModules[p], theirModules[p])
		}
	}

	// Nothing to lock: no lock file.
	w.removeInstall()
	if err := os.Remove(w.path("main.tf")); err != nil {
		t.Fatal(err)
	}
	w.config(map[string]string{
		"main.tf":             "module \"app\" {\n  source = \"./modules/app\"\n}\n",
		"modules/app/main.tf": "output \"x\" {\n  value = 1\n}\n",
	})
	w.run(0, tofu, "init", "-input=false", "-no-color")
	if _, err := os.Stat(w.path(".terraform.lock.hcl")); !os.IsNotExist(err) {
		t.Fatalf("tofu wrote a lock file for nothing to lock (stat: %v); the test's premise is wrong", err)
	}
	w.removeInstall()
	out := w.tflock(0)
	if _, err := os.Stat(w.path(".terraform.lock.hcl")); !os.IsNotExist(err) {
		t.Errorf("tflock wrote a lock file for nothing to lock (stat: %v)\n%s", err, out)
	}
	if !strings.Contains(out, "Nothing to lock") {
		t.Errorf("tflock output does not say there is nothing to lock:\n%s", out)
	}
}
