// Package githttp makes git repositories with the git binary and serves
// them over git's smart HTTP protocol (git http-backend behind an httptest
// server on a loopback address), optionally behind HTTP basic
// authentication, for tflock's own tests of git module sources and of the
// credentials in their addresses. Everything it makes is removed when the
// test ends.
package githttp

import (
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Env is the environment git runs in for the repositories of this
// package: without the machine's configuration, with fixed identities and
// dates, so that the same commits give the same IDs on every run.
func Env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	return append(env,
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=githttp", "GIT_AUTHOR_EMAIL=githttp@example.test",
		"GIT_COMMITTER_NAME=githttp", "GIT_COMMITTER_EMAIL=githttp@example.test",
		"GIT_AUTHOR_DATE=2024-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2024-01-01T00:00:00Z")
}

// Run runs git with args in dir and returns its trimmed standard output;
// a failure fails the test.
func Run(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", append([]string{"-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = Env()
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		tb.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	return strings.TrimSpace(string(out))
}

// Repo is a repository made by a test.
type Repo struct {
	tb testing.TB
	// Dir is the repository's working tree.
	Dir string
}

// NewRepo makes an empty repository in dir (created if missing), with
// "main" as its default branch.
func NewRepo(tb testing.TB, dir string) *Repo {
	tb.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	Run(tb, dir, "init", "-q")
	return &Repo{tb: tb, Dir: dir}
}

// Commit writes files (slash-separated name → content; "" removes the
// file), commits them all and returns the commit ID.
func (r *Repo) Commit(msg string, files map[string]string) string {
	r.tb.Helper()
	for name, content := range files {
		p := filepath.Join(r.Dir, filepath.FromSlash(name))
		if content == "" {
			if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
				r.tb.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			r.tb.Fatal(err)
		}
	}
	Run(r.tb, r.Dir, "add", "-A")
	Run(r.tb, r.Dir, "commit", "-q", "--allow-empty", "-m", msg)
	return Run(r.tb, r.Dir, "rev-parse", "HEAD")
}

// Tag tags the current commit (moving the tag if it exists).
func (r *Repo) Tag(name string) {
	r.tb.Helper()
	Run(r.tb, r.Dir, "tag", "-f", name)
}

// Options configure [NewServer]. The zero value serves anonymously.
type Options struct {
	// Username and Password, when Username is set, make the server demand
	// HTTP basic authentication with them: any other request gets
	// 401 Unauthorized with a Basic challenge, as a git host does.
	Username, Password string
	// Latency, when positive, delays every request by that long before
	// it is answered: a remote host's round trip, for benchmarks.
	// Default 0: none.
	Latency time.Duration
}

// Server serves the repositories under a root directory over git's smart
// HTTP protocol: the repository in ROOT/PATH is at URL()/PATH.
type Server struct {
	srv      *httptest.Server
	requests atomic.Int64
	refused  atomic.Int64
}

// NewServer serves the repositories under root until the test ends. It
// fails the test if git-http-backend cannot be found.
func NewServer(tb testing.TB, root string, opts Options) *Server {
	tb.Helper()
	cmd := exec.Command("git", "--exec-path")
	cmd.Env = Env()
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("git --exec-path: %v", err)
	}
	backend := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		tb.Fatalf("git-http-backend not found: %v", err)
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
	s := &Server{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		if opts.Latency > 0 {
			time.Sleep(opts.Latency)
		}
		if opts.Username != "" {
			u, p, ok := r.BasicAuth()
			if !ok || u != opts.Username || p != opts.Password {
				s.refused.Add(1)
				w.Header().Set("WWW-Authenticate", `Basic realm="githttp"`)
				http.Error(w, "authentication required", http.StatusUnauthorized)
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	tb.Cleanup(s.srv.Close)
	return s
}

// URL returns the server's base URL, "http://127.0.0.1:PORT".
func (s *Server) URL() string { return s.srv.URL }

// URLWithCredentials returns the base URL with user information
// "user:password@" (just "user@" when password is empty), as a module
// source writes credentials inline.
func (s *Server) URLWithCredentials(user, password string) string {
	u, err := url.Parse(s.srv.URL)
	if err != nil {
		panic(err) // httptest's URL always parses
	}
	if password == "" {
		u.User = url.User(user)
	} else {
		u.User = url.UserPassword(user, password)
	}
	return u.String()
}

// Requests returns the number of HTTP requests served so far, refused ones
// included.
func (s *Server) Requests() int { return int(s.requests.Load()) }

// Refused returns the number of requests refused for want of the right
// credentials.
func (s *Server) Refused() int { return int(s.refused.Load()) }
