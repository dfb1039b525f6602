package git_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tflock/tflock/source/git"
)

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=x", "GIT_AUTHOR_EMAIL=x@example.test", "GIT_COMMITTER_NAME=x", "GIT_COMMITTER_EMAIL=x@example.test")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestCheckoutCommit reads the commit of checkouts made by the git binary
// the ways tofu makes them (a clone of a branch, a detached tag, packed
// refs), with what "git rev-parse HEAD" says as the reference.
func TestCheckoutCommit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	origin := t.TempDir()
	gitIn(t, origin, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(origin, "main.tf"), []byte("# v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, origin, "add", ".")
	gitIn(t, origin, "commit", "-q", "-m", "v1")
	gitIn(t, origin, "tag", "v1.0.0")
	gitIn(t, origin, "commit", "-q", "--allow-empty", "-m", "v2")

	for _, tc := range []struct {
		name string
		args []string
		pack bool
	}{
		{"branch", []string{"clone", "-q", "--branch", "main"}, false},
		{"tag, detached", []string{"clone", "-q", "--depth", "1", "--branch", "v1.0.0"}, false},
		{"branch, packed refs", []string{"clone", "-q", "--branch", "main"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "checkout")
			gitIn(t, ".", append(tc.args, "file://"+origin, dst)...)
			if tc.pack {
				gitIn(t, dst, "pack-refs", "--all")
			}
			want := gitIn(t, dst, "rev-parse", "HEAD")
			got, err := git.CheckoutCommit(dst)
			if err != nil || got != want {
				t.Errorf("CheckoutCommit = %q, %v; want %q", got, err, want)
			}
		})
	}
	if _, err := git.CheckoutCommit(t.TempDir()); !errors.Is(err, git.ErrNoCheckout) {
		t.Errorf("a directory without .git: %v, want ErrNoCheckout", err)
	}
}

// FuzzCheckoutHead feeds arbitrary HEAD and packed-refs contents: an error
// or a 40-digit commit id, never a panic.
func FuzzCheckoutHead(f *testing.F) {
	f.Add("ref: refs/heads/main\n", "# pack-refs with: peeled fully-peeled sorted\n0123456789abcdef0123456789abcdef01234567 refs/heads/main\n")
	f.Add("0123456789abcdef0123456789abcdef01234567\n", "")
	f.Add("ref: refs/../../etc/passwd", "")
	f.Fuzz(func(t *testing.T, head, packed string) {
		dir := t.TempDir()
		gd := filepath.Join(dir, ".git")
		if err := os.MkdirAll(gd, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(gd, "HEAD"), []byte(head), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(gd, "packed-refs"), []byte(packed), 0o644); err != nil {
			t.Fatal(err)
		}
		id, err := git.CheckoutCommit(dir)
		if err == nil && len(id) != 40 && len(id) != 64 {
			t.Fatalf("commit %q", id)
		}
	})
}
