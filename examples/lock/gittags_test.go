package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve/install/installtest"
)

// The locked tag of a git module is deleted upstream; then a second call
// of the repository is added, so its tags must be listed again: the
// locked version still installs from the tag list and clone kept under
// -cache-dir, with a warning.
func TestDeletedGitTag(t *testing.T) {
	if err := installtest.HaveGit(); err != nil {
		t.Skip(err)
	}
	repoDir, git, call := taggedRepo(t)
	src := "git::file://" + filepath.ToSlash(repoDir)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "main.tf"), call("net", "~> 1.0"))
	t.Setenv("TF_CLI_CONFIG_FILE", filepath.Join(dir, "none.tfrc"))
	t.Setenv("HOME", t.TempDir())
	cacheDir := t.TempDir()
	out, code := runLock(t, "-cache-dir", cacheDir, dir)
	if code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, out)
	}
	lf, err := lockfile.ParseFile(filepath.Join(dir, ".terraform.lock.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	locked := lf.Module("net")
	if locked == nil || locked.Version.String() != "1.1.0" {
		t.Fatalf("net = %+v, want 1.1.0\n%s", locked, out)
	}

	git("tag", "-d", "v1.1.0")
	writeFile(t, filepath.Join(dir, "main.tf"), call("net", "~> 1.0")+"\n"+call("net_old", "1.0.0"))
	out, code = runLock(t, "-cache-dir", cacheDir, dir)
	if code != 0 || !strings.Contains(out, `Warning: `+src+`: tag "v1.1.0" of version 1.1.0 no longer exists upstream; listing it from the cache`) {
		t.Fatalf("after the tag was deleted: exit %d\n%s", code, out)
	}
	lf, err = lockfile.ParseFile(filepath.Join(dir, ".terraform.lock.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	if m := lf.Module("net"); m == nil || m.Version != locked.Version || m.Commit != locked.Commit {
		t.Errorf("net = %+v, want the locked %+v", m, locked)
	}
	if m := lf.Module("net_old"); m == nil || m.Version.String() != "1.0.0" {
		t.Errorf("net_old = %+v, want 1.0.0", m)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".terraform", "modules", "net", "main.tf")); string(b) != "# 1.1.0\n" {
		t.Errorf("net installed %q, want the locked commit's", b)
	}
}

// -unify-modules: two calls of one git repository, in two files, share a
// version; constraints that cannot be met together are reported with both
// files and lines.
func TestUnifyModules(t *testing.T) {
	if err := installtest.HaveGit(); err != nil {
		t.Skip(err)
	}
	_, _, call := taggedRepo(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "main.tf"), call("a", ">= 1.0.0"))
	writeFile(t, filepath.Join(dir, "b.tf"), "\n"+call("b", "< 1.1.0"))
	t.Setenv("TF_CLI_CONFIG_FILE", filepath.Join(dir, "none.tfrc"))
	t.Setenv("HOME", t.TempDir())
	cacheDir := t.TempDir()
	out, code := runLock(t, "-cache-dir", cacheDir, "-unify-modules", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	lf, err := lockfile.ParseFile(filepath.Join(dir, ".terraform.lock.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"a", "b"} {
		if m := lf.Module(c); m == nil || m.Version.String() != "1.0.0" {
			t.Errorf("%s = %+v, want the shared 1.0.0\n%s", c, m, out)
		}
	}

	writeFile(t, filepath.Join(dir, "main.tf"), call("a", ">= 1.1.0"))
	out, code = runLock(t, "-cache-dir", cacheDir, "-unify-modules", dir)
	for _, want := range []string{
		"root module (" + filepath.Join(dir, "main.tf") + ":3) requires >= 1.1.0",
		"root module (" + filepath.Join(dir, "b.tf") + ":4) requires < 1.1.0",
	} {
		if code != 1 || !strings.Contains(out, want) {
			t.Errorf("conflict: exit %d, output lacks %q:\n%s", code, want, out)
		}
	}
}

// taggedRepo makes a git repository with the tags v1.0.0 and v1.1.0. It
// returns its directory, a function running git in it, and one writing a
// module call of it with a version constraint.
func taggedRepo(t *testing.T) (repoDir string, git func(args ...string) string, call func(name, version string) string) {
	t.Helper()
	repoDir = filepath.Join(t.TempDir(), "net.git")
	git = func(args ...string) string {
		t.Helper()
		out, err := installtest.Git(context.Background(), repoDir, args...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if err := os.MkdirAll(repoDir, 0o755); err != nil {
		t.Fatal(err)
	}
	git("init", "-q")
	for _, v := range []string{"1.0.0", "1.1.0"} {
		writeFile(t, filepath.Join(repoDir, "main.tf"), "# "+v+"\n")
		git("add", "-A")
		git("commit", "-q", "-m", v)
		git("tag", "v"+v)
	}
	src := "git::file://" + filepath.ToSlash(repoDir)
	call = func(name, version string) string {
		return "module \"" + name + "\" {\n  source  = \"" + src + "\"\n  version = \"" + version + "\"\n}\n"
	}
	return repoDir, git, call
}
