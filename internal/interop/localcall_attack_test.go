package interop

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tflock/tflock/resolve/install"
)

// TestInteropCheckLocalCallsOfTofuInstall: tofu, tflock, tofu. tofu
// installs a registry module whose package calls local modules (below
// its subdirectory and beside it) and a local module of the root; tflock
// locks it; Check accepts tofu's install as it is (modules.json records a
// local call's directory as the call's source joined to its caller's),
// and rejects it once modules.json sends a local call elsewhere (tofu
// loads a local module from the directory modules.json records).
func TestInteropCheckLocalCallsOfTofuInstall(t *testing.T) {
	tofu := tool(t, "TFLOCK_TOFU", "tofu")
	w := monoWorld(t, map[string]string{
		"modules/good/main.tf":        "module \"n\" {\n  source = \"./nested\"\n}\nmodule \"s\" {\n  source = \"../common/\"\n}\n",
		"modules/good/nested/main.tf": "output \"which\" {\n  value = \"nested\"\n}\n",
		"modules/common/main.tf":      "output \"which\" {\n  value = \"common\"\n}\n",
	})
	w.config(map[string]string{
		"main.tf":        "module \"app\" {\n  source  = \"registry.example.test/acme/mono/cloud\"\n  version = \"1.0.0\"\n}\nmodule \"local\" {\n  source = \"./mods/x\"\n}\n",
		"mods/x/main.tf": "output \"which\" {\n  value = \"x\"\n}\n",
		"evil/main.tf":   "output \"which\" {\n  value = \"evil\"\n}\n",
	})
	w.run(0, tofu, "init", "-input=false", "-no-color")
	theirs := string(w.read(".terraform/modules/modules.json"))
	w.tflock(0)
	w.removeInstall()
	w.run(0, tofu, "init", "-input=false", "-no-color")
	if cr, err := install.Check(context.Background(), install.CheckOptions{Dir: w.dir}); err != nil || len(cr.Problems) > 0 {
		t.Fatalf("Check of tofu's install: %v %v\nmodules.json: %s", err, cr.Problems, theirs)
	}
	man := string(w.read(".terraform/modules/modules.json"))
	for _, dir := range []string{`".terraform/modules/app/modules/good/nested"`, `".terraform/modules/app/modules/common"`, `"mods/x"`} {
		if !strings.Contains(man, dir) {
			t.Errorf("tofu's modules.json has no %s:\n%s", dir, man)
		}
		writeFile(t, w.path(".terraform/modules/modules.json"), strings.Replace(man, `"Dir":`+dir, `"Dir":"evil"`, 1))
		var me *install.ModuleMismatchError
		if _, err := install.Check(context.Background(), install.CheckOptions{Dir: w.dir}); !errors.As(err, &me) {
			t.Errorf("Check with %s sent to evil/: %v, want a *ModuleMismatchError", dir, err)
		}
	}
}
