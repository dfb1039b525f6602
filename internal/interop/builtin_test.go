package interop

import (
	"bytes"
	"strings"
	"testing"
)

// TestInteropBuiltInProviders: issue 21 item 3. The addresses OpenTofu
// 1.12.6 marks built-in, terraform.io/builtin/terraform and
// opentofu.org/builtin/terraform (in any spelling of the host), are taken
// as built-in by both tools: nothing is installed or locked for them, and
// the lock files are the same bytes; a built-in address of a type tofu
// does not have (opentofu.org/builtin/null) is an error for both, where
// nothing is asked of a registry at opentofu.org.
func TestInteropBuiltInProviders(t *testing.T) {
	tofu := tool(t, "TFLOCK_TOFU", "tofu")
	w := newWorld(t)
	for _, src := range []string{"terraform.io/builtin/terraform", "opentofu.org/builtin/terraform", "OpenTofu.ORG/builtin/terraform"} {
		tf := strings.Replace(providersTF, "  required_providers {\n", "  required_providers {\n    terraform = {\n      source = \""+src+"\"\n    }\n", 1)
		mine, theirs := w.bothFresh(tofu, tf)
		if !bytes.Equal(mine, theirs) {
			t.Errorf("%s: lock files differ\n--- tflock\n%s\n--- tofu\n%s", src, mine, theirs)
		}
		if bytes.Contains(mine, []byte("builtin")) {
			t.Errorf("%s: the built-in provider was locked:\n%s", src, mine)
		}
	}
	tf := strings.Replace(providersTF, "  required_providers {\n", "  required_providers {\n    null = {\n      source = \"opentofu.org/builtin/null\"\n    }\n", 1)
	w.removeInstall()
	w.config(map[string]string{"main.tf": tf})
	out := w.tflock(1)
	if !strings.Contains(strings.Join(strings.Fields(out), " "), `no built-in provider named "null"`) {
		t.Errorf("tflock's error does not name the built-in provider:\n%s", out)
	}
	out = w.run(1, tofu, "init", "-input=false", "-no-color")
	if !strings.Contains(strings.Join(strings.Fields(out), " "), `no built-in provider named "null"`) {
		t.Errorf("tofu's error does not name the built-in provider:\n%s", out)
	}
}
