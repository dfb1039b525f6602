package tflock_test

import (
	"bytes"
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
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/assemble"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/git"
	"github.com/tflock/tflock/source/git/gittest"
	"github.com/tflock/tflock/source/registry"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// The code between the markers is the README's "Using it" snippet, byte for
// byte once its indentation is removed: TestReadmeUsingIt checks that the
// two agree, and the compiler that it builds.

// README begin

// initDir installs the dependencies of the configuration in dir into
// dir/.terraform and writes dir/.terraform.lock.hcl, as tofu init does,
// through the package cache in cacheDir. It returns tofu's note on the
// lock file. srcOpts says where the sources come from:
// assemble.SourcesOptions{} reads the CLI configuration and the
// environment as tofu does on this machine.
func initDir(ctx context.Context, dir string, srcOpts assemble.SourcesOptions, cacheDir string) (string, error) {
	lockPath := filepath.Join(dir, install.LockFileName)
	lock, err := lockfile.ParseFile(lockPath) // a missing file is an empty lock
	if err != nil {
		return "", err // *lockfile.ParseError, with hcl.Diagnostics
	}
	sharedCache, err := cache.Open(cacheDir, cache.Options{}) // content-addressed, safe across processes
	if err != nil {
		return "", err
	}
	// Registries, mirrors, dev overrides, git, OCI and HTTP archives, as
	// the CLI configuration says; a registry module located in git or
	// OCI is routed there.
	srcs, diags := assemble.NewSources(ctx, srcOpts)
	if diags.HasErrors() {
		return "", diags // the CLI configuration's errors, with file:line
	}
	res, err := install.Init(ctx, install.Options{Dir: dir, Source: srcs.Source, Cache: sharedCache,
		PluginCacheDir: srcs.PluginCacheDir,
		Resolve:        resolve.Options{Lock: lock, DevOverrides: srcs.DevOverrides}})
	if err != nil {
		return "", err // conflicts name every constraint and its file:line; checksum errors name both hashes
	}
	return install.WriteLock(lockPath, res) // atomic; the note is tofu's change summary
}

// README end

// TestReadmeUsingIt checks that the README's "Using it" Go block is the
// code between the markers above, which the compiler builds and
// TestReadmeInitGitRegistryModule runs the README's code on a
// configuration whose registry module the registry delivers as a git
// address (served over smart HTTP from a repository made with git), with a
// provider from the same registry: cold, then warm, where nothing changes
// and nothing is downloaded. (The README's hand wiring before
// assemble.NewSources left the registry without a way to the git source,
// and this configuration failed.)
func TestReadmeInitGitRegistryModule(t *testing.T) {
	ctx := context.Background()
	gitRoot := t.TempDir()
	repo := filepath.Join(gitRoot, "vpc.git")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	gittest.Run(t, repo, "init", "-q")
	const moduleMain = "variable \"cidr\" {\n  type = string\n}\n"
	if err := os.WriteFile(filepath.Join(repo, "main.tf"), []byte(moduleMain), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Run(t, repo, "add", "-A")
	gittest.Run(t, repo, "commit", "-q", "-m", "vpc 1.0.0")
	gittest.Run(t, repo, "tag", "v1.0.0")
	location := "git::" + gittest.New(t, gittest.Options{Root: gitRoot}).LoopbackURL() + "/vpc.git?ref=v1.0.0"

	srv := registrytest.New(t, registrytest.Fixtures{
		Providers: []registrytest.Provider{{Addr: "acme/cloud", Versions: []registrytest.ProviderVersion{
			{Version: "1.0.0", Platforms: []string{source.CurrentPlatform.String()}},
		}}},
		Modules: []registrytest.Module{{Addr: "acme/vpc/cloud", Versions: []registrytest.ModuleVersion{
			{Version: "1.0.0", Location: location},
		}}},
	}, registrytest.Options{})
	// The sources as the README builds them, from a CLI configuration
	// file written here and an environment of its own (no TF_TOKEN_, a
	// home without configuration), the registry reached by its client, git
	// without the machine's git configuration.
	cliConfig := filepath.Join(t.TempDir(), "cli.tfrc")
	if err := os.WriteFile(cliConfig, []byte("# no provider_installation: the implied methods\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srcOpts := assemble.SourcesOptions{
		ConfigFiles: []string{cliConfig},
		Env:         []string{"HOME=" + t.TempDir()},
		WorkDir:     t.TempDir(),
		Registry:    registry.Options{HTTPClient: srv.Client()},
		Git:         &git.Options{},
	}

	dir := t.TempDir()
	config := `terraform {
  required_providers {
    cloud = {
      source  = "registry.example.test/acme/cloud"
      version = "~> 1.0"
    }
  }
}

module "vpc" {
  source  = "registry.example.test/acme/vpc/cloud"
  version = "1.0.0"
  cidr    = "10.0.0.0/16"
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	cacheDir := filepath.Join(t.TempDir(), "cache")

	note, err := initDir(ctx, dir, srcOpts, cacheDir)
	if err != nil {
		t.Fatalf("cold: %v", err)
	}
	if !strings.Contains(note, "has created a lock file") {
		t.Errorf("cold: note %q, want tofu's note on a new lock file", note)
	}
	got, err := os.ReadFile(filepath.Join(dir, ".terraform", "modules", "vpc", "main.tf"))
	if err != nil || string(got) != moduleMain {
		t.Errorf("installed module main.tf = %q, %v; want the tagged commit's %q", got, err, moduleMain)
	}
	lockBytes, err := os.ReadFile(filepath.Join(dir, install.LockFileName))
	if err != nil {
		t.Fatal(err)
	}
	lock, err := lockfile.Parse(lockBytes, install.LockFileName)
	if err != nil {
		t.Fatal(err)
	}
	if p := lock.Provider(tfaddr.MustParseProviderSource("registry.example.test/acme/cloud")); p == nil || p.Version.String() != "1.0.0" {
		t.Errorf("lock: provider acme/cloud = %+v, want 1.0.0", p)
	}
	// A registry module is locked by version and h1: of its package: the
	// tagged commit's tree, without .git.
	want := filepath.Join(t.TempDir(), "vpc")
	gittest.Run(t, gitRoot, "clone", "-q", "--branch", "v1.0.0", repo, want)
	if err := os.RemoveAll(filepath.Join(want, ".git")); err != nil {
		t.Fatal(err)
	}
	wantH1, err := hash.H1Dir(want)
	if err != nil {
		t.Fatal(err)
	}
	if m := lock.Module("vpc"); m == nil || m.Source != "registry.example.test/acme/vpc/cloud" || m.Version.String() != "1.0.0" ||
		len(m.Hashes) != 1 || m.Hashes[0] != wantH1 {
		t.Errorf("lock: module vpc = %+v, want registry.example.test/acme/vpc/cloud 1.0.0 [%s]", m, wantH1)
	}

	// Warm: the lock file and the cache agree, so nothing changes and
	// nothing is downloaded.
	before := srv.Requests()
	note, err = initDir(ctx, dir, srcOpts, cacheDir)
	if err != nil {
		t.Fatalf("warm: %v", err)
	}
	if note != "" {
		t.Errorf("warm: note %q, want none", note)
	}
	again, err := os.ReadFile(filepath.Join(dir, install.LockFileName))
	if err != nil || !bytes.Equal(again, lockBytes) {
		t.Errorf("warm run changed the lock file (%v):\n%s", err, again)
	}
	if n := srv.Requests() - before; n != 0 {
		t.Errorf("warm run sent %d registry requests, want 0", n)
	}
}
