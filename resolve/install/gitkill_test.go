package install_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/source/assemble"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/git"
	"github.com/tflock/tflock/source/git/gittest"
)

// killingGit writes a git executable that, the first time it is asked to
// run the git command cmd, starts the real git and kills it (SIGKILL)
// shortly after, leaving whatever that run had written half done; every
// other run is the real git's.
func killingGit(t *testing.T, cmd string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the git shim is a shell script")
	}
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	path, mark := filepath.Join(dir, "git"), filepath.Join(dir, "killed")
	script := fmt.Sprintf(`#!/bin/sh
for a in "$@"; do
  if [ "$a" = %q ] && [ ! -e %q ]; then
    : > %q
    %q "$@" &
    pid=$!
    sleep 0.02
    kill -9 $pid 2>/dev/null
    wait $pid
    exit 137
  fi
done
exec %q "$@"
`, cmd, mark, mark, real, real)
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestGitKilledThenRerun: a git module's fetch into the git cache, and the
// writing of its tree from the cached clone, are killed half way (the git
// process, SIGKILL); the run fails. A rerun on the same git cache and
// package cache installs and locks exactly what a clean run on empty
// caches does, and Check agrees.
func TestGitKilledThenRerun(t *testing.T) {
	srv := gittest.New(t, gittest.Options{})
	commit := func(v string) gittest.Commit {
		files := map[string]string{"main.tf": "# vpc " + v + "\n"}
		for i := range 200 {
			files[fmt.Sprintf("data/f%03d.txt", i)] = fmt.Sprintf("%s %d\n", v, i)
		}
		return gittest.Commit{Files: files, Tags: []string{"v" + v}}
	}
	repo, err := srv.Repo("acme/vpc", commit("5.0.0"), commit("5.1.0"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := map[string]string{"main.tf": "module \"vpc\" {\n  source  = \"" + repo.Source() + "\"\n  version = \"~> 5.0\"\n}\n"}
	initWith := func(t *testing.T, gitPath, gitCache string, c *cache.Cache) (string, *install.Result, error) {
		dir := t.TempDir()
		writeFiles(t, dir, cfg)
		gopts := srv.SourceOptions()
		gopts.GitPath, gopts.CacheDir = gitPath, gitCache
		res, err := install.Init(context.Background(), install.Options{Dir: dir, Source: &assemble.Dispatch{Git: git.NewSource(gopts)}, Cache: c})
		return dir, res, err
	}
	_, clean, err := initWith(t, "", t.TempDir(), openCache(t))
	if err != nil {
		t.Fatal(err)
	}
	want := clean.Lock.Module("vpc")
	for _, cmd := range []string{"fetch", "read-tree"} {
		t.Run(cmd, func(t *testing.T) {
			gitCache, c := t.TempDir(), openCache(t)
			if _, _, err := initWith(t, killingGit(t, cmd), gitCache, c); err == nil {
				t.Logf("the run survived its killed git %s (it may have finished first)", cmd)
			}
			dir, res, err := initWith(t, "", gitCache, c)
			if err != nil {
				t.Fatalf("rerun after a killed git %s: %v", cmd, err)
			}
			got := res.Lock.Module("vpc")
			if got == nil || got.Version != want.Version || fmt.Sprint(got.Pin()) != fmt.Sprint(want.Pin()) || fmt.Sprint(got.Hashes) != fmt.Sprint(want.Hashes) {
				t.Fatalf("rerun locked %+v, a clean run %+v", got, want)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, ".terraform", "modules", "vpc", "data", "f199.txt")); string(b) != "5.1.0 199\n" {
				t.Errorf("installed data/f199.txt = %q", b)
			}
			if _, err := install.WriteLock(filepath.Join(dir, install.LockFileName), res); err != nil {
				t.Fatal(err)
			}
			if cr, err := install.Check(context.Background(), install.CheckOptions{Dir: dir}); err != nil || len(cr.Problems) > 0 {
				t.Errorf("Check after the rerun: %v %v", err, cr.Problems)
			}
		})
	}
}
