package install_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source/git"
)

// TestAmbiguousRefNeverLocked is issue 22 item 7 end to end: once the
// server has a branch named like the tag v1.1.0 at another commit, tofu
// installs that branch for a source with a "depth" argument. tflock
// neither locks a call whose ref names both, nor writes the tag as the
// managed "ref" of a call with a depth: Init fails with an
// *git.AmbiguousRefError naming both commits, and writes no lock file
// and no source.
func TestAmbiguousRefNeverLocked(t *testing.T) {
	w := startWorld(t)
	repo := filepath.Join(w.GitDir, "acme", "network.git")
	gitIn(t, repo, "branch", "v1.1.0", "v1.0.0")
	tag, branch := gitCommit(t, w, "refs/tags/v1.1.0"), gitCommit(t, w, "refs/heads/v1.1.0")
	for name, cfg := range map[string]string{
		"ref": `module "network" {
  source = "` + installtest.Network + `?ref=v1.1.0"
}
`,
		"managed ref with depth": `module "network" {
  # tflock: version = "~> 1.0"
  source = "` + installtest.Network + `?ref=v1.0.0&depth=1"
}
`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"main.tf": cfg})
			_, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: openCache(t)})
			var ae *git.AmbiguousRefError
			if !errors.As(err, &ae) || ae.Tag != tag || ae.Branch != branch {
				t.Fatalf("Init = %v, want an *git.AmbiguousRefError naming the tag's commit %s and the branch's %s", err, tag, branch)
			}
			if _, err := os.Stat(filepath.Join(dir, install.LockFileName)); !os.IsNotExist(err) {
				t.Errorf("a lock file was written (%v)", err)
			}
			if got := readText(t, filepath.Join(dir, "main.tf")); got != cfg {
				t.Errorf("main.tf was rewritten:\n%s", got)
			}
		})
	}
}
