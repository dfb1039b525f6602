package install_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/assemble"
	"github.com/tflock/tflock/source/git"
	"github.com/tflock/tflock/source/git/gittest"
)

// countingGit writes a git executable that records the arguments of every
// run (one line each) in the file it returns, then runs the real git.
func countingGit(t *testing.T) (path, log string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the git shim is a shell script")
	}
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	path, log = filepath.Join(dir, "git"), filepath.Join(dir, "calls.log")
	script := fmt.Sprintf("#!/bin/sh\nprintf '%%s\\n' \"$*\" >> %q\nexec %q \"$@\"\n", log, real)
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, log
}

// gitCalls returns the recorded git runs, each without the -c settings
// given to every command, and forgets them.
func gitCalls(t *testing.T, log string) []string {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	os.Remove(log)
	var calls []string
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		for len(f) >= 2 && f[0] == "-c" {
			f = f[2:]
		}
		calls = append(calls, strings.Join(f, " "))
	}
	return calls
}

// TestInitGitProcesses: a cold Init of a tree of git modules runs one
// "git ls-remote" per repository (the versions of a constrained call, the
// refs of the calls pinned by a ref and the commits fetched all come from
// it), one network fetch per repository (by commit, into the git cache),
// and materializes each tree from the cached clone with "read-tree", with
// no clone, no checkout repository and no second fetch. The tree: a call
// of vpc constrained to "~> 5.0", a call of app at v1.2.3, whose module
// calls its own subdirectory at the same tag and vpc's modules/sg at
// v5.1.0, the version the constraint selects.
func TestInitGitProcesses(t *testing.T) {
	gitPath, log := countingGit(t)
	srv := gittest.New(t, gittest.Options{})
	vpc := func(v string) gittest.Commit {
		return gittest.Commit{Files: map[string]string{
			"main.tf":            "# vpc " + v + "\n",
			"modules/sg/main.tf": "# sg " + v + "\n",
		}, Tags: []string{"v" + v}}
	}
	vpcRepo, err := srv.Repo("acme/vpc", vpc("4.0.0"), vpc("5.0.0"), vpc("5.1.0"), vpc("6.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	appRepo, err := srv.Repo("acme/app", gittest.Commit{Files: map[string]string{
		"main.tf":     "module \"sub\" {\n  source = \"" + "git::https://" + srv.Host + "/acme/app.git//sub?ref=v1.2.3\"\n}\n\nmodule \"sg\" {\n  source = \"" + vpcRepo.Source() + "//modules/sg?ref=v5.1.0\"\n}\n",
		"sub/main.tf": "# sub\n",
	}, Tags: []string{"v1.2.3"}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": "module \"vpc\" {\n  source  = \"" + vpcRepo.Source() + "\"\n  version = \"~> 5.0\"\n}\n\nmodule \"app\" {\n  source = \"" + appRepo.Source() + "?ref=v1.2.3\"\n}\n"})

	gopts := srv.SourceOptions()
	gopts.GitPath = gitPath
	gopts.CacheDir = t.TempDir()
	src := &assemble.Dispatch{Git: git.NewSource(gopts)}
	res, err := install.Init(context.Background(), install.Options{Dir: dir, Source: src, Cache: openCache(t)})
	if err != nil {
		t.Fatal(err)
	}
	if m := res.Lock.Module("vpc"); m == nil || m.Version.String() != "5.1.0" {
		t.Fatalf("vpc locked as %+v, want 5.1.0", m)
	}
	for _, f := range []string{"vpc/main.tf", "app/main.tf", "app.sub/sub/main.tf", "app.sg/modules/sg/main.tf"} {
		if _, err := os.Stat(filepath.Join(dir, ".terraform", "modules", filepath.FromSlash(f))); err != nil {
			t.Errorf("not installed: %v", err)
		}
	}

	calls := gitCalls(t, log)
	count := func(prefix string) (n int) {
		for _, c := range calls {
			if strings.HasPrefix(c, prefix) {
				n++
			}
		}
		return n
	}
	for _, repo := range []string{vpcRepo.URL(), appRepo.URL()} {
		var listed, fetched int
		for _, c := range calls {
			if strings.Contains(c, repo) {
				switch {
				case strings.HasPrefix(c, "ls-remote "):
					listed++
				case strings.HasPrefix(c, "fetch "):
					fetched++
				default:
					t.Errorf("git %s: unexpected command naming the repository", c)
				}
			}
		}
		if listed != 1 || fetched != 1 {
			t.Errorf("%s: %d ls-remote and %d fetches, want 1 and 1", repo, listed, fetched)
		}
	}
	if n := count("fetch "); n != 2 {
		t.Errorf("%d fetches, want 2 (one per repository, none from the cache)", n)
	}
	if n := count("clone ") + count("checkout ") + count("init -q\n") + count("submodule "); n != 0 {
		t.Errorf("%d clones, checkouts or submodule updates, want none", n)
	}
	if slices.Contains(calls, "init -q") {
		t.Error("a checkout repository was made (git init -q)")
	}
	// Per repository: ls-remote, init --bare, fetch, read-tree; and the
	// second package of each (app at v1.2.3 for its subdirectory's call,
	// which the package cache does not answer for a ref; vpc at the ref
	// v5.1.0) is found in the clone (rev-parse) and read from it.
	if len(calls) != 12 || count("init -q --bare") != 2 || count("--git-dir") != 4 || count("rev-parse ") != 2 {
		t.Errorf("%d git runs, want 12:\n%s", len(calls), strings.Join(calls, "\n"))
	}
}

// preparingGit is a git source that records the packages Init prepares.
type preparingGit struct {
	*git.Source
	mu       sync.Mutex
	prepared []string
}

func (p *preparingGit) Prepare(ctx context.Context, pkg source.Package) {
	p.mu.Lock()
	p.prepared = append(p.prepared, pkg.(source.ModulePackage).Source+" "+pkg.(source.ModulePackage).Ref)
	p.mu.Unlock()
	p.Source.Prepare(ctx, pkg)
}

// TestInitPreparesRefListings: Init lets the git source list the
// repository of a call pinned by a ref while the level's constrained calls
// are resolved (git.Source.Prepare), and that of a call a fetched module
// makes (app's call of db) as soon as the module is read, for the calls
// without a lock entry only: a re-run with the lock file prepares nothing,
// and asks the server nothing.
func TestInitPreparesRefListings(t *testing.T) {
	srv := gittest.New(t, gittest.Options{})
	vpc, err := srv.Repo("acme/vpc", gittest.Commit{Files: map[string]string{"main.tf": "# vpc\n"}, Tags: []string{"v5.0.0"}})
	if err != nil {
		t.Fatal(err)
	}
	db, err := srv.Repo("acme/db", gittest.Commit{Files: map[string]string{"main.tf": "# db\n"}, Tags: []string{"v2.0.0"}})
	if err != nil {
		t.Fatal(err)
	}
	app, err := srv.Repo("acme/app", gittest.Commit{Files: map[string]string{"main.tf": "module \"db\" {\n  source = \"" + db.Source() + "?ref=v2.0.0\"\n}\n"}, Tags: []string{"v1.2.3"}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": "module \"vpc\" {\n  source  = \"" + vpc.Source() + "\"\n  version = \"~> 5.0\"\n}\n\nmodule \"app\" {\n  source = \"" + app.Source() + "?ref=v1.2.3\"\n}\n"})
	gopts := srv.SourceOptions()
	gopts.CacheDir = t.TempDir()
	g := &preparingGit{Source: git.NewSource(gopts)}
	c := openCache(t)
	initAndWrite(t, install.Options{Dir: dir, Source: &assemble.Dispatch{Git: g}, Cache: c})
	slices.Sort(g.prepared)
	if want := []string{app.Source() + " v1.2.3", db.Source() + " v2.0.0"}; !slices.Equal(g.prepared, want) {
		t.Errorf("prepared %q, want %q", g.prepared, want)
	}
	g.prepared = nil
	before := srv.Requests()
	initAndWrite(t, install.Options{Dir: dir, Source: &assemble.Dispatch{Git: g}, Cache: c})
	if len(g.prepared) != 0 || srv.Requests() != before {
		t.Errorf("re-run with the lock file: prepared %q, %d requests", g.prepared, srv.Requests()-before)
	}
}
