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

// TestInteropTerraformThenTflock: "terraform init" first, then tflock: the
// provider selections and hashes terraform recorded are kept with
// Terraform's header (tflock adds module blocks), terraform accepts the
// result, and with an empty cache nothing terraform installed (provider
// packages, modules) is downloaded again (issue 13 item 1).
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

	// Issue 13 item 1: the file's flavour is kept and what terraform
	// installed is reused.
	if !bytes.Equal(withoutModules(t, mine), theirs) {
		t.Errorf("tflock did not keep terraform's file (header or hashes) beside its module blocks\n--- terraform\n%s\n--- tflock\n%s", theirs, mine)
	}
	if n := w.providerDownloads() - providers; n != 0 {
		t.Errorf("tflock downloaded %d provider packages that terraform had installed", n)
	}
	if n := w.moduleDownloads() - modules; n != 0 {
		t.Errorf("tflock downloaded %d module archives that terraform had installed", n)
	}
}
