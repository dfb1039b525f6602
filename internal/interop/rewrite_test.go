package interop

import (
	"slices"
	"strings"
	"testing"

	"github.com/tflock/tflock/source"
)

// TestInteropRewriteThenTflock: tflock locks modules, then "tofu providers
// lock" rewrites the lock file and drops the module blocks (as every tofu
// 1.12 write does), then tflock runs again: each module keeps the
// selection it was installed at (the registry module's version, the git
// module's commit read from its checkout, the same hashes), reported as
// re-recorded, and tofu accepts the result (issue 13 item 2).
func TestInteropRewriteThenTflock(t *testing.T) {
	tofu := tool(t, "TFLOCK_TOFU", "tofu")
	w := newWorld(t)
	w.config(map[string]string{"main.tf": providersTF + "\n" + w.modulesTF()})
	w.tflock(0)
	first := parseLock(t, w.read(".terraform.lock.hcl"))

	w.run(0, tofu, "providers", "lock", "-no-color", "-platform="+source.CurrentPlatform.String())
	rewritten := parseLock(t, w.read(".terraform.lock.hcl"))
	for m := range rewritten.Modules() {
		t.Fatalf("tofu providers lock kept module %q: this test needs the rewrite that drops them", m.Path)
	}

	out := w.tflock(0)
	again := parseLock(t, w.read(".terraform.lock.hcl"))
	for _, call := range []string{"vpc", "network", "storage"} {
		was, now := first.Module(call), again.Module(call)
		if now == nil {
			t.Errorf("module %q not re-recorded:\n%s", call, out)
			continue
		}
		if now.Version != was.Version || now.Commit != was.Commit || !slices.Equal(now.Hashes, was.Hashes) {
			t.Errorf("module %q re-recorded as %+v, want the installed selection %+v", call, now, was)
		}
		if !strings.Contains(out, `module "`+call+`": re-recorded`) {
			t.Errorf("the change of module %q is not reported as re-recorded:\n%s", call, out)
		}
	}
	w.run(0, tofu, "init", "-input=false", "-no-color")
}
