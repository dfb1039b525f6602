package git_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/git"
)

// treeListing lists every file, directory and link under dir with its
// mode and content or target: what two ways of writing a tree must agree
// on.
func treeListing(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		line := filepath.ToSlash(rel) + " " + info.Mode().String()
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			line += " -> " + target
		case info.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			line += fmt.Sprintf(" %q", b)
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// TestCachedTreeMatchesCheckout: a package written from the cached clone
// (read-tree, no checkout repository) is the tree a checkout gives, as
// fetched without a cache: executable bits, symbolic links, names with
// spaces and non-ASCII letters, the line endings a .gitattributes asks
// for, and, once the repository has a submodule, the submodule's files.
// The h1: and the pin agree, cold and warm.
func TestCachedTreeMatchesCheckout(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links and modes")
	}
	root := t.TempDir()
	sub := newRepo(t, filepath.Join(root, "sub.git"))
	sub.commit("sub", map[string]string{"lib.tf": "# lib\n"})
	r := newRepo(t, filepath.Join(root, "mod.git"))
	r.commit("one", map[string]string{
		"main.tf":                   "# main\n",
		"scripts/run.sh":            "#!/bin/sh\necho run\n",
		".gitattributes":            "*.txt text eol=crlf\n",
		"notes.txt":                 "line one\nline two\n",
		"dir with space/ünïcode.tf": "# unicode\n",
		"a/b/c/d/deep.tf":           "# deep\n",
	})
	if err := os.Chmod(filepath.Join(r.dir, "scripts", "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("main.tf", filepath.Join(r.dir, "link.tf")); err != nil {
		t.Fatal(err)
	}
	r.commit("modes and links", nil)
	r.tag("v1.0.0")
	runGit(t, r.dir, "submodule", "add", "-q", sub.fileURL(), "vendor/sub")
	r.commit("with submodule", nil)
	r.tag("v2.0.0")

	ctx := context.Background()
	src := "git::" + r.fileURL()
	cached := git.NewSource(git.Options{CacheDir: t.TempDir()})
	plain := git.NewSource(git.Options{})
	for _, v := range []string{"1.0.0", "2.0.0"} {
		pkg := source.ModulePackage{Source: src, Version: mustVersion(t, v)}
		want, err := plain.Fetch(ctx, pkg, filepath.Join(t.TempDir(), "out"))
		if err != nil {
			t.Fatal(err)
		}
		wantTree := treeListing(t, want.Dir)
		if !strings.Contains(wantTree, `notes.txt -rw-r--r-- "line one\r\nline two\r\n"`) || !strings.Contains(wantTree, "run.sh -rwxr-xr-x") || !strings.Contains(wantTree, "link.tf Lrwxrwxrwx -> main.tf") {
			t.Fatalf("%s: the checkout does not show the fixture's modes, link and line endings:\n%s", v, wantTree)
		}
		if v == "2.0.0" && !strings.Contains(wantTree, "vendor/sub/lib.tf") {
			t.Fatalf("%s: the checkout has no submodule:\n%s", v, wantTree)
		}
		for _, run := range []string{"cold", "warm"} {
			got, err := cached.Fetch(ctx, pkg, filepath.Join(t.TempDir(), "out"))
			if err != nil {
				t.Fatalf("%s, %s cache: %v", v, run, err)
			}
			if got.Pin != want.Pin || got.Hashes[0] != want.Hashes[0] {
				t.Errorf("%s, %s cache: pin %s, %s; want %s, %s", v, run, got.Pin, got.Hashes[0], want.Pin, want.Hashes[0])
			}
			if gotTree := treeListing(t, got.Dir); gotTree != wantTree {
				t.Errorf("%s, %s cache: tree\n%s\nwant\n%s", v, run, gotTree, wantTree)
			}
		}
	}
}

// TestShareListings: in a run (source.WithRun), a repository's versions, a
// ref of it, a version fetched and the ref fetched come from one
// ls-remote; the default branch and a ref outside branches and tags are
// listed once each. Outside a run, each call lists again. A listing whose
// caller was cancelled is not remembered.
func TestShareListings(t *testing.T) {
	f := newFixture(t, filepath.Join(t.TempDir(), "mod.git"))
	shim := newGitShim(t)
	src := "git::" + f.repo.fileURL()
	s := git.NewSource(git.Options{GitPath: shim.path, CacheDir: t.TempDir()})
	calls := func(ctx context.Context) int {
		t.Helper()
		shim.reset()
		if _, err := s.Versions(ctx, source.ModulePackage{Source: src}); err != nil {
			t.Fatal(err)
		}
		for _, pkg := range []source.ModulePackage{
			{Source: src, Version: mustVersion(t, "1.1.0")},
			{Source: src, Ref: "v1.0.0"},
			{Source: src, Ref: "main"},
			{Source: src, Ref: "v1.0.0"},
		} {
			if _, err := s.Fetch(ctx, pkg, filepath.Join(t.TempDir(), "out")); err != nil {
				t.Fatal(err)
			}
		}
		return len(shim.calls())
	}
	if n := calls(context.Background()); n != 5 {
		t.Errorf("outside a run: %d ls-remote, want 5 (one per call)", n)
	}
	shared := source.WithRun(context.Background())
	if source.WithRun(shared) != shared {
		t.Error("WithRun of a run's context made another run")
	}
	if n := calls(shared); n != 1 {
		t.Errorf("in a run: %d ls-remote (%q), want 1", n, shim.calls())
	}
	if n := calls(shared); n != 0 {
		t.Errorf("in a run, again: %d ls-remote (%q), want 0", n, shim.calls())
	}
	shim.reset()
	for range 2 {
		for _, ref := range []string{"", "HEAD"} {
			if _, err := s.Fetch(shared, source.ModulePackage{Source: src, Ref: ref}, filepath.Join(t.TempDir(), "out")); err != nil {
				t.Fatal(err)
			}
		}
	}
	if c := shim.calls(); len(c) != 2 {
		t.Errorf("default branch and HEAD, twice each: ls-remote %q, want two", c)
	}

	// Concurrent callers share the one listing in flight.
	shim.reset()
	concurrent := source.WithRun(context.Background())
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			_, err := s.Versions(concurrent, source.ModulePackage{Source: src})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if c := shim.calls(); len(c) != 1 {
		t.Errorf("8 concurrent listings: ls-remote %q, want one", c)
	}

	// A listing cancelled is listed again by the next caller.
	other := git.NewSource(git.Options{GitPath: shim.path})
	run := source.WithRun(context.Background())
	cancelled, cancel := context.WithCancel(run)
	cancel()
	if _, err := other.Versions(cancelled, source.ModulePackage{Source: src}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	if list, err := other.Versions(run, source.ModulePackage{Source: src}); err != nil || len(list) == 0 {
		t.Errorf("after a cancelled listing: %v, %v", list, err)
	}
}
