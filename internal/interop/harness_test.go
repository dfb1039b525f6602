package interop

import (
	"bytes"
	"context"
	"encoding/pem"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source/registry/registrytest"

	"github.com/tflock/tflock/internal/testdir"
)

// TestMain removes the examples/lock binary built for the suite.
func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

var (
	buildMu sync.Mutex
	binDir  string
	built   = map[string]string{} // package → binary
)

// tflockBinary builds examples/lock once per test process.
func tflockBinary(t testing.TB) string {
	t.Helper()
	return program(t, "examples/lock")
}

// program builds the main package pkg of the module (a path relative to
// the module's root) once per test process and returns the binary.
func program(t testing.TB, pkg string) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if bin, ok := built[pkg]; ok {
		return bin
	}
	if binDir == "" {
		d, err := os.MkdirTemp("", "tflock-interop-bin-")
		if err != nil {
			t.Fatal(err)
		}
		binDir = d
	}
	bin := filepath.Join(binDir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", bin, "github.com/tflock/tflock/"+pkg)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	built[pkg] = bin
	return bin
}

// tool names a binary of the suite by its environment variable; the test
// is skipped when the variable is unset. A bare name is looked up in PATH;
// a relative path is relative to the repository root (go test runs the
// test in the package directory, the user in the root).
func tool(t testing.TB, envVar, what string) string {
	t.Helper()
	p := os.Getenv(envVar)
	if p == "" {
		t.Skipf("%s not set: set it to the path of a %s binary to run the interop suite", envVar, what)
	}
	if !strings.ContainsRune(p, filepath.Separator) && !strings.Contains(p, "/") {
		found, err := exec.LookPath(p)
		if err != nil {
			t.Fatalf("%s=%s: %v", envVar, p, err)
		}
		p = found
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(repoRoot(t), p)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s: %v", envVar, err)
	}
	return p
}

// repoRoot is the directory holding go.mod above the test's directory.
func repoRoot(t testing.TB) string {
	t.Helper()
	return testdir.Root(t)
}

// countingHandler counts the requests whose path passes match.
type countingHandler struct {
	h     http.Handler
	match func(*http.Request) bool
	n     atomic.Int64
}

func (c *countingHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if c.match(r) {
		c.n.Add(1)
	}
	c.h.ServeHTTP(w, r)
}

// world is one test's set of sources and the environment every tool runs
// in.
type world struct {
	t        testing.TB
	w        *installtest.World
	ociHost  string           // "127.0.0.1:PORT" of the TLS front of the OCI registry
	ociBlobs *countingHandler // counts OCI blob and manifest fetches
	fx       registrytest.Fixtures
	cliHosts string // the CLI configuration's host blocks
	dir      string // the configuration directory
	home     string
	env      []string
	wrap     []string // a command and arguments every run goes through, if set
}

// newWorld starts the sources of installtest (registry, git repositories,
// OCI registry), puts the OCI registry behind TLS (tofu speaks HTTPS only
// to OCI registries) and writes the CLI configuration, git configuration
// and certificate file the tools use.
func newWorld(t testing.TB) *world {
	t.Helper()
	return newWorldWith(t, installtest.DefaultFixtures(), registrytest.Options{})
}

// newWorldWith is newWorld with other registry fixtures and options: the
// registry is then one of its own, in place of the installtest one, for
// opts.Hosts (default installtest.RegistryHost), each named in a host block
// of the CLI configuration (registry.opentofu.org too: the tools then ask
// the test server for their default registry).
func newWorldWith(t testing.TB, fx registrytest.Fixtures, opts registrytest.Options) *world {
	t.Helper()
	if err := installtest.HaveGit(); err != nil {
		t.Skip(err)
	}
	ctx := context.Background()
	iw, err := installtest.Start(ctx, installtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(iw.Close)
	iw.Registry.Close()
	if len(opts.Hosts) == 0 {
		opts.Hosts = []string{installtest.RegistryHost}
	}
	iw.Registry = registrytest.New(t, fx, opts)

	target, err := url.Parse("http://" + iw.OCI.Host())
	if err != nil {
		t.Fatal(err)
	}
	blobs := &countingHandler{h: httputil.NewSingleHostReverseProxy(target), match: func(r *http.Request) bool {
		return r.Method == http.MethodGet && (strings.Contains(r.URL.Path, "/blobs/") || strings.Contains(r.URL.Path, "/manifests/"))
	}}
	ociSrv := httptest.NewTLSServer(blobs)
	t.Cleanup(ociSrv.Close)

	root := t.TempDir()
	w := &world{t: t, w: iw, ociBlobs: blobs, fx: fx, ociHost: strings.TrimPrefix(ociSrv.URL, "https://"),
		dir: filepath.Join(root, "config"), home: filepath.Join(root, "home")}
	for _, d := range []string{w.dir, w.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var certs bytes.Buffer
	for _, c := range [][]byte{iw.Registry.Certificate().Raw, ociSrv.Certificate().Raw} {
		if err := pem.Encode(&certs, &pem.Block{Type: "CERTIFICATE", Bytes: c}); err != nil {
			t.Fatal(err)
		}
	}
	certFile := filepath.Join(root, "certs.pem")
	regURL := iw.Registry.URL
	cliConfig := filepath.Join(root, "cli.tfrc")
	gitConfig := filepath.Join(w.home, ".gitconfig")
	writeFile(t, certFile, certs.String())
	for _, h := range opts.Hosts {
		w.cliHosts += fmt.Sprintf(`host %q {
  services = {
    "providers.v1" = "%s/v1/providers/",
    "modules.v1"   = "%s/v1/modules/",
  }
}
`, h, regURL, regURL)
	}
	writeFile(t, cliConfig, w.cliHosts)
	writeFile(t, gitConfig, fmt.Sprintf(`[url "file://%s/"]
	insteadOf = https://%s/
[protocol "file"]
	allow = always
[init]
	defaultBranch = main
`, filepath.ToSlash(iw.GitDir), installtest.GitHost))

	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "TF_"), strings.HasPrefix(name, "OPENTOFU_"), strings.HasPrefix(name, "GIT_"), strings.HasPrefix(name, "DOCKER_"),
			strings.HasSuffix(strings.ToUpper(name), "_PROXY"), name == "HOME", name == "SSL_CERT_FILE",
			name == "SSL_CERT_DIR", name == "XDG_CONFIG_HOME", name == "XDG_CACHE_HOME", name == "CHECKPOINT_DISABLE":
			continue
		}
		w.env = append(w.env, kv)
	}
	w.env = append(w.env,
		"HOME="+w.home,
		"XDG_CACHE_HOME="+filepath.Join(w.home, ".cache"),
		"TF_CLI_CONFIG_FILE="+cliConfig,
		"SSL_CERT_FILE="+certFile,
		"CHECKPOINT_DISABLE=1",
		"TF_IN_AUTOMATION=1",
		// Nothing but the loopback servers is reachable.
		"HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9",
		"NO_PROXY=127.0.0.1,localhost",
	)
	return w
}

// config writes the configuration's files (and removes every other file
// of the directory except the install directory and the lock file).
func (w *world) config(files map[string]string) {
	w.t.Helper()
	for name, content := range files {
		writeFile(w.t, filepath.Join(w.dir, name), content)
	}
}

// run runs a program in the configuration directory in the world's
// environment and returns its combined output; it fails the test unless the
// exit code is want.
func (w *world) run(wantCode int, bin string, args ...string) string {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	name, cargs := bin, args
	if len(w.wrap) > 0 {
		name, cargs = w.wrap[0], append(append(slices.Clone(w.wrap[1:]), bin), args...)
	}
	cmd := exec.CommandContext(ctx, name, cargs...)
	cmd.Dir = w.dir
	cmd.Env = w.env
	out, err := cmd.CombinedOutput()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			w.t.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, out)
		}
		code = ee.ExitCode()
	}
	if code != wantCode {
		w.t.Fatalf("%s %s: exit code %d, want %d\n%s", filepath.Base(bin), strings.Join(args, " "), code, wantCode, out)
	}
	return string(out)
}

// tflock runs examples/lock on the configuration directory with a cache of
// its own in HOME.
func (w *world) tflock(wantCode int, args ...string) string {
	w.t.Helper()
	args = append(append([]string{"-cache-dir", filepath.Join(w.home, "tflock-cache")}, args...), w.dir)
	return w.run(wantCode, tflockBinary(w.t), args...)
}

// removeCache empties the package cache of tflock runs.
func (w *world) removeCache() {
	w.t.Helper()
	if err := os.RemoveAll(filepath.Join(w.home, "tflock-cache")); err != nil {
		w.t.Fatal(err)
	}
}

// registryDownloads is the number of provider package and module archive
// downloads the registry served so far.
func (w *world) registryDownloads() int { return w.providerDownloads() + w.moduleDownloads() }

// providerDownloads is the number of provider package downloads the
// registry served so far.
func (w *world) providerDownloads() int {
	n := 0
	for _, p := range w.fx.Providers {
		for _, v := range p.Versions {
			for _, plat := range v.Platforms {
				info, ok := w.w.Registry.ProviderPackage(p.Addr, v.Version, plat)
				if !ok {
					w.t.Fatalf("no package %s %s %s", p.Addr, v.Version, plat)
				}
				n += w.w.Registry.RequestsTo(fmt.Sprintf("/files/providers/%s/%s/%s", p.Addr, v.Version, info.Filename))
			}
		}
	}
	return n
}

// moduleDownloads is the number of module archive downloads the registry
// served so far.
func (w *world) moduleDownloads() int {
	n := 0
	for _, m := range w.fx.Modules {
		for _, v := range m.Versions {
			for _, ext := range []string{".tar.gz", ".zip"} {
				n += w.w.Registry.RequestsTo(fmt.Sprintf("/files/modules/%s/%s%s", m.Addr, v.Version, ext))
			}
		}
	}
	return n
}

// ociFetches is the number of manifest and blob fetches the OCI registry
// served so far.
func (w *world) ociFetches() int { return int(w.ociBlobs.n.Load()) }

func (w *world) path(rel string) string { return filepath.Join(w.dir, filepath.FromSlash(rel)) }

func (w *world) read(rel string) []byte {
	w.t.Helper()
	b, err := os.ReadFile(w.path(rel))
	if err != nil {
		w.t.Fatal(err)
	}
	return b
}

// removeInstall removes the install directory and the lock file.
func (w *world) removeInstall() {
	w.t.Helper()
	for _, p := range []string{".terraform", ".terraform.lock.hcl"} {
		if err := os.RemoveAll(w.path(p)); err != nil {
			w.t.Fatal(err)
		}
	}
}

// walk calls fn for every file and directory under rel, with its path
// relative to rel (slash-separated) and its information.
func (w *world) walk(rel string, fn func(r, p string, info fs.FileInfo) error) {
	w.t.Helper()
	root := w.path(rel)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(root, p)
		return fn(filepath.ToSlash(r), p, info)
	})
	if err != nil {
		w.t.Fatal(err)
	}
}

// snapshot lists every file and directory under rel with its mode and,
// for regular files, content: what a run must leave alone.
func (w *world) snapshot(rel string) map[string]string {
	w.t.Helper()
	out := map[string]string{}
	w.walk(rel, func(r, p string, info fs.FileInfo) error {
		v := info.Mode().String()
		switch {
		case info.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += " " + string(b)
		case info.Mode()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			v += " -> " + l
		}
		out[r] = v
		return nil
	})
	return out
}

// modes lists the mode of every file and directory under rel: the layout
// two tools must agree on.
func (w *world) modes(rel string) map[string]fs.FileMode {
	w.t.Helper()
	out := map[string]fs.FileMode{}
	w.walk(rel, func(r, _ string, info fs.FileInfo) error {
		out[r] = info.Mode()
		return nil
	})
	return out
}

// diffSnapshots describes how two snapshots differ ("" if they do not).
func diffSnapshots(before, after map[string]string) string {
	var lines []string
	for k, v := range before {
		if a, ok := after[k]; !ok {
			lines = append(lines, "removed "+k)
		} else if a != v {
			lines = append(lines, "changed "+k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			lines = append(lines, "added "+k)
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func writeFile(t testing.TB, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
