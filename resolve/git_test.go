package resolve_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/config"
	"github.com/tflock/tflock/source/git"
)

// gitRepo makes a real repository with the git binary: a commit tagged
// v1.0.0, one tagged "latest" (not a version) and one with the annotated
// tag v1.1.0. It returns the directory and the commit of each tag.
func gitRepo(t *testing.T) (string, map[string]string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("git is needed: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "net")
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_TERMINAL_PROMPT=0",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	run("init", "-q")
	commits := map[string]string{}
	for i, tag := range []string{"v1.0.0", "latest", "v1.1.0"} {
		if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(fmt.Sprintf("# release %d\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
		run("add", "-A")
		run("commit", "-q", "-m", tag)
		if strings.HasPrefix(tag, "v1.1") {
			run("tag", "-a", "-m", "release "+tag, tag)
		} else {
			run("tag", tag)
		}
		commits[tag] = run("rev-parse", tag+"^{commit}")
	}
	return dir, commits
}

// gitCall reads a module call of the git repository at dir with the
// given version constraint.
func gitCall(t *testing.T, dir, constraint string) []resolve.Requirement {
	t.Helper()
	src := fmt.Sprintf("module \"net\" {\n  source  = \"git::file://%s\"\n  version = %q\n}\n", filepath.ToSlash(dir), constraint)
	mod, err := config.ReadFiles([]config.File{{Name: "main.tf", Src: []byte(src)}}, "", config.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return mod.Requirements
}

// TestGitTagsAndPin resolves module calls against a real git repository:
// the pick carries the tag and the commit that git ls-remote reported,
// and a constraint that matches no tag lists the tags seen.
func TestGitTagsAndPin(t *testing.T) {
	ctx := context.Background()
	dir, commits := gitRepo(t)
	src := git.NewSource(git.Options{})

	sel, err := resolve.Resolve(ctx, gitCall(t, dir, "~> 1.0"), src, resolve.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pick := sel.Module("net")
	if pick == nil || pick.Package.Version.String() != "1.1.0" || pick.Tag != "v1.1.0" || pick.Package.Pin != commits["v1.1.0"] {
		t.Fatalf("pick = %+v, want 1.1.0, tag v1.1.0, pin %s", pick, commits["v1.1.0"])
	}
	got, err := src.Fetch(ctx, pick.Package, filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Pin != pick.Package.Pin {
		t.Errorf("fetched commit %s, pick pinned %s", got.Pin, pick.Package.Pin)
	}

	_, err = resolve.Resolve(ctx, gitCall(t, dir, "~> 2.0"), src, resolve.Options{})
	var nm *resolve.NoMatchError
	if !errors.As(err, &nm) {
		t.Fatalf("error %v (%T), want a NoMatchError", err, err)
	}
	want := fmt.Sprintf(`module "net": no tag of git::file://%s matches ~> 2.0 (required by root module (main.tf:3)); tags seen: v1.0.0, v1.1.0`, filepath.ToSlash(dir))
	if err.Error() != want {
		t.Errorf("error:\n%s\nwant:\n%s", err, want)
	}
}

// TestGitCachedVersionWithoutLock: the newest allowed version's tag was
// deleted upstream, and only the cache still has it. Without a lock entry,
// the pick carries the commit the source listed from its cache, so that
// fetching it works.
func TestGitCachedVersionWithoutLock(t *testing.T) {
	ctx := context.Background()
	dir, commits := gitRepo(t)
	src := git.NewSource(git.Options{CacheDir: t.TempDir(), Warn: func(string) {}})

	reqs := gitCall(t, dir, "~> 1.0")
	sel, err := resolve.Resolve(ctx, reqs, src, resolve.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Fetch(ctx, sel.Module("net").Package, filepath.Join(t.TempDir(), "first")); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command("git", "tag", "-d", "v1.1.0")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git tag -d: %v\n%s", err, out)
	}

	sel, err = resolve.Resolve(ctx, reqs, src, resolve.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pick := sel.Module("net")
	if pick.Package.Version.String() != "1.1.0" || pick.Package.Pin != commits["v1.1.0"] || pick.Reason != resolve.Newest {
		t.Fatalf("pick = %+v, want 1.1.0 newest pinned to %s", pick, commits["v1.1.0"])
	}
	got, err := src.Fetch(ctx, pick.Package, filepath.Join(t.TempDir(), "second"))
	if err != nil {
		t.Fatalf("fetching the cached version: %v", err)
	}
	if got.Pin != commits["v1.1.0"] {
		t.Errorf("fetched commit %s, want %s", got.Pin, commits["v1.1.0"])
	}
	unpinned := pick.Package
	unpinned.Pin = ""
	if _, err := src.Fetch(ctx, unpinned, filepath.Join(t.TempDir(), "third")); err == nil {
		t.Error("fetching the deleted tag without its commit worked; the test no longer shows why the pin is needed")
	}
}
