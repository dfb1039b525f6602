package interop

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tflock/tflock/resolve/install/installtest"
)

// TestInteropAmbiguousRefTofu: issue 22 item 7 against the real tofu. The
// server has a branch named like the tag v1.1.0, at v1.0.0's commit. tofu
// installs the tag for "?ref=v1.1.0" and the branch for
// "?ref=v1.1.0&depth=1" (git clone --depth 1 --branch prefers the
// branch): one ref, two meanings. tflock refuses both, naming both
// commits, and writes no lock file.
func TestInteropAmbiguousRefTofu(t *testing.T) {
	tofu := tool(t, "TFLOCK_TOFU", "tofu")
	w := newWorld(t)
	repo := filepath.Join(w.w.GitDir, "acme", "network.git")
	rev := func(ref string) string {
		out, err := exec.CommandContext(context.Background(), "git", "-C", repo, "rev-parse", ref+"^{commit}").CombinedOutput()
		if err != nil {
			t.Fatalf("git rev-parse %s: %v\n%s", ref, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if out, err := exec.CommandContext(context.Background(), "git", "-C", repo, "branch", "v1.1.0", "v1.0.0").CombinedOutput(); err != nil {
		t.Fatalf("git branch: %v\n%s", err, out)
	}
	tag, branch := rev("refs/tags/v1.1.0"), rev("refs/heads/v1.1.0")
	for _, tc := range []struct{ query, tofuGets string }{
		{"?ref=v1.1.0", tag},
		{"?ref=v1.1.0&depth=1", branch},
	} {
		w.removeInstall()
		_ = os.Remove(w.path(".terraform.lock.hcl"))
		cfg := `module "network" {
  source = "` + installtest.Network + tc.query + `"
}
`
		w.config(map[string]string{"main.tf": cfg})
		w.run(0, tofu, "init", "-input=false", "-no-color")
		if got := w.checkoutCommit("network"); got != tc.tofuGets {
			t.Errorf("%s: tofu checked out %s, want %s (tag %s, branch %s)", tc.query, got, tc.tofuGets, tag, branch)
		}
		w.removeInstall()
		_ = os.Remove(w.path(".terraform.lock.hcl"))
		out := w.tflock(1)
		if !strings.Contains(out, "names both a tag (commit "+tag+") and a branch (commit "+branch+")") {
			t.Errorf("%s: tflock output does not refuse the ambiguous ref naming both commits:\n%s", tc.query, out)
		}
		if _, err := os.Stat(w.path(".terraform.lock.hcl")); !os.IsNotExist(err) {
			t.Errorf("%s: tflock wrote a lock file (%v)", tc.query, err)
		}
	}
}
