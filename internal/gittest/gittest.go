// Package gittest makes git repositories with the git binary and serves
// them over git's smart HTTP protocol, for tests. It is for tests only: no
// non-test code may import it.
package gittest

import (
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Env is the environment git runs in for fixtures: the process's without
// its GIT_ variables (a test run from a git hook inherits GIT_DIR), none of
// the machine's configuration, no prompts, and fixed identities and dates,
// so that the same commands make the same commits on every run.
func Env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	return append(env,
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
		"GIT_AUTHOR_DATE=2024-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2024-01-01T00:00:00Z")
}

// Run runs git with args in dir, in [Env], with "main" as the default
// branch and file:// transport allowed, and returns its trimmed output. It
// fails the test if git fails.
func Run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always"}, args...)...)
	cmd.Dir = dir
	cmd.Env = Env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// ServeHTTP serves the repositories under root over git's smart HTTP
// protocol, with git http-backend behind an httptest server closed when
// the test ends, and returns their base URL: the repository root/x.git is
// at BASE/x.git.
func ServeHTTP(t testing.TB, root string) string {
	t.Helper()
	cmd := exec.Command("git", "--exec-path")
	cmd.Env = Env()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git --exec-path: %v", err)
	}
	backend := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Fatalf("git-http-backend not found: %v", err)
	}
	h := &cgi.Handler{
		Path: backend,
		Env: []string{
			"GIT_PROJECT_ROOT=" + root,
			"GIT_HTTP_EXPORT_ALL=1",
			"GIT_CONFIG_NOSYSTEM=1",
			"GIT_CONFIG_GLOBAL=" + os.DevNull,
		},
	}
	srv := httptest.NewServer(http.StripPrefix("/git", h))
	t.Cleanup(srv.Close)
	return srv.URL + "/git"
}
