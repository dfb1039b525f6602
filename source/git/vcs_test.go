package git_test

import (
	"context"
	"io/fs"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/git"
)

// TestFetchLeavesOutTrackedVCSMetadata: a repository that tracks another
// version-control system's metadata (".hg", ".svn", in any letter case) is
// installed without it, as every module package is, and the h1: reported is
// that of the tree installed.
func TestFetchLeavesOutTrackedVCSMetadata(t *testing.T) {
	root := t.TempDir()
	r := newRepo(t, filepath.Join(root, "mod.git"))
	r.commit("vcs", map[string]string{
		"main.tf":          "# main\n",
		".hg/hgrc":         "[hooks]\nupdate = touch pwned\n",
		"sub/.svn/entries": "x\n",
		"sub/.HG/hgrc":     "x\n",
		"sub/a.tf":         "# a\n",
		".gitignore":       "*.tfstate\n",
	})
	for _, cache := range []string{"", filepath.Join(root, "cache")} {
		s := git.NewSource(git.Options{CacheDir: cache})
		dir := filepath.Join(t.TempDir(), "out")
		got, err := s.Fetch(context.Background(), source.ModulePackage{Source: "git::" + r.fileURL()}, dir)
		if err != nil {
			t.Fatal(err)
		}
		var files []string
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(dir, p)
				files = append(files, filepath.ToSlash(rel))
			}
			return err
		})
		slices.Sort(files)
		if want := []string{".gitignore", "main.tf", "sub/a.tf"}; !slices.Equal(files, want) {
			t.Errorf("cache %q: installed %v, want %v", cache, files, want)
		}
		if h, err := hash.H1Dir(dir); err != nil || len(got.Hashes) != 1 || got.Hashes[0] != h {
			t.Errorf("cache %q: Hashes = %v, want the h1: of the installed tree %v (%v)", cache, got.Hashes, h, err)
		}
	}
}
