package git_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"golang.org/x/mod/sumdb/dirhash"

	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/address"
	"github.com/tflock/tflock/source/git"
)

// fixture is a repository with tags v1.0.0 (lightweight), 1.1.0
// (annotated), v2.0.0-beta.1 (annotated), and non-version tags.
type fixture struct {
	repo           *repo
	c1, c2, c3, c4 string
}

func newFixture(t *testing.T, dir string) *fixture {
	r := newRepo(t, dir)
	f := &fixture{repo: r}
	f.c1 = r.commit("one", map[string]string{"main.tf": "# v1.0.0\n", "modules/a/a.tf": "# a\n"})
	r.tag("v1.0.0")
	r.tag("release-1")
	f.c2 = r.commit("two", map[string]string{"main.tf": "# v1.1.0\n"})
	r.annotatedTag("1.1.0")
	r.tag("v1.1") // not strict semver
	f.c3 = r.commit("three", map[string]string{"main.tf": "# v2 beta\n"})
	r.annotatedTag("v2.0.0-beta.1")
	f.c4 = r.commit("four", map[string]string{"main.tf": "# main\n"})
	return f
}

func mustVersion(t *testing.T, s string) versions.Version {
	t.Helper()
	v, err := versions.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func h1(t *testing.T, dir string) string {
	t.Helper()
	h, err := dirhash.HashDir(dir, "", dirhash.Hash1)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestVersionsAndFetch(t *testing.T) {
	root := t.TempDir()
	f := newFixture(t, filepath.Join(root, "mod.git"))
	httpBase := serveHTTP(t, root)
	transports := map[string]string{
		"file": "git::" + f.repo.fileURL(),
		"http": "git::" + httpBase + "/mod.git",
	}
	for name, src := range transports {
		t.Run(name, func(t *testing.T) {
			for _, cache := range []string{"", t.TempDir()} {
				s := git.NewSource(git.Options{CacheDir: cache})
				ctx := context.Background()
				list, err := s.Versions(ctx, source.ModulePackage{Source: src})
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, a := range list {
					got = append(got, a.Version.String()+" "+a.Ref+" "+a.Pin)
				}
				want := []string{
					"1.0.0 v1.0.0 " + f.c1,
					"1.1.0 1.1.0 " + f.c2, // annotated: peeled to the commit
					"2.0.0-beta.1 v2.0.0-beta.1 " + f.c3,
				}
				if !slices.Equal(got, want) {
					t.Fatalf("Versions = %q, want %q", got, want)
				}

				dir := filepath.Join(t.TempDir(), "out")
				pkg := source.ModulePackage{Source: src, Version: mustVersion(t, "1.1.0")}
				fetched, err := s.Fetch(ctx, pkg, dir)
				if err != nil {
					t.Fatal(err)
				}
				if fetched.Pin != f.c2 {
					t.Errorf("Pin = %s, want %s", fetched.Pin, f.c2)
				}
				b, err := os.ReadFile(filepath.Join(dir, "main.tf"))
				if err != nil || string(b) != "# v1.1.0\n" {
					t.Errorf("main.tf = %q, %v", b, err)
				}
				if _, err := os.Stat(filepath.Join(dir, ".git")); !os.IsNotExist(err) {
					t.Errorf(".git left in the result: %v", err)
				}
				if len(fetched.Hashes) != 1 || string(fetched.Hashes[0]) != h1(t, dir) {
					t.Errorf("Hashes = %v, want [%s]", fetched.Hashes, h1(t, dir))
				}

				// Locked by commit: the same commit again is fine.
				pkg.Pin = f.c2
				if _, err := s.Fetch(ctx, pkg, filepath.Join(t.TempDir(), "again")); err != nil {
					t.Errorf("fetch with matching pin: %v", err)
				}
			}
		})
	}
}

func TestFetchRef(t *testing.T) {
	root := t.TempDir()
	f := newFixture(t, filepath.Join(root, "mod.git"))
	httpBase := serveHTTP(t, root)
	for name, base := range map[string]string{"file": "git::" + f.repo.fileURL(), "http": "git::" + httpBase + "/mod.git"} {
		t.Run(name, func(t *testing.T) {
			s := git.NewSource(git.Options{})
			ctx := context.Background()
			tests := map[string]struct{ ref, commit, content string }{
				"branch":       {"main", f.c4, "# main\n"},
				"tag":          {"v1.0.0", f.c1, "# v1.0.0\n"},
				"annotated":    {"1.1.0", f.c2, "# v1.1.0\n"},
				"commit":       {f.c3, f.c3, "# v2 beta\n"},
				"short commit": {f.c1[:10], f.c1, "# v1.0.0\n"},
				"default":      {"", f.c4, "# main\n"},
			}
			for tn, tc := range tests {
				dir := filepath.Join(t.TempDir(), "out")
				got, err := s.Fetch(ctx, source.ModulePackage{Source: base, Ref: tc.ref}, dir)
				if err != nil {
					t.Errorf("%s: %v", tn, err)
					continue
				}
				if got.Pin != tc.commit {
					t.Errorf("%s: Pin = %s, want %s", tn, got.Pin, tc.commit)
				}
				if b, _ := os.ReadFile(filepath.Join(dir, "main.tf")); string(b) != tc.content {
					t.Errorf("%s: main.tf = %q, want %q", tn, b, tc.content)
				}
			}
			_, err := s.Fetch(ctx, source.ModulePackage{Source: base, Ref: "no-such-branch"}, filepath.Join(t.TempDir(), "x"))
			if !errors.Is(err, source.ErrVersionNotFound) {
				t.Errorf("unknown ref: got %v, want ErrVersionNotFound", err)
			}
		})
	}
}

func TestMovedTag(t *testing.T) {
	root := t.TempDir()
	f := newFixture(t, filepath.Join(root, "mod.git"))
	src := "git::" + f.repo.fileURL()
	s := git.NewSource(git.Options{CacheDir: t.TempDir()})
	ctx := context.Background()
	pkg := source.ModulePackage{Source: src, Version: mustVersion(t, "1.0.0"), Pin: f.c1}
	if _, err := s.Fetch(ctx, pkg, filepath.Join(t.TempDir(), "a")); err != nil {
		t.Fatal(err)
	}
	// Move the tag to another commit.
	f.repo.tag("v1.0.0")
	head := f.c4
	dir := filepath.Join(t.TempDir(), "b")
	_, err := s.Fetch(ctx, pkg, dir)
	var moved *git.MovedTagError
	if !errors.As(err, &moved) {
		t.Fatalf("got %v, want a *MovedTagError", err)
	}
	if moved.Locked != f.c1 || moved.Now != head || moved.Ref != "v1.0.0" {
		t.Errorf("MovedTagError = %+v", moved)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("failed fetch left %s behind", dir)
	}
	// A tag named by the source's ref is a tag too.
	_, err = s.Fetch(ctx, source.ModulePackage{Source: src, Ref: "v1.0.0", Pin: f.c1}, filepath.Join(t.TempDir(), "c"))
	if !errors.As(err, &moved) || moved.Ref != "v1.0.0" {
		t.Errorf("moved tag named by ref: got %v, want a *MovedTagError", err)
	}
}

// TestBranchAtPin: a branch, or the default branch, pinned to the commit
// a lock recorded is fetched at that commit after the branch moved on,
// from a cold cache and a warm one, over file:// and smart HTTP, and no
// "moved" error is ever raised for it. Without a pin, the new head.
func TestBranchAtPin(t *testing.T) {
	root := t.TempDir()
	f := newFixture(t, filepath.Join(root, "mod.git"))
	httpBase := serveHTTP(t, root)
	for name, src := range map[string]string{"file": "git::" + f.repo.fileURL(), "http": "git::" + httpBase + "/mod.git"} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			warm := git.NewSource(git.Options{CacheDir: t.TempDir()})
			for _, ref := range []string{"main", ""} {
				pkg := source.ModulePackage{Source: src, Ref: ref}
				got, err := warm.Fetch(ctx, pkg, filepath.Join(t.TempDir(), "first"))
				if err != nil {
					t.Fatal(err)
				}
				pkg.Pin = got.Pin
				// The branch moves on.
				f.repo.commit("moved "+name+" "+ref, map[string]string{"main.tf": "# moved " + name + " " + ref + "\n"})
				for _, s := range []*git.Source{warm, git.NewSource(git.Options{}), git.NewSource(git.Options{CacheDir: t.TempDir()})} {
					dir := filepath.Join(t.TempDir(), "again")
					again, err := s.Fetch(ctx, pkg, dir)
					if err != nil {
						t.Fatalf("ref %q pinned at %s after the branch moved: %v", ref, pkg.Pin, err)
					}
					if again.Pin != pkg.Pin || h1(t, dir) != string(got.Hashes[0]) {
						t.Errorf("ref %q: fetched %s (%s), want the pinned %s (%s)", ref, again.Pin, h1(t, dir), pkg.Pin, got.Hashes[0])
					}
				}
				// Unpinned, the branch's new head.
				head, err := warm.Fetch(ctx, source.ModulePackage{Source: src, Ref: ref}, filepath.Join(t.TempDir(), "head"))
				if err != nil {
					t.Fatal(err)
				}
				if want := runGit(t, f.repo.dir, "rev-parse", "HEAD"); head.Pin != want {
					t.Errorf("ref %q unpinned: %s, want the head %s", ref, head.Pin, want)
				}
			}
		})
	}
	// A pin on a branch that has moved on, from scratch.
	s := git.NewSource(git.Options{CacheDir: t.TempDir()})
	dir := filepath.Join(t.TempDir(), "old")
	got, err := s.Fetch(context.Background(), source.ModulePackage{Source: "git::" + f.repo.fileURL(), Ref: "main", Pin: f.c4}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "main.tf")); got.Pin != f.c4 || string(b) != "# main\n" {
		t.Errorf("pinned branch from a cold cache: %s %q, want %s %q", got.Pin, b, f.c4, "# main\n")
	}
}

func TestDeletedTagFromCache(t *testing.T) {
	root := t.TempDir()
	f := newFixture(t, filepath.Join(root, "mod.git"))
	src := "git::" + f.repo.fileURL()
	var mu sync.Mutex
	var warnings []string
	s := git.NewSource(git.Options{CacheDir: t.TempDir(), Warn: func(m string) { mu.Lock(); warnings = append(warnings, m); mu.Unlock() }})
	ctx := context.Background()
	pkg := source.ModulePackage{Source: src, Version: mustVersion(t, "1.0.0"), Pin: f.c1}
	before, err := s.Versions(ctx, source.ModulePackage{Source: src})
	if err != nil {
		t.Fatal(err)
	}
	if len(before) != 3 || before[0].Ref != "v1.0.0" {
		t.Fatalf("Versions = %v, want 1.0.0 first of 3", before)
	}
	first, err := s.Fetch(ctx, pkg, filepath.Join(t.TempDir(), "a"))
	if err != nil {
		t.Fatal(err)
	}
	// Another cache that saw the tag list but never fetched the commit.
	listedOnly := git.NewSource(git.Options{CacheDir: t.TempDir()})
	if _, err := listedOnly.Versions(ctx, source.ModulePackage{Source: src}); err != nil {
		t.Fatal(err)
	}
	runGit(t, f.repo.dir, "tag", "-d", "v1.0.0")
	runGit(t, f.repo.dir, "reflog", "expire", "--expire=now", "--all")
	runGit(t, f.repo.dir, "gc", "-q", "--prune=now")

	dir := filepath.Join(t.TempDir(), "b")
	got, err := s.Fetch(ctx, pkg, dir)
	if err != nil {
		t.Fatalf("deleted tag with a warm cache: %v", err)
	}
	if got.Pin != f.c1 || !slices.Equal(got.Hashes, first.Hashes) {
		t.Errorf("got pin %s hashes %v, want %s %v", got.Pin, got.Hashes, f.c1, first.Hashes)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "no longer exists upstream") {
		t.Errorf("warnings = %q", warnings)
	}
	// Without a cache, or with another pin, it is not found.
	_, err = git.NewSource(git.Options{}).Fetch(ctx, pkg, filepath.Join(t.TempDir(), "c"))
	if !errors.Is(err, source.ErrVersionNotFound) {
		t.Errorf("no cache: got %v, want ErrVersionNotFound", err)
	}
	pkg.Pin = f.c2
	_, err = s.Fetch(ctx, pkg, filepath.Join(t.TempDir(), "d"))
	if !errors.Is(err, source.ErrVersionNotFound) {
		t.Errorf("other pin: got %v, want ErrVersionNotFound", err)
	}

	// Versions still lists 1.0.0, from the cache, with a warning: the
	// list is the one seen before the tag was deleted.
	mu.Lock()
	warnings = nil
	mu.Unlock()
	after, err := s.Versions(ctx, source.ModulePackage{Source: src})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(after, before) {
		t.Errorf("Versions after the deletion = %v, want the list before it %v", after, before)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], `"v1.0.0"`) || !strings.Contains(warnings[0], "no longer exists upstream") {
		t.Errorf("warnings = %q", warnings)
	}
	// Without a cache, or with a cache that never fetched the commit, the
	// deleted version is not listed.
	for name, other := range map[string]*git.Source{"no cache": git.NewSource(git.Options{}), "tags only": listedOnly} {
		list, err := other.Versions(ctx, source.ModulePackage{Source: src})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(list, before[1:]) {
			t.Errorf("%s: Versions = %v, want %v", name, list, before[1:])
		}
	}
}

func TestSubdirAndSubmodules(t *testing.T) {
	root := t.TempDir()
	sub := newRepo(t, filepath.Join(root, "sub.git"))
	sub.commit("sub", map[string]string{"lib.tf": "# lib\n"})
	main := newRepo(t, filepath.Join(root, "main.git"))
	main.commit("one", map[string]string{"modules/a/main.tf": "# a\n"})
	runGit(t, main.dir, "submodule", "add", "-q", sub.fileURL(), "vendor/sub")
	c := main.commit("with submodule", nil)
	main.tag("v1.0.0")

	src, err := address.ParseRemote("git::" + main.fileURL() + "//modules/a")
	if err != nil {
		t.Fatal(err)
	}
	if src.Subdir != "modules/a" {
		t.Fatalf("Subdir = %q", src.Subdir)
	}
	s := git.NewSource(git.Options{})
	dir := filepath.Join(t.TempDir(), "out")
	got, err := s.Fetch(context.Background(), source.ModulePackage{Source: src.Package(), Version: mustVersion(t, "1.0.0")}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Pin != c {
		t.Errorf("Pin = %s, want %s", got.Pin, c)
	}
	for _, name := range []string{"modules/a/main.tf", "vendor/sub/lib.tf", ".gitmodules"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "vendor/sub/.git")); !os.IsNotExist(err) {
		t.Errorf("submodule .git left: %v", err)
	}
}

func TestSelectAndValidate(t *testing.T) {
	f := newFixture(t, filepath.Join(t.TempDir(), "mod.git"))
	src := "git::" + f.repo.fileURL()
	s := git.NewSource(git.Options{})
	ctx := context.Background()
	c, err := versions.ParseModuleConstraints("~> 1.0")
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Select(ctx, source.ModulePackage{Source: src}, c)
	if err != nil {
		t.Fatal(err)
	}
	if a.Version.String() != "1.1.0" || a.Pin != f.c2 {
		t.Errorf("Select = %+v", a)
	}
	c, _ = versions.ParseModuleConstraints(">= 3.0")
	_, err = s.Select(ctx, source.ModulePackage{Source: src}, c)
	var nm *git.NoMatchingTagError
	if !errors.As(err, &nm) {
		t.Fatalf("got %v, want *NoMatchingTagError", err)
	}
	if want := []string{"1.1.0", "release-1", "v1.0.0", "v1.1", "v2.0.0-beta.1"}; !slices.Equal(nm.Tags, want) {
		t.Errorf("Tags = %q, want %q", nm.Tags, want)
	}
	if !strings.Contains(err.Error(), "release-1") {
		t.Errorf("error does not list the tags: %v", err)
	}

	withRef := address.MustParseModuleSource("git::https://example.com/x.git?ref=v1.0.0")
	if err := git.Validate(withRef, c); !errors.Is(err, git.ErrRefWithVersion) {
		t.Errorf("Validate(ref + constraint) = %v", err)
	}
	if err := git.Validate(withRef, versions.Constraints{}); err != nil {
		t.Errorf("Validate(ref, no constraint) = %v", err)
	}
	if err := git.Validate(address.MustParseModuleSource("git::https://example.com/x.git"), c); err != nil {
		t.Errorf("Validate(constraint, no ref) = %v", err)
	}
}

func TestGitMissing(t *testing.T) {
	s := git.NewSource(git.Options{GitPath: filepath.Join(t.TempDir(), "no-git-here")})
	_, err := s.Versions(context.Background(), source.ModulePackage{Source: "git::https://example.com/x.git"})
	if !errors.Is(err, git.ErrGitNotFound) {
		t.Fatalf("got %v, want ErrGitNotFound", err)
	}
	if !strings.Contains(err.Error(), "GitPath") {
		t.Errorf("error does not say what to do: %v", err)
	}
}

func TestCredentialsNotInErrors(t *testing.T) {
	root := t.TempDir()
	base := serveHTTP(t, root)
	withCreds := strings.Replace(base, "http://", "http://alice:s3cret@", 1) + "/missing.git"
	s := git.NewSource(git.Options{CacheDir: t.TempDir()})
	_, err := s.Versions(context.Background(), source.ModulePackage{Source: "git::" + withCreds})
	if err == nil {
		t.Fatal("no error for a missing repository")
	}
	if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "alice") {
		t.Errorf("error leaks credentials: %v", err)
	}
	if !errors.Is(err, source.ErrNotFound) {
		t.Errorf("got %v, want ErrNotFound", err)
	}
}

func TestNotGit(t *testing.T) {
	s := git.NewSource(git.Options{})
	for _, src := range []string{"hashicorp/consul/aws", "oci://example.com/x", "https://example.com/x.zip"} {
		if _, err := s.Versions(context.Background(), source.ModulePackage{Source: src}); !errors.Is(err, source.ErrNotFound) {
			t.Errorf("%s: got %v, want ErrNotFound", src, err)
		}
	}
}
