// Package gittest serves git repositories over git's smart HTTP protocol
// from an in-process HTTPS server, for tests of git module sources
// ([github.com/tflock/tflock/source/git]) that need a real remote: tags,
// moved tags, basic authentication, and addresses that stay the same from
// run to run.
//
// The server is "git http-backend" (the git binary's own smart HTTP
// server) run through [net/http/cgi] behind an [net/http/httptest] TLS
// server with a self-signed certificate. Repositories are made with the
// git binary, with a fixed author, committer and date, so that commit IDs
// are the same on every run.
//
// Repositories are addressed by a stable host name,
// "https://git.example.test/NAME.git" by default, never by the listener's
// random port, so that lock files written against them are stable. Git
// reaches that name through an HTTP proxy the server also runs: start the
// git source with [Server.SourceOptions]; Go code uses [Server.Client].
//
// The same repositories are also served over plain HTTP on a loopback
// address ([Server.LoopbackURL]), for a program that cannot be given the
// proxy and the certificate (tofu, a command-line tool under test). With
// [Options.Root], the server serves repositories a test made itself (with
// [Git] or [Run]) instead of those made by [Server.Repo].
//
// It is tflock's one git smart-HTTP test server.
package gittest

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tflock/tflock/internal/testcert"
	"github.com/tflock/tflock/source/git"
)

// DefaultHost is the host name of a server whose [Options.Host] is empty.
const DefaultHost = "git.example.test"

// BasicAuth is a user name and password.
type BasicAuth struct {
	// Username and Password are the credentials, sent as HTTP basic authentication.
	Username, Password string
}

// Options configure a [Server]. The zero value serves anonymously as
// "git.example.test".
type Options struct {
	// Host is the host name the repositories are addressed by. Default
	// [DefaultHost].
	Host string
	// Auth, when set, makes the server demand HTTP basic authentication
	// with these credentials (401 otherwise), as a private git host does.
	// Default nil: anonymous.
	Auth *BasicAuth
	// GitPath is the git executable that makes the repositories and
	// serves them. Default: "git", looked up in PATH.
	GitPath string
	// Latency, when positive, delays every request by that long before
	// it is answered: a remote host's round trip, for benchmarks.
	// Default 0: none.
	Latency time.Duration
	// Root, when set, is the directory of the repositories served: the
	// repository in ROOT/PATH is at URL/PATH, and [Server.Repo] makes its
	// repositories there too. The server leaves it in place. Default: a
	// directory of the server's own, removed by Close.
	Root string
}

// Server is a running git server.
type Server struct {
	// Host is the host name the repositories are addressed by.
	Host string

	git      string
	dir      string // the server's own directory (the certificate; the repositories without Options.Root)
	root     string // the repositories, ROOT/NAME.git
	caFile   string // the certificate, PEM, for git's http.sslCAInfo
	auth     *BasicAuth
	tls      *httptest.Server
	proxy    *httptest.Server
	plain    *httptest.Server // the loopback server, plain HTTP
	requests atomic.Int64
	refused  atomic.Int64

	mu    sync.Mutex
	repos map[string]*Repo
}

// ErrNoGit is wrapped by the error of [Start] when git cannot be run.
var ErrNoGit = errors.New("gittest: git not available")

// New starts a server for a test and closes it when the test ends. It
// skips the test when git is not installed and fails it on any other
// error.
func New(tb testing.TB, opts Options) *Server {
	tb.Helper()
	s, err := Start(opts)
	if errors.Is(err, ErrNoGit) {
		tb.Skip(err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Close)
	return s
}

// Start starts a server, for code without a testing.TB. The caller must
// Close it.
func Start(opts Options) (_ *Server, err error) {
	name := cmp.Or(opts.GitPath, "git")
	git, err := exec.LookPath(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoGit, err)
	}
	s := &Server{Host: cmp.Or(opts.Host, DefaultHost), git: git, auth: opts.Auth, repos: map[string]*Repo{}}
	if s.dir, err = os.MkdirTemp("", "gittest-"); err != nil {
		return nil, fmt.Errorf("gittest: %w", err)
	}
	s.root = cmp.Or(opts.Root, filepath.Join(s.dir, "repos"))
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	cert, err := testcert.SelfSigned("tflock gittest", []string{s.Host})
	if err != nil {
		return nil, fmt.Errorf("gittest: certificate: %w", err)
	}
	s.caFile = filepath.Join(s.dir, "ca.pem")
	if err := os.WriteFile(s.caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), 0o644); err != nil {
		return nil, fmt.Errorf("gittest: %w", err)
	}
	backend := &cgi.Handler{
		Path: git,
		Args: []string{"http-backend"},
		Dir:  s.dir,
		Env: []string{
			"GIT_PROJECT_ROOT=" + s.root,
			"GIT_HTTP_EXPORT_ALL=1",
			"GIT_CONFIG_NOSYSTEM=1",
			"GIT_CONFIG_GLOBAL=" + os.DevNull,
		},
		Logger: log.New(io.Discard, "", 0),
		Stderr: io.Discard,
	}
	serve := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		if opts.Latency > 0 {
			time.Sleep(opts.Latency)
		}
		if s.auth != nil {
			u, p, ok := r.BasicAuth()
			if !ok || u != s.auth.Username || p != s.auth.Password {
				s.refused.Add(1)
				w.Header().Set("WWW-Authenticate", `Basic realm="gittest"`)
				http.Error(w, "authentication required", http.StatusUnauthorized)
				return
			}
		}
		backend.ServeHTTP(w, r)
	})
	s.tls = httptest.NewUnstartedServer(serve)
	s.tls.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	s.tls.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.tls.StartTLS()
	s.proxy = httptest.NewServer(http.HandlerFunc(s.connect))
	s.proxy.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.plain = httptest.NewUnstartedServer(serve)
	s.plain.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.plain.Start()
	return s, nil
}

// Close stops the server and removes the repositories.
func (s *Server) Close() {
	if s.plain != nil {
		s.plain.Close()
	}
	if s.proxy != nil {
		s.proxy.Close()
	}
	if s.tls != nil {
		s.tls.Close()
	}
	if s.dir != "" {
		_ = os.RemoveAll(s.dir)
	}
}

// SourceOptions returns [git.Options] whose git reaches the server by its
// host name and trusts its certificate: an HTTP proxy for the host
// (Config) and the certificate file (Env: GIT_SSL_CAINFO, which git lets
// override its configuration). To run git by hand, give it Config as
// "-c" arguments and Env as environment.
func (s *Server) SourceOptions() git.Options {
	return git.Options{
		Config: []string{"http.https://" + s.Host + "/.proxy=" + s.proxy.URL},
		Env:    []string{"GIT_SSL_CAINFO=" + s.caFile},
	}
}

// Client returns an HTTP client that reaches the server by its host name
// and trusts its certificate.
func (s *Server) Client() *http.Client {
	c := s.tls.Client()
	tr := c.Transport.(*http.Transport).Clone()
	addr := s.tls.Listener.Addr().String()
	var d net.Dialer
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr)
	}
	return &http.Client{Transport: tr}
}

// Requests returns the number of HTTP requests the server has answered,
// refused ones included, on both its addresses.
func (s *Server) Requests() int { return int(s.requests.Load()) }

// Refused returns the number of requests refused for want of the
// credentials of [Options.Auth].
func (s *Server) Refused() int { return int(s.refused.Load()) }

// LoopbackURL returns the base URL of the same repositories over plain
// HTTP on the loopback address, "http://127.0.0.1:PORT" (the repository
// NAME is at LoopbackURL()+"/NAME.git"): for a program that cannot be
// given [Server.SourceOptions]. Unlike the host name, the port changes
// from run to run.
func (s *Server) LoopbackURL() string { return s.plain.URL }

// LoopbackURLWithCredentials is [Server.LoopbackURL] with the user
// information "user:password@" ("user@" when password is empty), as a
// module source writes credentials inline.
func (s *Server) LoopbackURLWithCredentials(user, password string) string {
	u, err := url.Parse(s.plain.URL)
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

// connect is the proxy: it tunnels CONNECT requests for the server's host
// to the TLS listener, and refuses anything else.
func (s *Server) connect(w http.ResponseWriter, r *http.Request) {
	host, _, _ := net.SplitHostPort(r.Host)
	if r.Method != http.MethodConnect || host != s.Host {
		http.Error(w, "gittest: this proxy only reaches "+s.Host, http.StatusForbidden)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "gittest: cannot tunnel", http.StatusInternalServerError)
		return
	}
	up, err := net.Dial("tcp", s.tls.Listener.Addr().String())
	if err != nil {
		http.Error(w, "gittest: "+err.Error(), http.StatusBadGateway)
		return
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		conn.Close()
		up.Close()
		return
	}
	go func() {
		_, _ = io.Copy(up, conn)
		up.Close()
	}()
	_, _ = io.Copy(conn, up)
	conn.Close()
}

// Commit is one commit of a [Repo]: the whole tree (slash-separated file
// name → content; what is not listed is removed) and the tags to point at
// it. A tag that exists is moved.
type Commit struct {
	// Files maps slash-separated file names to contents: the whole tree of the commit.
	Files map[string]string
	// Tags are the tags to point at the commit (a tag that exists is moved).
	Tags []string
}

// Repo is a repository of a [Server].
type Repo struct {
	// Name is the repository's name, such as "acme/network".
	Name string
	// Dir is the repository's working directory on disk.
	Dir string

	s  *Server
	mu sync.Mutex
	n  int
}

// Repo creates the repository NAME.git ("acme/network" gives
// https://HOST/acme/network.git) with the given commits, in order, or
// adds them to it if it exists.
func (s *Server) Repo(name string, commits ...Commit) (*Repo, error) {
	if name == "" || strings.Contains(name, "..") || strings.HasPrefix(name, "/") || strings.HasSuffix(name, ".git") {
		return nil, fmt.Errorf("gittest: invalid repository name %q: give a relative name without .git, such as \"acme/network\"", name)
	}
	s.mu.Lock()
	r, ok := s.repos[name]
	if !ok {
		r = &Repo{Name: name, Dir: filepath.Join(s.root, filepath.FromSlash(name)+".git"), s: s}
		if err := os.MkdirAll(r.Dir, 0o755); err != nil {
			s.mu.Unlock()
			return nil, fmt.Errorf("gittest: %w", err)
		}
		if _, err := r.git("init", "-q"); err != nil {
			s.mu.Unlock()
			return nil, err
		}
		s.repos[name] = r
	}
	s.mu.Unlock()
	for _, c := range commits {
		if _, err := r.Commit(c); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// URL returns the repository's HTTPS URL, "https://HOST/NAME.git".
func (r *Repo) URL() string { return "https://" + r.s.Host + "/" + r.Name + ".git" }

// Source returns the repository as a module source address,
// "git::https://HOST/NAME.git".
func (r *Repo) Source() string { return "git::" + r.URL() }

// Commit makes a commit with c's tree and tags, and returns its ID.
func (r *Repo) Commit(c Commit) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := r.git("rm", "-rqf", "--ignore-unmatch", "."); err != nil {
		return "", err
	}
	names := make([]string, 0, len(c.Files))
	for name := range c.Files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		p := filepath.Join(r.Dir, filepath.FromSlash(name))
		if rel, err := filepath.Rel(r.Dir, p); err != nil || strings.HasPrefix(rel, "..") || strings.HasPrefix(filepath.ToSlash(rel), ".git/") {
			return "", fmt.Errorf("gittest: invalid file name %q", name)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", fmt.Errorf("gittest: %w", err)
		}
		if err := os.WriteFile(p, []byte(c.Files[name]), 0o644); err != nil {
			return "", fmt.Errorf("gittest: %w", err)
		}
	}
	r.n++
	if _, err := r.git("add", "-A"); err != nil {
		return "", err
	}
	if _, err := r.git("commit", "-q", "--allow-empty", "-m", fmt.Sprintf("commit %d", r.n)); err != nil {
		return "", err
	}
	for _, t := range c.Tags {
		if _, err := r.git("tag", "-f", t); err != nil {
			return "", err
		}
	}
	id, err := r.git("rev-parse", "HEAD")
	if err != nil {
		return "", err
	}
	// Smart HTTP serves what info/refs lists; keep it current for dumb
	// clients too.
	if _, err := r.git("update-server-info"); err != nil {
		return "", err
	}
	return id, nil
}

// Rev returns the commit ID a ref (a tag, a branch) points to.
func (r *Repo) Rev(ref string) (string, error) {
	return r.git("rev-parse", ref+"^{commit}")
}

// git runs git in the repository (see [Git]) with the server's git.
func (r *Repo) git(args ...string) (string, error) {
	return run(context.Background(), r.s.git, r.Dir, args...)
}

// Git runs git (from PATH) in dir as the server makes its repositories:
// without the machine's configuration, with a fixed identity and date,
// "main" as the default branch and no signing. It returns the standard
// output, trimmed. Tests use it to change a repository ([Repo.Dir]) as its
// maintainer would, or to make one of their own.
func Git(ctx context.Context, dir string, args ...string) (string, error) {
	return run(ctx, "git", dir, args...)
}

// Run is [Git] for a test: it fails tb if git fails.
func Run(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	out, err := Git(context.Background(), dir, args...)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

func run(ctx context.Context, git, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, git, append([]string{"-c", "init.defaultBranch=main", "-c", "commit.gpgSign=false", "-c", "tag.gpgSign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = Env()
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("gittest: git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// Env is the environment git runs in for the repositories of this
// package: the process's without git's variables, plus a fixed identity
// and date and no machine configuration, so that the same commits give
// the same IDs on every run. Give it to a program under test that runs
// git (tofu) so that the machine's configuration does not reach it.
func Env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	return append(env,
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=tflock", "GIT_AUTHOR_EMAIL=tflock@example.test",
		"GIT_COMMITTER_NAME=tflock", "GIT_COMMITTER_EMAIL=tflock@example.test",
		"GIT_AUTHOR_DATE=2024-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2024-01-01T00:00:00Z")
}
