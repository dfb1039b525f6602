package install_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/assemble"
	"github.com/tflock/tflock/source/registry"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// flavorWorld is a registry that reports OpenTofu 1.12's "packages" field
// (the h1: of every platform's package), which tofu records and Terraform
// does not know.
func flavorWorld(t *testing.T) *assemble.Dispatch {
	t.Helper()
	srv := registrytest.New(t, installtest.DefaultFixtures(), registrytest.Options{Hosts: []string{installtest.RegistryHost}, Packages: true})
	reg := registry.NewSource(registry.Options{HTTPClient: srv.Client(), DefaultHost: installtest.RegistryHost})
	return &assemble.Dispatch{Providers: reg}
}

func h1Platforms(t *testing.T, hs []hash.Hash) int {
	t.Helper()
	n := 0
	for _, h := range hs {
		if h.Scheme() == hash.SchemeH1 {
			n++
		}
	}
	return n
}

// TestFlavorHashPolicy: whatever the flavour, an init records the h1: of
// the package it installed and every platform's zh:, not the h1: the
// registry reports for other platforms in its "packages" field, as tofu
// 1.12.6 and terraform record them (the interop suite checks it against
// the real binaries); the header is the flavour's.
func TestFlavorHashPolicy(t *testing.T) {
	src := flavorWorld(t)
	cloud := tfaddr.MustParseProviderSource(installtest.RegistryHost + "/acme/cloud")
	plats := len(installtest.Platforms())
	for _, tc := range []struct {
		flavor install.Flavor
		header string
	}{
		{install.FlavorOpenTofu, `"tofu init"`},
		{install.FlavorTerraform, `"terraform init"`},
	} {
		t.Run(tc.flavor.String(), func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"main.tf": providersOnlyConfig})
			res := initAndWrite(t, install.Options{Dir: dir, Source: src, Cache: openCache(t), Flavor: tc.flavor})
			hs := res.Lock.ProviderHashes(cloud)
			if got := h1Platforms(t, hs); got != 1 {
				t.Errorf("%d h1: hashes recorded, want 1: %v", got, hs)
			}
			if zh := len(hs) - h1Platforms(t, hs); zh != plats {
				t.Errorf("%d zh: hashes recorded, want %d", zh, plats)
			}
			b, _ := os.ReadFile(filepath.Join(dir, install.LockFileName))
			if first, _, _ := strings.Cut(string(b), "\n"); !strings.Contains(first, tc.header) {
				t.Errorf("header %q, want %s", first, tc.header)
			}
		})
	}
}

// TestFlavorKeptFromLockFile: "terraform init", then tflock with no flavour
// asked: the file keeps Terraform's header and hash policy (no h1: that
// terraform did not record is added), and nothing changes.
func TestFlavorKeptFromLockFile(t *testing.T) {
	src := flavorWorld(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": providersOnlyConfig})
	initAndWrite(t, install.Options{Dir: dir, Source: src, Cache: openCache(t), Flavor: install.FlavorTerraform})
	before, err := os.ReadFile(filepath.Join(dir, install.LockFileName))
	if err != nil {
		t.Fatal(err)
	}
	freshMachine(t, dir)
	res := initAndWrite(t, install.Options{Dir: dir, Source: src, Cache: openCache(t)})
	after, _ := os.ReadFile(filepath.Join(dir, install.LockFileName))
	if string(after) != string(before) {
		t.Errorf("the Terraform lock file changed:\n--- before\n%s\n--- after\n%s", before, after)
	}
	if len(res.Changes) != 0 || res.Lock.Header() != lockfile.HeaderTerraform {
		t.Errorf("changes %v, header %v", res.Changes, res.Lock.Header())
	}
	// Asked for, the flavour changes: OpenTofu's header, the same hashes.
	res = initAndWrite(t, install.Options{Dir: dir, Source: src, Cache: openCache(t), Flavor: install.FlavorOpenTofu})
	if res.Lock.Header() != lockfile.HeaderTofu {
		t.Errorf("header %v after asking for OpenTofu's flavour", res.Lock.Header())
	}
	for _, c := range res.Changes {
		t.Errorf("asking for another flavour changed %s", c)
	}
}

// TestFlavorTerraformDefaultHost: asked for Terraform's flavour, a provider
// address without a host is Terraform's registry's.
func TestFlavorTerraformDefaultHost(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": `terraform {
  required_providers {
    aws = { source = "hashicorp/aws" }
  }
}
`})
	_, err := install.Init(context.Background(), install.Options{Dir: dir, Source: &assemble.Dispatch{}, Flavor: install.FlavorTerraform})
	if err == nil || !strings.Contains(err.Error(), install.TerraformRegistryHost+"/hashicorp/aws") {
		t.Errorf("Init: %v, want an error naming %s/hashicorp/aws", err, install.TerraformRegistryHost)
	}
	_ = source.CurrentPlatform
}

// TestFlavorTerraformNotes: in Terraform's flavour the notes after writing
// the lock file are terraform's, as terraform 1.11.4 prints them after
// "terraform init" creates the file and after "terraform init -upgrade"
// changes it (checked with the binary and a filesystem mirror).
func TestFlavorTerraformNotes(t *testing.T) {
	src := flavorWorld(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": strings.Replace(providersOnlyConfig, `"~> 1.0"`, `"1.0.0"`, 1)})
	res, err := install.Init(context.Background(), install.Options{Dir: dir, Source: src, Cache: openCache(t), Flavor: install.FlavorTerraform})
	if err != nil {
		t.Fatal(err)
	}
	note, err := install.WriteLock(filepath.Join(dir, install.LockFileName), res)
	if err != nil {
		t.Fatal(err)
	}
	created := "Terraform has created a lock file .terraform.lock.hcl to record the provider\n" +
		"selections it made above. Include this file in your version control repository\n" +
		"so that Terraform can guarantee to make the same selections by default when\n" +
		"you run \"terraform init\" in the future.\n"
	if note != created {
		t.Errorf("created note:\n%s\nwant terraform's:\n%s", note, created)
	}
	writeFiles(t, dir, map[string]string{"main.tf": strings.Replace(providersOnlyConfig, `"~> 1.0"`, `"1.1.0"`, 1)})
	// The file is Terraform's now: its flavour is kept without asking.
	res, err = install.Init(context.Background(), install.Options{Dir: dir, Source: src, Cache: openCache(t), Resolve: resolve.Options{Upgrade: true}})
	if err != nil {
		t.Fatal(err)
	}
	note, err = install.WriteLock(filepath.Join(dir, install.LockFileName), res)
	if err != nil {
		t.Fatal(err)
	}
	changed := "Terraform has made some changes to the provider dependency selections recorded\n" +
		"in the .terraform.lock.hcl file. Review those changes and commit them to your\n" +
		"version control system if they represent changes you intended to make.\n"
	if !strings.HasSuffix(note, "\n\n"+changed) {
		t.Errorf("changed note:\n%s\nwant it to end with terraform's:\n%s", note, changed)
	}
}
