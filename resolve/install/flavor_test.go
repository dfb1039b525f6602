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
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/registry"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// flavorWorld is a registry that reports OpenTofu 1.12's "packages" field
// (the h1: of every platform's package), which tofu records and Terraform
// does not know.
func flavorWorld(t *testing.T) *install.Dispatch {
	t.Helper()
	srv := registrytest.New(t, installtest.DefaultFixtures(), registrytest.Options{Hosts: []string{installtest.RegistryHost}, Packages: true})
	reg := registry.NewSource(registry.Options{HTTPClient: srv.Client(), DefaultHost: installtest.RegistryHost})
	return &install.Dispatch{Providers: reg, DefaultHost: installtest.RegistryHost}
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

// TestFlavorHashPolicy: OpenTofu's flavour records the h1: the registry
// reports for every platform; Terraform's records only the h1: of the
// package it installed, with every platform's zh:, as terraform does.
func TestFlavorHashPolicy(t *testing.T) {
	src := flavorWorld(t)
	cloud := tfaddr.MustParseProviderSource(installtest.RegistryHost + "/acme/cloud")
	plats := len(installtest.Platforms())
	for _, tc := range []struct {
		flavor install.Flavor
		h1     int
		header string
	}{
		{install.FlavorOpenTofu, plats, `"tofu init"`},
		{install.FlavorTerraform, 1, `"terraform init"`},
	} {
		t.Run(tc.flavor.String(), func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"main.tf": providersOnlyConfig})
			res := initAndWrite(t, install.Options{Dir: dir, Source: src, Cache: openCache(t), Flavor: tc.flavor})
			hs := res.Lock.ProviderHashes(cloud)
			if got := h1Platforms(t, hs); got != tc.h1 {
				t.Errorf("%d h1: hashes recorded, want %d: %v", got, tc.h1, hs)
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
	// A fresh machine: no install, an empty cache.
	if err := os.RemoveAll(filepath.Join(dir, ".terraform")); err != nil {
		t.Fatal(err)
	}
	res := initAndWrite(t, install.Options{Dir: dir, Source: src, Cache: openCache(t)})
	after, _ := os.ReadFile(filepath.Join(dir, install.LockFileName))
	if string(after) != string(before) {
		t.Errorf("the Terraform lock file changed:\n--- before\n%s\n--- after\n%s", before, after)
	}
	if len(res.Changes) != 0 || res.Lock.Header() != lockfile.HeaderTerraform {
		t.Errorf("changes %v, header %v", res.Changes, res.Lock.Header())
	}
	// Asked for, the flavour changes: OpenTofu's header and hashes.
	res = initAndWrite(t, install.Options{Dir: dir, Source: src, Cache: openCache(t), Flavor: install.FlavorOpenTofu})
	if res.Lock.Header() != lockfile.HeaderTofu {
		t.Errorf("header %v after asking for OpenTofu's flavour", res.Lock.Header())
	}
	cloud := tfaddr.MustParseProviderSource(installtest.RegistryHost + "/acme/cloud")
	if n := h1Platforms(t, res.Lock.ProviderHashes(cloud)); n != len(installtest.Platforms()) {
		t.Errorf("%d h1: after asking for OpenTofu's flavour, want one per platform", n)
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
	_, err := install.Init(context.Background(), install.Options{Dir: dir, Source: &install.Dispatch{}, Flavor: install.FlavorTerraform})
	if err == nil || !strings.Contains(err.Error(), install.TerraformRegistryHost+"/hashicorp/aws") {
		t.Errorf("Init: %v, want an error naming %s/hashicorp/aws", err, install.TerraformRegistryHost)
	}
	_ = source.CurrentPlatform
}
