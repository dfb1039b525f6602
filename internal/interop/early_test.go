package interop

import (
	"encoding/json"
	"strings"
	"testing"
)

// earlyTF calls the registry module with a source and version built from
// variables, a local and a function (OpenTofu 1.8+ early evaluation).
const earlyTF = providersTF + `
variable "org" {
  default = "nobody"
}
variable "vpc_version" {}
locals {
  host = lower("REGISTRY.EXAMPLE.TEST")
}
module "vpc" {
  source  = "${local.host}/${var.org}/vpc/cloud"
  version = var.vpc_version
}
`

// installedVPC is the modules.json record of the call vpc: its source and
// version as the tool that installed it wrote them.
func (w *world) installedVPC() (source, version string) {
	w.t.Helper()
	var man struct {
		Modules []struct{ Key, Source, Version string }
	}
	if err := json.Unmarshal(w.read(".terraform/modules/modules.json"), &man); err != nil {
		w.t.Fatal(err)
	}
	for _, m := range man.Modules {
		if m.Key == "vpc" {
			return m.Source, m.Version
		}
	}
	w.t.Fatalf("modules.json has no vpc record")
	return "", ""
}

// TestInteropEarlyEvaluation: with the variables given by
// terraform.tfvars, *.auto.tfvars and -var (the -var winning), tflock and
// "tofu init" each on an empty directory install the same module version
// from the same evaluated source, and the provider locks are the same
// bytes; tofu then keeps tflock's lock. Without a value both refuse.
func TestInteropEarlyEvaluation(t *testing.T) {
	tofu := tool(t, "TFLOCK_TOFU", "tofu")
	w := newWorld(t)
	w.config(map[string]string{
		"main.tf":          earlyTF,
		"terraform.tfvars": "org = \"acme\"\n",
		"a.auto.tfvars":    "vpc_version = \"~> 1.0\"\n",
	})
	w.tflock(0, "-var", "vpc_version=1.0.0")
	mine := w.read(".terraform.lock.hcl")
	lf := parseLock(t, mine)
	ml := lf.Module("vpc")
	if ml == nil || ml.Source != "registry.example.test/acme/vpc/cloud" || ml.Version.String() != "1.0.0" || ml.Constraints != "1.0.0" {
		t.Errorf("tflock's vpc lock = %+v, want registry.example.test/acme/vpc/cloud 1.0.0", ml)
	}
	mySrc, myVer := w.installedVPC()

	w.removeInstall()
	w.run(0, tofu, "init", "-input=false", "-no-color", "-var", "vpc_version=1.0.0")
	theirs := w.read(".terraform.lock.hcl")
	if want := withoutModules(t, mine); string(theirs) != string(want) {
		t.Errorf("tofu's lock file differs from tflock's (module blocks left out)\n--- tflock\n%s\n--- tofu\n%s", want, theirs)
	}
	if src, ver := w.installedVPC(); src != mySrc || ver != myVer {
		t.Errorf("tofu installed vpc %s %s, tflock %s %s", src, ver, mySrc, myVer)
	}

	// Without the -var the auto file's "~> 1.0" applies: both pick 1.1.0.
	w.removeInstall()
	w.tflock(0)
	_, myVer = w.installedVPC()
	w.removeInstall()
	w.run(0, tofu, "init", "-input=false", "-no-color")
	if _, ver := w.installedVPC(); ver != myVer || ver != "1.1.0" {
		t.Errorf("with a.auto.tfvars: tofu installed vpc %s, tflock %s, want 1.1.0", ver, myVer)
	}

	// No value at all: both fail, naming the variable.
	w.config(map[string]string{"a.auto.tfvars": "# nothing\n"})
	w.removeInstall()
	out := w.tflock(1)
	if !strings.Contains(out, "var.vpc_version") || !strings.Contains(out, `module "vpc"`) {
		t.Errorf("tflock's error does not name the call and the variable:\n%s", out)
	}
	out = w.run(1, tofu, "init", "-input=false", "-no-color")
	if !strings.Contains(out, "var.vpc_version") {
		t.Errorf("tofu's error does not name the variable:\n%s", out)
	}
}
