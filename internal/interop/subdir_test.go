package interop

import (
	"os"
	"strings"
	"testing"

	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// TestInteropRegistrySubdir: a registry module whose download location
// names a subdirectory of its package ("X-Terraform-Get: ...//modules/good").
// tflock records that subdirectory in the lock ("subdir") and installs it;
// tofu, after tflock, keeps everything as it is, and tofu on its own
// installs the same directory: the lock names what tofu runs.
func TestInteropRegistrySubdir(t *testing.T) {
	tofu := tool(t, "TFLOCK_TOFU", "tofu")
	w := monoWorld(t, map[string]string{
		"main.tf":              "output \"which\" {\n  value = \"root\"\n}\n",
		"modules/good/main.tf": "output \"which\" {\n  value = \"good\"\n}\n",
		"modules/evil/main.tf": "output \"which\" {\n  value = \"evil\"\n}\n",
	})
	w.config(map[string]string{"main.tf": `module "app" {
  source  = "registry.example.test/acme/mono/cloud"
  version = "1.0.0"
}
`})
	const want = ".terraform/modules/app/modules/good"
	installed := func(who string) {
		t.Helper()
		m, err := install.ParseManifest(w.read(".terraform/modules/modules.json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range m.Modules {
			if r.Key == "app" && r.Dir != want {
				t.Errorf("%s installed module app from %s, want %s", who, r.Dir, want)
			}
		}
	}
	w.tflock(0)
	if lock := string(w.read(".terraform.lock.hcl")); !strings.Contains(lock, `subdir      = "modules/good"`) {
		t.Fatalf("tflock did not record the subdirectory:\n%s", lock)
	}
	installed("tflock")
	w.initKeeps("tofu", tofu, "app")
	if err := os.RemoveAll(w.path(".terraform")); err != nil {
		t.Fatal(err)
	}
	w.run(0, tofu, "init", "-input=false", "-no-color")
	installed("tofu")
}

// monoWorld is a world whose registry also serves
// registry.example.test/acme/mono/cloud 1.0.0: a package of the given
// files whose download location names its subdirectory modules/good.
func monoWorld(t *testing.T, files map[string]string) *world {
	t.Helper()
	fx := installtest.DefaultFixtures()
	fx.Modules = append(fx.Modules, registrytest.Module{Addr: installtest.RegistryHost + "/acme/mono/cloud", Versions: []registrytest.ModuleVersion{{
		Version: "1.0.0", Delivery: registrytest.DeliverHeader, Subdir: "modules/good", Files: files,
	}}})
	return newWorldWith(t, fx, registrytest.Options{})
}
