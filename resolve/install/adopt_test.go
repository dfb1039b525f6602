package install_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
)

// dropModuleBlocks rewrites the lock file without its module blocks, as
// every tofu 1.12 rewrite (such as "tofu providers lock") does.
func dropModuleBlocks(t *testing.T, dir string) {
	t.Helper()
	path := filepath.Join(dir, install.LockFileName)
	lf, err := lockfile.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	for m := range lf.Modules() {
		calls = append(calls, m.Path)
	}
	for _, c := range calls {
		lf.RemoveModule(c)
	}
	if err := lockfile.WriteFile(path, lf); err != nil {
		t.Fatal(err)
	}
}

// TestRegistryModuleKeptAfterTofuRewrite: the lock file lost its module
// blocks (a tofu rewrite); the registry module installed at 1.0.0 stays at
// 1.0.0 (not the newest allowed 1.1.0), as tofu keeps it through
// modules.json, and its lock entry is re-recorded with its hashes.
func TestRegistryModuleKeptAfterTofuRewrite(t *testing.T) {
	w, err := installtest.Start(context.Background(), installtest.Options{NoGit: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": registryOnlyConfig})
	lf := lockfile.New()
	lf.SetModule(&lockfile.ModuleLock{Path: "vpc", Source: installtest.RegistryHost + "/acme/vpc/cloud", Version: mustV("1.0.0"), Constraints: "~> 1.0"})
	if err := lockfile.WriteFile(filepath.Join(dir, install.LockFileName), lf); err != nil {
		t.Fatal(err)
	}
	first := initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: openCache(t)})
	locked := first.Lock.Module("vpc")
	if locked == nil || locked.Version.String() != "1.0.0" || len(locked.Hashes) == 0 {
		t.Fatalf("vpc lock = %+v, want 1.0.0 with hashes", locked)
	}
	dropModuleBlocks(t, dir)

	res := initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: openCache(t)})
	got := res.Lock.Module("vpc")
	if got == nil || got.Version.String() != "1.0.0" {
		t.Fatalf("vpc lock after the rewrite = %+v, want the installed 1.0.0 kept", got)
	}
	if lockfile.Changes(first.Lock, res.Lock) != nil {
		t.Errorf("the re-recorded lock differs from the first: %v", lockfile.Changes(first.Lock, res.Lock))
	}
	var found bool
	for _, c := range res.Changes {
		if c.Module == "vpc" {
			found = true
			if c.Kind != lockfile.Rerecorded || c.String() != `module "vpc": re-recorded 1.0.0, as installed` {
				t.Errorf("change %q (%v), want it re-recorded", c, c.Kind)
			}
		}
	}
	if !found {
		t.Errorf("no change reported for vpc: %v", res.Changes)
	}
	// Asked to upgrade, the call moves on.
	res = initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: openCache(t), Resolve: resolve.Options{UpgradeModules: []string{"vpc"}}})
	if v := res.Lock.Module("vpc").Version.String(); v != "1.1.0" {
		t.Errorf("upgraded vpc = %s, want 1.1.0", v)
	}
}

// TestGitModuleCommitKeptAfterTofuRewrite: tofu installed a git module
// following a branch (its checkout, with .git, under .terraform/modules)
// and rewrote the lock file without module blocks; the branch has moved
// on since. tflock keeps the installed commit, read from tofu's checkout,
// and records it again.
func TestGitModuleCommitKeptAfterTofuRewrite(t *testing.T) {
	w := startWorld(t)
	ctx := context.Background()
	repo := filepath.Join(w.GitDir, "acme", "network.git")
	dir := t.TempDir()
	src := installtest.Network + "?ref=main"
	writeFiles(t, dir, map[string]string{"main.tf": `module "net" {
  source = "` + src + `"
}
`})
	// What tofu leaves: a clone of the branch, and its modules.json.
	checkout := filepath.Join(dir, ".terraform", "modules", "net")
	if _, err := installtest.Git(ctx, dir, "clone", "-q", "--branch", "main", "file://"+repo, checkout); err != nil {
		t.Fatal(err)
	}
	installedCommit, err := installtest.Git(ctx, checkout, "rev-parse", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	manifest := `{"Modules":[{"Key":"","Source":"","Dir":"."},{"Key":"net","Source":"` + src + `","Dir":".terraform/modules/net"}]}`
	writeFiles(t, filepath.Join(dir, ".terraform", "modules"), map[string]string{"modules.json": manifest})
	// The branch moves on.
	if _, err := installtest.Git(ctx, repo, "commit", "-q", "--allow-empty", "-m", "later"); err != nil {
		t.Fatal(err)
	}
	head, err := installtest.Git(ctx, repo, "rev-parse", "main")
	if err != nil {
		t.Fatal(err)
	}
	if head == installedCommit {
		t.Fatal("the branch did not move")
	}

	res := initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: openCache(t)})
	ml := res.Lock.Module("net")
	if ml == nil || ml.Commit != installedCommit {
		t.Fatalf("net lock = %+v, want the installed commit %s (the branch is at %s now)", ml, installedCommit, head)
	}
	if len(res.Changes) != 1 || res.Changes[0].Kind != lockfile.Rerecorded {
		t.Errorf("changes %v, want net re-recorded", res.Changes)
	}
	// tofu's checkout is kept as it was, .git included: it is what the
	// lock records (the module h1: leaves .git out).
	if _, err := os.Stat(filepath.Join(checkout, ".git")); err != nil {
		t.Errorf("tofu's checkout was replaced: %v", err)
	}
	if res.Downloads != 0 {
		t.Errorf("%d downloads, want 0: the installed module is kept", res.Downloads)
	}
	// A warm re-run keeps it too, and changes nothing.
	res = initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: openCache(t)})
	if len(res.Changes) != 0 || res.Downloads != 0 {
		t.Errorf("re-run: changes %v, %d downloads", res.Changes, res.Downloads)
	}
	if _, err := os.Stat(filepath.Join(checkout, ".git")); err != nil {
		t.Errorf("tofu's checkout was replaced on the re-run: %v", err)
	}
	// -upgrade moves to the branch's head.
	res = initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: openCache(t), Resolve: resolve.Options{Upgrade: true}})
	if got := res.Lock.Module("net").Commit; got != head {
		t.Errorf("upgraded net commit = %s, want the head %s", got, head)
	}
	if _, err := os.Stat(filepath.Join(dir, install.LockFileName)); err != nil {
		t.Fatal(err)
	}
}

// TestRFC3540LockBindsCalls: a lock file whose module locks are keyed by
// source address (OpenTofu's RFC PR #3540 form) locks the configuration's
// call of that source: its version is kept (1.0.0, not the newest 1.1.0)
// and its hashes are checked.
func TestRFC3540LockBindsCalls(t *testing.T) {
	w, err := installtest.Start(context.Background(), installtest.Options{NoGit: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	addr := installtest.RegistryHost + "/acme/vpc/cloud"
	h1, ok := w.Registry.ModuleH1(addr, "1.0.0")
	if !ok {
		t.Fatal("no h1 for vpc 1.0.0")
	}
	for _, tc := range []struct {
		name, hash string
		ok         bool
	}{
		{"matching", h1.String(), true},
		{"republished", "h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{
				"main.tf": registryOnlyConfig,
				install.LockFileName: `module "` + addr + `" {
  version     = "1.0.0"
  constraints = "~> 1.0"
  hashes      = ["` + tc.hash + `"]
}
`,
			})
			res, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: openCache(t)})
			if !tc.ok {
				var ce *install.ChecksumError
				if !errors.As(err, &ce) || ce.Call != "vpc" {
					t.Fatalf("Init: %v, want a checksum error for module vpc", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ml := res.Lock.Module("vpc")
			if ml == nil || ml.Version.String() != "1.0.0" || len(ml.Hashes) != 1 || ml.Hashes[0] != h1 {
				t.Fatalf("vpc lock = %+v, want 1.0.0 with %s", ml, h1)
			}
		})
	}
}
