package git_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/git"
	"github.com/tflock/tflock/source/git/gittest"
)

// TestAmbiguousRefRefused is the regression test for issue 22 item 7: a
// server adds a branch named like a tag, at another commit. OpenTofu then
// installs the branch when the source has a "depth" argument ("git clone
// --depth 1 --branch" prefers it) and the tag otherwise; tflock resolved
// the tag either way. Now a ref that names the tag by its short name (with
// or without depth or a lock file's commit: the ls-remote that resolves it
// reports both) is refused with an error naming both commits, and so is a
// version, whose tag a managed "ref" writes, when the source has a depth
// (without one, tofu installs the tag, as tflock does, and no other
// request is made). A branch at the tag's own commit, or a full ref name,
// is not ambiguous.
func TestAmbiguousRefRefused(t *testing.T) {
	srv := gittest.New(t, gittest.Options{})
	repo, err := srv.Repo("acme/amb", gittest.Commit{Files: map[string]string{"main.tf": "# tagged\n"}, Tags: []string{"v1.0.0"}})
	if err != nil {
		t.Fatal(err)
	}
	tagged, _ := repo.Rev("v1.0.0")
	ctx := context.Background()
	s := git.NewSource(srv.SourceOptions())
	fetch := func(pkg source.ModulePackage) (*source.Fetched, error) {
		return s.Fetch(ctx, pkg, filepath.Join(t.TempDir(), "out"))
	}
	v1 := versions.MustParse("1.0.0")
	forms := []source.ModulePackage{
		{Source: repo.Source(), Ref: "v1.0.0"},
		{Source: repo.Source() + "?depth=1", Ref: "v1.0.0"},
		{Source: repo.Source(), Ref: "v1.0.0", Pin: tagged},
		{Source: repo.Source() + "?depth=1", Version: v1},
	}
	versionNoDepth := source.ModulePackage{Source: repo.Source(), Version: v1}
	for _, pkg := range append(forms, versionNoDepth) {
		if f, err := fetch(pkg); err != nil || f.Pin != tagged {
			t.Fatalf("%+v before the branch: %v", pkg, err)
		}
	}
	// A branch of the same name at the tag's commit names the same tree.
	if _, err := gittest.Git(ctx, repo.Dir, "branch", "v1.0.0", tagged); err != nil {
		t.Fatal(err)
	}
	for _, pkg := range forms {
		if f, err := fetch(pkg); err != nil || f.Pin != tagged {
			t.Errorf("%+v with a branch at the tag's commit: %v", pkg, err)
		}
	}
	// The server moves the branch on: one name, two commits.
	if _, err := gittest.Git(ctx, repo.Dir, "checkout", "-q", "v1.0.0"); err != nil {
		t.Fatal(err)
	}
	branch, err := repo.Commit(gittest.Commit{Files: map[string]string{"main.tf": "# the branch\n"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range forms {
		_, err := fetch(pkg)
		var ae *git.AmbiguousRefError
		if !errors.As(err, &ae) || !errors.Is(err, git.ErrAmbiguousRef) || ae.Tag != tagged || ae.Branch != branch || ae.Ref != "v1.0.0" {
			t.Errorf("%+v: err = %v, want an *AmbiguousRefError naming the tag's commit %s and the branch's %s", pkg, err, tagged, branch)
		}
	}
	if f, err := fetch(versionNoDepth); err != nil || f.Pin != tagged {
		t.Errorf("version without depth: %v, want the tag's commit %s, as tofu installs", err, tagged)
	}
	// A full ref name says which one it means.
	for ref, want := range map[string]string{"refs/tags/v1.0.0": tagged, "refs/heads/v1.0.0": branch} {
		if f, err := fetch(source.ModulePackage{Source: repo.Source(), Ref: ref}); err != nil || f.Pin != want {
			t.Errorf("ref %s: %v, want commit %s", ref, err, want)
		}
	}
}
