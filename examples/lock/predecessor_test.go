package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/address"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// A configuration moved from Terraform: its lock file (Terraform's header)
// holds hashicorp/aws of Terraform's registry at 1.0.0, the configuration
// allows newer. As tofu does, the locked version is kept under OpenTofu's
// address, with a warning.
func TestPredecessorLock(t *testing.T) {
	var fx registrytest.Fixtures
	plats := []string{source.CurrentPlatform.String()}
	hosts := []string{address.DefaultRegistryHost, install.TerraformRegistryHost}
	for _, h := range hosts {
		fx.Providers = append(fx.Providers, registrytest.Provider{Addr: h + "/hashicorp/aws", Versions: []registrytest.ProviderVersion{
			{Version: "1.0.0", Platforms: plats}, {Version: "1.1.0", Platforms: plats},
		}})
	}
	srv := registrytest.New(t, fx, registrytest.Options{Hosts: hosts})
	registryTestClient = srv.Client()
	defer func() { registryTestClient = nil }()

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "main.tf"), `terraform {
  required_providers {
    aws = { source = "hashicorp/aws", version = ">= 1.0.0" }
  }
}
`)
	old := install.TerraformRegistryHost + "/hashicorp/aws"
	writeFile(t, filepath.Join(dir, ".terraform.lock.hcl"), `# This file is maintained automatically by "terraform init".
# Manual edits may be lost in future updates.

provider "`+old+`" {
  version     = "1.0.0"
  constraints = ">= 1.0.0"
}
`)
	t.Setenv("TF_CLI_CONFIG_FILE", filepath.Join(dir, "none.tfrc"))
	t.Setenv("HOME", t.TempDir())
	out, code := runLock(t, "-cache-dir", t.TempDir(), dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if want := "Warning: Dependency lock file entries automatically updated: " + old + " => " + address.DefaultRegistryHost + "/hashicorp/aws (1.0.0)"; strings.Count(out, want) != 1 {
		// Once: Init reports it as an event and in its result (issue 23
		// item 5).
		t.Errorf("output has %q %d times, want once:\n%s", want, strings.Count(out, want), out)
	}
	lf, err := lockfile.ParseFile(filepath.Join(dir, ".terraform.lock.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	if p := lf.Provider(mustProvider(address.DefaultRegistryHost + "/hashicorp/aws")); p == nil || p.Version.String() != "1.0.0" || len(p.Hashes) == 0 {
		t.Errorf("aws = %+v, want the locked 1.0.0 with hashes\n%s", p, out)
	}
	if lf.Provider(mustProvider(old)) != nil {
		t.Errorf("the predecessor's entry is still there\n%s", out)
	}
	b, _ := os.ReadFile(filepath.Join(dir, ".terraform.lock.hcl"))
	if !strings.HasPrefix(string(b), `# This file is maintained automatically by "terraform init".`) {
		t.Errorf("the file's header changed:\n%s", b)
	}
}
