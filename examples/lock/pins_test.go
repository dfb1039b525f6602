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

// TestDemoEditedPins edits the sample's pinned calls (the OCI module's
// ?tag=, and the git module switched to a ?ref=) with the cache warm:
// read-only runs refuse, naming what the configuration asks and what the
// lock records; normal runs install the new content and report the change.
func TestDemoEditedPins(t *testing.T) {
	if err := installtest.HaveGit(); err != nil {
		t.Skip(err)
	}
	tmp := t.TempDir()
	work, cacheDir := filepath.Join(tmp, "work"), filepath.Join(tmp, "cache")
	common := []string{"-work", work, "-cache-dir", cacheDir}
	mainTF := filepath.Join(work, "main.tf")
	edit := func(from, to string) {
		t.Helper()
		b, err := os.ReadFile(mainTF)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), from) {
			t.Fatalf("main.tf lacks %q", from)
		}
		if err := os.WriteFile(mainTF, []byte(strings.Replace(string(b), from, to, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	module := func(call string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(work, ".terraform", "modules", call, "main.tf"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	out, code := runLock(t, common...)
	if code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, out)
	}
	// The git call pinned by a ref instead of a constraint (the first run
	// wrote the selected tag into the annotated call's source).
	edit(`# tflock: version = "~> 1.0"
  source = "git::https://git.example.test/acme/network.git?ref=v1.0.0"`, `source = "git::https://git.example.test/acme/network.git?ref=v1.0.0"`)
	if out, code = runLock(t, common...); code != 0 {
		t.Fatalf("ref run: exit %d\n%s", code, out)
	}
	if !strings.Contains(module("network"), `value = "1.0.0"`) {
		t.Fatalf("network at ref v1.0.0:\n%s", module("network"))
	}

	for _, tc := range []struct {
		from, to, call, content, asks, change string
	}{
		{"?ref=v1.0.0", "?ref=v1.1.0", "network", `value = "1.1.0"`,
			`module "network": the configuration asks for ref v1.1.0, but the lock file records ref v1.0.0`,
			`module "network": repinned: ref v1.0.0 -> v1.1.0, commit `},
		{"?tag=1.0.0", "?tag=1.1.0", "storage", "# storage 1.1.0",
			`module "storage": the configuration asks for tag 1.1.0, but the lock file records tag 1.0.0`,
			`module "storage": repinned: tag 1.0.0 -> 1.1.0, digest sha256:`},
	} {
		lockPath := filepath.Join(work, ".terraform.lock.hcl")
		before, _ := os.ReadFile(lockPath)
		edit(tc.from, tc.to)
		out, code = runLock(t, append(common, "-lockfile=readonly")...)
		if code != 1 || !strings.Contains(out, tc.asks) || strings.Contains(out, "was moved") {
			t.Errorf("read-only run after %s -> %s: exit %d, want 1 saying %q:\n%s", tc.from, tc.to, code, tc.asks, out)
		}
		if after, _ := os.ReadFile(lockPath); string(after) != string(before) {
			t.Error("a refused read-only run changed the lock file")
		}
		out, code = runLock(t, common...)
		if code != 0 || !strings.Contains(out, tc.change) {
			t.Errorf("run after %s -> %s: exit %d, want %q:\n%s", tc.from, tc.to, code, tc.change, out)
		}
		if got := module(tc.call); !strings.Contains(got, tc.content) {
			t.Errorf("module %q after the edit:\n%s\nwant %q", tc.call, got, tc.content)
		}
		out, code = runLock(t, common...)
		if code != 0 || !strings.Contains(out, "No changes to ") || !strings.Contains(out, "0 packages downloaded") {
			t.Errorf("run after that: exit %d, want no change and no download:\n%s", code, out)
		}
	}
	lf, err := lockfile.ParseFile(filepath.Join(work, ".terraform.lock.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	if m := lf.Module("network"); m == nil || m.Ref != "v1.1.0" || !m.Version.IsZero() {
		t.Errorf("network lock = %+v", m)
	}
	if m := lf.Module("storage"); m == nil || m.Tag != "1.1.0" {
		t.Errorf("storage lock = %+v", m)
	}
}

// TestRealDirBranch works on a configuration of its own whose module
// follows a branch of a real git repository: after the branch moved, a
// fresh machine installs the locked commit without a word about a moved
// tag, and -upgrade moves to the new head and reports it.
func TestRealDirBranch(t *testing.T) {
	if err := installtest.HaveGit(); err != nil {
		t.Skip(err)
	}
	repoDir := filepath.Join(t.TempDir(), "net.git")
	git := func(args ...string) string {
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
	writeFile(t, filepath.Join(repoDir, "main.tf"), "# first\n")
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "first")
	first := git("rev-parse", "HEAD")

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "main.tf"), "module \"net\" {\n  source = \"git::file://"+filepath.ToSlash(repoDir)+"?ref=main\"\n}\n")
	t.Setenv("TF_CLI_CONFIG_FILE", filepath.Join(dir, "none.tfrc"))
	t.Setenv("HOME", t.TempDir())
	out, code := runLock(t, "-cache-dir", t.TempDir(), dir)
	if code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, out)
	}
	installed := filepath.Join(dir, ".terraform", "modules", "net", "main.tf")
	lf, err := lockfile.ParseFile(filepath.Join(dir, ".terraform.lock.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	if m := lf.Module("net"); m == nil || m.Ref != "main" || m.Commit != first {
		t.Fatalf("lock = %+v, want ref main at %s", m, first)
	}

	writeFile(t, filepath.Join(repoDir, "main.tf"), "# second\n")
	git("commit", "-q", "-a", "-m", "second")
	second := git("rev-parse", "HEAD")

	// A fresh machine: no .terraform, an empty cache.
	if err := os.RemoveAll(filepath.Join(dir, ".terraform")); err != nil {
		t.Fatal(err)
	}
	for _, extra := range [][]string{nil, {"-lockfile=readonly"}} {
		out, code = runLock(t, append(append([]string{"-cache-dir", t.TempDir()}, extra...), dir)...)
		if code != 0 || strings.Contains(out, "moved") || !strings.Contains(out, "No changes to ") {
			t.Errorf("fresh machine %v: exit %d, want the locked commit and no change:\n%s", extra, code, out)
		}
		if b, _ := os.ReadFile(installed); string(b) != "# first\n" {
			t.Errorf("fresh machine %v installed %q, want the locked commit's", extra, b)
		}
	}

	out, code = runLock(t, "-cache-dir", t.TempDir(), "-upgrade", dir)
	if code != 0 || !strings.Contains(out, `module "net": repinned: commit `+first+` -> `+second) {
		t.Errorf("upgrade: exit %d, want the move reported:\n%s", code, out)
	}
	if b, _ := os.ReadFile(installed); string(b) != "# second\n" {
		t.Errorf("upgrade installed %q, want the new head's", b)
	}
}
