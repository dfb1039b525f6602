package install_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/registry/registrytest"
)

const worldConfig = `terraform {
  required_providers {
    cloud = {
      source  = "registry.example.test/acme/cloud"
      version = "~> 1.0"
    }
    dns = {
      source  = "registry.example.test/acme/dns"
      version = ">= 2.0.0"
    }
  }
}

module "vpc" {
  source  = "registry.example.test/acme/vpc/cloud"
  version = "~> 1.0"
}

module "network" {
  source  = "` + installtest.Network + `"
  version = "~> 1.0"
}

module "storage" {
  source = "` + installtest.Storage + `?tag=1.0.0"
}
`

func startWorld(t *testing.T) *installtest.World {
	t.Helper()
	if err := installtest.HaveGit(); err != nil {
		t.Skip(err)
	}
	return startWorldWith(t, installtest.Options{})
}

// startWorldWith starts an installtest world with opts, closed with the
// test.
func startWorldWith(t *testing.T, opts installtest.Options) *installtest.World {
	t.Helper()
	w, err := installtest.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return w
}

func TestWorldRegistryGitOCI(t *testing.T) {
	w := startWorld(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": worldConfig})
	c := openCache(t)
	res := initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: c})
	lf := res.Lock

	cloud := tfaddr.MustParseProviderSource("registry.example.test/acme/cloud")
	pl := lf.Provider(cloud)
	if pl == nil || pl.Version.String() != "1.1.0" {
		t.Fatalf("cloud lock = %+v, want 1.1.0", pl)
	}
	// The signed zh: of every platform and the h1: of this one, as tofu.
	zh, h1 := 0, 0
	for _, h := range pl.Hashes {
		switch {
		case strings.HasPrefix(string(h), "zh:"):
			zh++
		case strings.HasPrefix(string(h), "h1:"):
			h1++
		}
	}
	if zh != len(installtest.Platforms()) || h1 != 1 {
		t.Errorf("cloud hashes %v: want %d zh: and one h1:", pl.Hashes, len(installtest.Platforms()))
	}
	info, ok := w.Registry.ProviderPackage("registry.example.test/acme/cloud", "1.1.0", source.CurrentPlatform.String())
	if !ok || !containsHash(pl.Hashes, info.H1) || !containsHash(pl.Hashes, info.ZH) {
		t.Errorf("cloud hashes %v lack the registry's %s and %s", pl.Hashes, info.H1, info.ZH)
	}

	network := lf.Module("network")
	if network == nil || network.Version.String() != "1.1.0" || network.Source != installtest.Network || !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(network.Commit) {
		t.Errorf("network lock = %+v, want 1.1.0 with a commit", network)
	}
	storage := lf.Module("storage")
	if storage == nil || !strings.HasPrefix(storage.Digest, "sha256:") || storage.Source != installtest.Storage || !storage.Version.IsZero() {
		t.Errorf("storage lock = %+v, want a digest and no version", storage)
	}
	if vpc := lf.Module("vpc"); vpc == nil || vpc.Version.String() != "1.1.0" {
		t.Errorf("vpc lock = %+v", vpc)
	}
	h, ok := w.Registry.ModuleH1("registry.example.test/acme/vpc/cloud", "1.1.0")
	if !ok || !containsHash(lf.ModuleHashes("vpc"), h) {
		t.Errorf("vpc hashes %v lack the registry's %s", lf.ModuleHashes("vpc"), h)
	}

	b, err := os.ReadFile(filepath.Join(dir, ".terraform", "modules", "modules.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"Modules":[{"Key":"","Source":"","Dir":"."},` +
		`{"Key":"network","Source":"` + installtest.Network + `","Version":"1.1.0","Dir":".terraform/modules/network"},` +
		`{"Key":"network.subnet","Source":"./modules/subnet","Dir":".terraform/modules/network/modules/subnet"},` +
		`{"Key":"storage","Source":"` + installtest.Storage + `?tag=1.0.0","Dir":".terraform/modules/storage"},` +
		`{"Key":"vpc","Source":"registry.example.test/acme/vpc/cloud","Version":"1.1.0","Dir":".terraform/modules/vpc"}]}`
	if string(b) != want {
		t.Errorf("modules.json:\n got %s\nwant %s", b, want)
	}
	if _, err := os.Stat(filepath.Join(dir, ".terraform", "modules", "network", ".git")); err == nil {
		t.Error("the git module was installed with its .git directory")
	}

	// Re-init: no request at all.
	before := w.Requests()
	res2 := initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: c})
	if n := w.Requests() - before; n != 0 {
		t.Errorf("re-init made %d requests, want 0", n)
	}
	if len(res2.Changes) != 0 {
		t.Errorf("re-init changes: %v", res2.Changes)
	}

	// The same lock file from a cold cache (downloads, same result).
	dir2 := t.TempDir()
	writeFiles(t, dir2, map[string]string{"main.tf": worldConfig})
	res3, err := install.Init(context.Background(), install.Options{Dir: dir2, Source: w.Source, Resolve: resolve.Options{Lock: lockfile.New()}})
	if err != nil {
		t.Fatal(err)
	}
	if string(res3.Lock.Bytes()) != string(lf.Bytes()) {
		t.Errorf("a cold-cache init locked differently:\n%s\nvs\n%s", res3.Lock.Bytes(), lf.Bytes())
	}
}

func TestWorldUpgradeModule(t *testing.T) {
	w := startWorld(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": worldConfig})
	lf := lockfile.New()
	lf.SetModule(&lockfile.ModuleLock{Path: "network", Source: installtest.Network, Version: mustV("1.0.0"), Constraints: "~> 1.0"})
	res, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Resolve: resolve.Options{Lock: lf}})
	if err != nil {
		t.Fatal(err)
	}
	if v := res.Lock.Module("network").Version.String(); v != "1.0.0" {
		t.Fatalf("network = %s, want the locked 1.0.0", v)
	}
	res, err = install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Resolve: resolve.Options{Lock: res.Lock, UpgradeModules: []string{"network"}}})
	if err != nil {
		t.Fatal(err)
	}
	if v := res.Lock.Module("network").Version.String(); v != "1.1.0" {
		t.Fatalf("upgraded network = %s, want 1.1.0 (2.0.0 is outside ~> 1.0)", v)
	}
}

func TestWorldTamperedRegistryPackage(t *testing.T) {
	w := startWorld(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": worldConfig})
	initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: openCache(t)})
	freshMachine(t, dir)
	before := snapshot(t, dir)
	w.Registry.SetFault(registrytest.TamperedPackage)
	_, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: openCache(t)})
	if !errors.Is(err, source.ErrChecksumMismatch) {
		t.Fatalf("Init from a registry serving tampered packages: %v, want an error wrapping source.ErrChecksumMismatch", err)
	}
	if after := snapshot(t, dir); after != before {
		t.Error("a failed init changed the configuration directory")
	}
}

func TestWorldMovedGitTag(t *testing.T) {
	w := startWorld(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": worldConfig})
	res := initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: openCache(t)})
	locked := res.Lock.Module("network").Commit

	// Someone moves the tag v1.1.0 to a new commit.
	repo := filepath.Join(w.GitDir, "acme", "network.git")
	for _, args := range [][]string{
		{"commit", "-q", "--allow-empty", "-m", "sneaky"},
		{"tag", "-f", "v1.1.0"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=x", "GIT_AUTHOR_EMAIL=x@example.test", "GIT_COMMITTER_NAME=x", "GIT_COMMITTER_EMAIL=x@example.test")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	freshMachine(t, dir)
	before := snapshot(t, dir)
	_, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: openCache(t)})
	if err == nil || !strings.Contains(err.Error(), locked) {
		t.Fatalf("Init after the locked tag moved: %v, want an error naming the locked commit %s", err, locked)
	}
	if after := snapshot(t, dir); after != before {
		t.Error("a failed init changed the configuration directory")
	}
}
