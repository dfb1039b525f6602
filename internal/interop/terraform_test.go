package interop

import (
	"bytes"
	"testing"

	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// terraformTF is a configuration terraform loads: the providers, a registry
// module and a pinned git module (terraform has no OCI module source).
func (w *world) terraformTF() string {
	return providersTF + `
module "vpc" {
  source  = "registry.example.test/acme/vpc/cloud"
  version = "~> 1.0"
}

module "network" {
  source = "` + w.modulesTFNetwork() + `"
}
`
}

// newTerraformWorld is a world whose registry hands out module packages
// with X-Terraform-Get (terraform does not read the JSON location).
func newTerraformWorld(t *testing.T) *world {
	t.Helper()
	fx := installtest.DefaultFixtures()
	for i := range fx.Modules {
		for j := range fx.Modules[i].Versions {
			fx.Modules[i].Versions[j].Delivery = registrytest.DeliverHeader
		}
	}
	return newWorldWith(t, fx, registrytest.Options{})
}

// TestInteropTflockThenTerraform: tflock locks and installs, then
// "terraform init" keeps the lock file byte for byte (module blocks: one
// warning), downloads nothing and leaves the install directory as it was.
func TestInteropTflockThenTerraform(t *testing.T) {
	terraform := tool(t, "TFLOCK_TERRAFORM", "terraform")
	w := newTerraformWorld(t)
	w.config(map[string]string{"main.tf": w.terraformTF()})
	w.tflock(0)
	w.initKeeps("terraform", terraform, "vpc", "network")
}

// TestInteropTerraformThenTflock: "terraform init" first, then tflock. What
// holds today: the provider selections and hashes terraform recorded are
// kept (tflock adds module blocks) and terraform accepts the result. What
// issue 13 item 1 asks is checked as a known failure until it all holds:
// the file keeps Terraform's header, and with an empty cache nothing
// terraform installed (provider packages, modules) is downloaded again.
func TestInteropTerraformThenTflock(t *testing.T) {
	terraform := tool(t, "TFLOCK_TERRAFORM", "terraform")
	w := newTerraformWorld(t)
	w.config(map[string]string{"main.tf": w.terraformTF()})
	w.run(0, terraform, "init", "-input=false", "-no-color")
	theirs := w.read(".terraform.lock.hcl")
	providers, modules := w.providerDownloads(), w.moduleDownloads()
	out := w.tflock(0)
	mine := w.read(".terraform.lock.hcl")
	lf := parseLock(t, mine)
	for _, call := range []string{"vpc", "network"} {
		if lf.Module(call) == nil {
			t.Errorf("tflock did not lock module %q:\n%s", call, mine)
		}
	}
	// The provider blocks, header aside.
	same := parseLock(t, withoutModules(t, mine))
	same.SetHeader(parseLock(t, theirs).Header())
	if !bytes.Equal(same.Bytes(), theirs) {
		t.Errorf("tflock changed the provider blocks terraform wrote\n--- terraform\n%s\n--- tflock\n%s\n%s", theirs, mine, out)
	}
	tfOut := w.run(0, terraform, "init", "-input=false", "-no-color")
	if got := w.read(".terraform.lock.hcl"); !bytes.Equal(got, mine) {
		t.Errorf("terraform init changed tflock's lock file\n--- tflock\n%s\n--- terraform\n%s\n%s", mine, got, tfOut)
	}

	k := expectFailures(t, "issue 13 item 1: tflock after terraform keeps the file's flavour and reuses what terraform installed")
	k.check(bytes.Equal(withoutModules(t, mine), theirs), "Terraform's header replaced by tofu's")
	k.check(w.providerDownloads() == providers, "tflock downloaded %d provider packages that terraform had installed", w.providerDownloads()-providers)
	k.check(w.moduleDownloads() == modules, "tflock downloaded %d module archives that terraform had installed", w.moduleDownloads()-modules)
	k.done()
}
