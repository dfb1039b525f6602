package git_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/git"
)

// cachedClone returns the one bare clone under cacheDir.
func cachedClone(t *testing.T, cacheDir string) string {
	t.Helper()
	found, err := filepath.Glob(filepath.Join(cacheDir, "*", "repo.git"))
	if err != nil || len(found) != 1 {
		t.Fatalf("cached clones under %s: %v %v", cacheDir, found, err)
	}
	return found[0]
}

func TestDepth(t *testing.T) {
	root := t.TempDir()
	f := newFixture(t, filepath.Join(root, "mod.git"))
	httpBase := serveHTTP(t, root)
	ctx := context.Background()
	for name, base := range map[string]string{"file": "git::" + f.repo.fileURL(), "http": "git::" + httpBase + "/mod.git"} {
		t.Run(name, func(t *testing.T) {
			// The fixture has four commits in a line, c4 (main) on top, so a
			// fetch of depth d holds min(d, distance to the root) commits.
			tests := []struct {
				name    string
				depth   int
				pkg     source.ModulePackage
				commit  string
				commits int
			}{
				{"branch depth 1", 1, source.ModulePackage{Ref: "main"}, f.c4, 1},
				{"branch depth 3", 3, source.ModulePackage{Ref: "main"}, f.c4, 3},
				{"tag depth 1", 1, source.ModulePackage{Ref: "1.1.0"}, f.c2, 1},
				{"version depth 2", 2, source.ModulePackage{Version: mustVersion(t, "1.1.0")}, f.c2, 2},
				{"depth beyond history", 10, source.ModulePackage{Ref: "main"}, f.c4, 4},
			}
			for _, tc := range tests {
				cache := t.TempDir()
				s := git.NewSource(git.Options{CacheDir: cache})
				pkg := tc.pkg
				pkg.Source = base + "?depth=" + strconv.Itoa(tc.depth)
				got, err := s.Fetch(ctx, pkg, filepath.Join(t.TempDir(), "out"))
				if err != nil {
					t.Errorf("%s: %v", tc.name, err)
					continue
				}
				if got.Pin != tc.commit {
					t.Errorf("%s: Pin = %s, want %s", tc.name, got.Pin, tc.commit)
				}
				bare := cachedClone(t, cache)
				if n := runGit(t, bare, "rev-list", "--count", "refs/tflock/"+got.Pin); n != strconv.Itoa(tc.commits) {
					t.Errorf("%s: the clone holds %s commits, want %d", tc.name, n, tc.commits)
				}
				_, err = os.Stat(filepath.Join(bare, "shallow"))
				if shallow := err == nil; shallow != (tc.commits < 4) {
					t.Errorf("%s: shallow = %v, want %v", tc.name, shallow, tc.commits < 4)
				}
			}

			// "depth" with a commit ID as "ref" is an error, with or without a
			// cache; the same commit without "depth" is fine.
			for _, ref := range []string{f.c2, f.c2[:10]} {
				for _, cache := range []string{"", t.TempDir()} {
					s := git.NewSource(git.Options{CacheDir: cache})
					dir := filepath.Join(t.TempDir(), "out")
					_, err := s.Fetch(ctx, source.ModulePackage{Source: base + "?depth=1", Ref: ref}, dir)
					if !errors.Is(err, git.ErrDepthNeedsRef) {
						t.Errorf("depth with commit %s: got %v, want ErrDepthNeedsRef", ref, err)
					}
					if _, err := os.Stat(dir); !os.IsNotExist(err) {
						t.Errorf("failed fetch left %s behind", dir)
					}
					if _, err := s.Fetch(ctx, source.ModulePackage{Source: base, Ref: ref}, dir); err != nil {
						t.Errorf("commit %s without depth: %v", ref, err)
					}
				}
			}
		})
	}
}
