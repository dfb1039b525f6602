package git_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tflock/tflock/internal/githttp"
)

// testEnv runs git for the test fixtures without the machine's configuration.
func testEnv() []string {
	return append(os.Environ(),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
		"GIT_AUTHOR_DATE=2024-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2024-01-01T00:00:00Z")
}

// git runs a git command in dir and returns its trimmed output.
func runGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always"}, args...)...)
	cmd.Dir = dir
	cmd.Env = testEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// repo is a repository built by a test.
type repo struct {
	t   *testing.T
	dir string
}

func newRepo(t *testing.T, dir string) *repo {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	runGit(t, dir, "init", "-q")
	return &repo{t: t, dir: dir}
}

// commit writes files (name -> content; "" deletes) and commits them,
// returning the commit ID.
func (r *repo) commit(msg string, files map[string]string) string {
	r.t.Helper()
	for name, content := range files {
		p := filepath.Join(r.dir, filepath.FromSlash(name))
		if content == "" {
			os.Remove(p)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	runGit(r.t, r.dir, "add", "-A")
	runGit(r.t, r.dir, "commit", "-q", "--allow-empty", "-m", msg)
	return runGit(r.t, r.dir, "rev-parse", "HEAD")
}

func (r *repo) tag(name string) { r.t.Helper(); runGit(r.t, r.dir, "tag", "-f", name) }
func (r *repo) annotatedTag(name string) {
	r.t.Helper()
	runGit(r.t, r.dir, "tag", "-f", "-a", "-m", "release "+name, name)
}

// fileURL is the repository's file:// URL.
func (r *repo) fileURL() string { return "file://" + filepath.ToSlash(r.dir) }

// serveHTTP serves the repositories under root over git's smart HTTP
// protocol (githttp) and returns the base URL.
func serveHTTP(t *testing.T, root string) string {
	t.Helper()
	return githttp.NewServer(t, root, githttp.Options{}).URL()
}
