package git_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tflock/tflock/source/git/gittest"
)

// testEnv is the fixtures' git environment, gittest's (shared with the
// tests outside this package).
var testEnv = gittest.Env

// runGit runs git for the fixtures (gittest's environment, file:// allowed
// for submodules) and returns its trimmed output.
func runGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	return gittest.Run(t, dir, append([]string{"-c", "protocol.file.allow=always"}, args...)...)
}

// serveHTTP serves the repositories under root over smart HTTP and returns
// their base URL.
func serveHTTP(t testing.TB, root string) string {
	t.Helper()
	return gittest.New(t, gittest.Options{Root: root}).LoopbackURL()
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
