package install_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/assemble"
	"github.com/tflock/tflock/source/registry"
	"github.com/tflock/tflock/source/sourcetest"
)

// archiveWorld is an HTTP(S) server of module archives whose contents may
// name the server's own URL, counting the requests it receives.
type archiveWorld struct {
	srv   *httptest.Server
	mu    sync.Mutex
	files map[string]map[string]string // path → package files
	gets  map[string]string            // path → X-Terraform-Get location
	n     int
}

func (w *archiveWorld) setGet(path, location string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.gets[path] = location
}

func (w *archiveWorld) set(path string, files map[string]string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.files[path] = files
}

func (w *archiveWorld) requests() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// startArchiveWorld starts the server, over TLS unless plain.
func startArchiveWorld(t *testing.T, plain bool) *archiveWorld {
	t.Helper()
	w := &archiveWorld{files: map[string]map[string]string{}, gets: map[string]string{}}
	h := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.mu.Lock()
		w.n++
		files, ok := w.files[r.URL.Path]
		get, indirect := w.gets[r.URL.Path]
		w.mu.Unlock()
		if indirect {
			rw.Header().Set("X-Terraform-Get", get)
			rw.WriteHeader(http.StatusNoContent)
			return
		}
		if !ok {
			http.NotFound(rw, r)
			return
		}
		var b []byte
		var err error
		if strings.HasSuffix(r.URL.Path, ".zip") {
			b, err = zipFiles(files)
		} else {
			b, err = tarGzFiles(files)
		}
		if err != nil {
			http.Error(rw, err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = rw.Write(b)
	})
	if plain {
		w.srv = httptest.NewServer(h)
	} else {
		w.srv = httptest.NewTLSServer(h)
	}
	t.Cleanup(w.srv.Close)
	return w
}

func sortedNames(files map[string]string) []string {
	var names []string
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func zipFiles(files map[string]string) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range sortedNames(files) {
		f, err := zw.Create(n)
		if err != nil {
			return nil, err
		}
		if _, err := f.Write([]byte(files[n])); err != nil {
			return nil, err
		}
	}
	err := zw.Close()
	return buf.Bytes(), err
}

func tarGzFiles(files map[string]string) ([]byte, error) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, n := range sortedNames(files) {
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg}); err != nil {
			return nil, err
		}
		if _, err := tw.Write([]byte(files[n])); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	err := gz.Close()
	return buf.Bytes(), err
}

func mustH1(t *testing.T, files map[string]string) hash.Hash {
	t.Helper()
	h, err := sourcetest.H1(files)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestInitHTTPArchiveModules(t *testing.T) {
	w := startArchiveWorld(t, false)
	u := w.srv.URL
	netFiles := map[string]string{
		"main.tf":             "module \"inner\" {\n  source = \"" + u + "/inner.tgz\"\n}\nmodule \"sub\" {\n  source = \"./modules/sub\"\n}\n",
		"modules/sub/main.tf": "# sub\n",
	}
	appFiles := map[string]string{"main.tf": "# app\n"}
	innerFiles := map[string]string{"main.tf": "# inner\n"}
	w.set("/net.zip", netFiles)
	w.set("/app", appFiles)
	w.set("/inner.tgz", innerFiles)

	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": `module "net" {
  source = "` + u + `/net.zip"
}
module "app" {
  source = "` + u + `/app?archive=tar.gz"
}
module "sub" {
  source = "` + u + `/net.zip//modules/sub"
}
`})
	src := &assemble.Dispatch{HTTP: registry.NewArchiveSource(registry.Options{HTTPClient: w.srv.Client(), Credentials: registry.Tokens{}})}
	c := openCache(t)
	res := initAndWrite(t, install.Options{Dir: dir, Source: src, Cache: c})

	lf := res.Lock
	for _, want := range []struct {
		call, source string
		files        map[string]string
	}{
		{"net", u + "/net.zip", netFiles},
		{"app", u + "/app?archive=tar.gz", appFiles},
		{"sub", u + "/net.zip//modules/sub", netFiles}, // the h1: of the whole package
		{"net.inner", u + "/inner.tgz", innerFiles},
	} {
		ml := lf.Module(want.call)
		if ml == nil {
			t.Errorf("module %q not locked", want.call)
			continue
		}
		if ml.Source != want.source || !ml.Version.IsZero() || ml.Commit != "" || ml.Digest != "" {
			t.Errorf("module %q lock = %+v, want source %q and no version, commit or digest", want.call, ml, want.source)
		}
		if h := mustH1(t, want.files); len(ml.Hashes) != 1 || ml.Hashes[0] != h {
			t.Errorf("module %q hashes = %v, want [%s]", want.call, ml.Hashes, h)
		}
	}
	if lf.Module("net.sub") != nil {
		t.Error("a local module inside an archive was locked")
	}

	b, err := os.ReadFile(filepath.Join(dir, ".terraform", "modules", "modules.json"))
	if err != nil {
		t.Fatal(err)
	}
	wantManifest := `{"Modules":[{"Key":"","Source":"","Dir":"."},` +
		`{"Key":"app","Source":"` + u + `/app?archive=tar.gz","Dir":".terraform/modules/app"},` +
		`{"Key":"net","Source":"` + u + `/net.zip","Dir":".terraform/modules/net"},` +
		`{"Key":"net.inner","Source":"` + u + `/inner.tgz","Dir":".terraform/modules/net.inner"},` +
		`{"Key":"net.sub","Source":"./modules/sub","Dir":".terraform/modules/net/modules/sub"},` +
		`{"Key":"sub","Source":"` + u + `/net.zip//modules/sub","Dir":".terraform/modules/sub/modules/sub"}]}`
	if string(b) != wantManifest {
		t.Errorf("modules.json:\n got %s\nwant %s", b, wantManifest)
	}
	for _, f := range []string{"net/main.tf", "net/modules/sub/main.tf", "app/main.tf", "net.inner/main.tf", "sub/modules/sub/main.tf"} {
		if _, err := os.Stat(filepath.Join(dir, ".terraform", "modules", filepath.FromSlash(f))); err != nil {
			t.Errorf("not installed: %v", err)
		}
	}
	if _, err := install.Check(context.Background(), install.CheckOptions{Dir: dir}); err != nil {
		t.Errorf("Check after init: %v", err)
	}

	// Re-init with the same cache: same lock, nothing changed, no request.
	lockBytes, _ := os.ReadFile(filepath.Join(dir, install.LockFileName))
	beforeRe := w.requests()
	res2 := initAndWrite(t, install.Options{Dir: dir, Source: src, Cache: c})
	// The cache holds every package by its locked h1:, so the server is
	// not asked anything.
	if n := w.requests() - beforeRe; n != 0 || res2.Downloads != 0 {
		t.Errorf("re-init made %d requests and %d downloads, want none", n, res2.Downloads)
	}
	if len(res2.Changes) != 0 {
		t.Errorf("re-init changes: %v", res2.Changes)
	}
	if lockBytes2, _ := os.ReadFile(filepath.Join(dir, install.LockFileName)); string(lockBytes) != string(lockBytes2) {
		t.Error("re-init changed the lock file")
	}

	// A cold cache gives the same lock file.
	dir3 := t.TempDir()
	writeFiles(t, dir3, map[string]string{"main.tf": mustRead(t, filepath.Join(dir, "main.tf"))})
	res4, err := install.Init(context.Background(), install.Options{Dir: dir3, Source: src, Resolve: resolve.Options{Lock: lockfile.New()}})
	if err != nil {
		t.Fatal(err)
	}
	if string(res4.Lock.Bytes()) != string(lf.Bytes()) {
		t.Errorf("a cold-cache init locked differently:\n%s\nvs\n%s", res4.Lock.Bytes(), lf.Bytes())
	}

	// The server now serves other contents at the same URL: with a cold
	// cache, the locked h1: refuses it and nothing changes.
	w.set("/app", map[string]string{"main.tf": "# app, changed\n"})
	freshMachine(t, dir)
	before := snapshot(t, dir)
	_, err = install.Init(context.Background(), install.Options{Dir: dir, Source: src})
	var ce *install.ChecksumError
	if !errors.As(err, &ce) || !errors.Is(err, source.ErrChecksumMismatch) || ce.Call != "app" {
		t.Fatalf("changed archive: %v, want a ChecksumError for module app", err)
	}
	if after := snapshot(t, dir); after != before {
		t.Error("a failed init changed the configuration directory")
	}
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestInitHTTPArchiveWithVersion(t *testing.T) {
	w := startArchiveWorld(t, false)
	w.set("/net.zip", map[string]string{"main.tf": "# net\n"})
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": `module "net" {
  source  = "` + w.srv.URL + `/net.zip"
  version = "~> 1.0"
}
`})
	src := &assemble.Dispatch{HTTP: registry.NewArchiveSource(registry.Options{HTTPClient: w.srv.Client(), Credentials: registry.Tokens{}})}
	_, err := install.Init(context.Background(), install.Options{Dir: dir, Source: src, Cache: openCache(t)})
	// The configuration reader refuses it, naming the file and line of the
	// version argument, before any source is asked.
	if err == nil || !strings.Contains(err.Error(), "main.tf:3") || !strings.Contains(err.Error(), "Invalid version argument") {
		t.Fatalf("HTTP archive with a version argument: %v, want an error at main.tf:3", err)
	}
	if n := w.requests(); n != 0 {
		t.Errorf("%d requests, want none", n)
	}
}

// TestDispatchDefaultHTTP checks that a Dispatch with no HTTP source
// fetches HTTP archives with the default one (here over plain HTTP, which
// the default HTTP client reaches without test certificates), and that the
// default hands a git location named by X-Terraform-Get back to the
// Dispatch's git source.
func TestDispatchDefaultHTTP(t *testing.T) {
	w := startArchiveWorld(t, true)
	files := map[string]string{"main.tf": "# plain\n"}
	w.set("/plain.tar.gz", files)
	const gitPkg = "git::https://git.example.test/acme/net.git"
	w.setGet("/to-git", gitPkg+"//modules/sub?ref=v1.2.0")
	gitFiles := map[string]string{"main.tf": "# net\n", "modules/sub/main.tf": "# sub\n"}
	git := &sourcetest.Static{Name: "git", Modules: []sourcetest.StaticModule{{Source: gitPkg, Ref: "v1.2.0", Files: gitFiles}}}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": "module \"plain\" {\n  source = \"" + w.srv.URL + "/plain.tar.gz\"\n}\n" +
		"module \"viagit\" {\n  source = \"" + w.srv.URL + "/to-git\"\n}\n"})
	d := &assemble.Dispatch{Git: git}
	res := initAndWrite(t, install.Options{Dir: dir, Source: d, Cache: openCache(t)})
	if got := res.Lock.ModuleHashes("plain"); len(got) != 1 || got[0] != mustH1(t, files) {
		t.Errorf("plain hashes = %v, want [%s]", got, mustH1(t, files))
	}
	if got := res.Lock.ModuleHashes("viagit"); len(got) != 1 || got[0] != mustH1(t, gitFiles) {
		t.Errorf("viagit hashes = %v, want [%s] (the git package)", got, mustH1(t, gitFiles))
	}
	// The subdirectory the location designates is where the module is.
	b, err := os.ReadFile(filepath.Join(dir, ".terraform", "modules", "modules.json"))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"Key":"viagit","Source":"` + w.srv.URL + `/to-git","Dir":".terraform/modules/viagit/modules/sub"}`; !strings.Contains(string(b), want) {
		t.Errorf("modules.json %s lacks %s", b, want)
	}
	_, err = d.Versions(context.Background(), source.ModulePackage{Source: "https://example.test/a.zip"})
	if !errors.Is(err, registry.ErrNoVersions) {
		t.Errorf("Versions of an HTTP archive through the default: %v, want ErrNoVersions", err)
	}
}
