package git_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/git"
)

// TestManyProcesses runs several copies of this test binary sharing one
// cache directory, each listing the versions of one repository and fetching
// the same packages. All must succeed with identical results, and the cache
// must end with one entry and nothing half made.
func TestManyProcesses(t *testing.T) {
	if cache := os.Getenv("TFLOCK_GIT_CHILD_CACHE"); cache != "" {
		gitChild(t, cache, os.Getenv("TFLOCK_GIT_CHILD_SOURCE"))
		return
	}
	root := t.TempDir()
	f := newFixture(t, filepath.Join(root, "mod.git"))
	src := "git::" + f.repo.fileURL()
	cache := t.TempDir()
	const n = 6
	cmds := make([]*exec.Cmd, n)
	outs := make([]strings.Builder, n)
	for i := range n {
		cmd := exec.Command(os.Args[0], "-test.run=^TestManyProcesses$", "-test.count=1")
		cmd.Env = append(os.Environ(), "TFLOCK_GIT_CHILD_CACHE="+cache, "TFLOCK_GIT_CHILD_SOURCE="+src)
		cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	var results []string
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v\n%s", i, err, outs[i].String())
		}
		var lines []string
		for line := range strings.Lines(outs[i].String()) {
			if s, ok := strings.CutPrefix(strings.TrimSpace(line), "RESULT "); ok {
				lines = append(lines, s)
			}
		}
		results = append(results, strings.Join(lines, "\n"))
	}

	// The expected result, computed without a cache.
	want := childResult(t, git.NewSource(git.Options{}), src)
	for i, got := range results {
		if got != want {
			t.Errorf("process %d:\n%s\nwant:\n%s", i, got, want)
		}
	}
	if !strings.Contains(want, "1.1.0 "+f.c2) || !strings.Contains(want, "main "+f.c4) {
		t.Errorf("unexpected reference result:\n%s", want)
	}

	entries, err := os.ReadDir(cache)
	if err != nil || len(entries) != 1 {
		t.Fatalf("cache entries: %v %v", entries, err)
	}
	var names []string
	files, _ := os.ReadDir(filepath.Join(cache, entries[0].Name()))
	for _, e := range files {
		names = append(names, e.Name())
	}
	if want := []string{"repo.git", "repo.lock", "tags.json", "tags.lock"}; !slices.Equal(names, want) {
		t.Errorf("cache entry holds %q, want %q", names, want)
	}
	bare := filepath.Join(cache, entries[0].Name(), "repo.git")
	for _, c := range []string{f.c2, f.c4} {
		runGit(t, bare, "cat-file", "-e", c+"^{commit}")
	}
}

// gitChild is the body of one child process of TestManyProcesses.
func gitChild(t *testing.T, cache, src string) {
	for line := range strings.Lines(childResult(t, git.NewSource(git.Options{CacheDir: cache}), src)) {
		fmt.Printf("RESULT %s\n", strings.TrimSuffix(line, "\n"))
	}
}

// childResult lists the versions of src and fetches version 1.1.0 and
// branch main, and describes what it got, one line each.
func childResult(t *testing.T, s *git.Source, src string) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	list, err := s.Versions(ctx, source.ModulePackage{Source: src})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range list {
		fmt.Fprintf(&b, "version %s %s %s\n", a.Version, a.Ref, a.Pin)
	}
	for _, pkg := range []source.ModulePackage{
		{Source: src, Version: mustVersion(t, "1.1.0")},
		{Source: src, Ref: "main"},
	} {
		got, err := s.Fetch(ctx, pkg, filepath.Join(t.TempDir(), "out"))
		if err != nil {
			t.Fatal(err)
		}
		name := pkg.Ref
		if name == "" {
			name = pkg.Version.String()
		}
		fmt.Fprintf(&b, "fetch %s %s %v\n", name, got.Pin, got.Hashes)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
