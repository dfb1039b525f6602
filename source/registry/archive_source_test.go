package registry_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/dirhash"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/registry"
)

// archiveFiles is the module package every archive of the test server
// holds.
var archiveFiles = map[string]string{
	"main.tf":              "module \"sub\" {\n  source = \"./modules/sub\"\n}\n",
	"modules/sub/main.tf":  "# sub\n",
	"modules/sub/setup.sh": "#!/bin/sh\n",
}

// archiveH1 computes the h1: hash of files with x/mod's dirhash, an
// implementation independent of the hash package.
func archiveH1(t testing.TB, files map[string]string) hash.Hash {
	t.Helper()
	var names []string
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	s, err := dirhash.Hash1(names, func(n string) (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(files[n])), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	h, err := hash.ParseHash(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func zipOf(t testing.TB, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range sortedKeys(files) {
		hdr := &zip.FileHeader{Name: name, Method: zip.Deflate}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(name, ".sh") {
			mode = 0o755
		}
		hdr.SetMode(mode)
		w, err := zw.CreateHeader(hdr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(w, files[name]); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func tarGzOf(t testing.TB, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, name := range sortedKeys(files) {
		mode := int64(0o644)
		if strings.HasSuffix(name, ".sh") {
			mode = 0o755
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: int64(len(files[name])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(tw, files[name]); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sortedKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// archiveServer is an HTTPS server of module archives, counting the
// requests it receives by path.
type archiveServer struct {
	*httptest.Server
	mu    sync.Mutex
	seen  []string // "PATH?QUERY" of each request
	flaky atomic.Int32
}

func (s *archiveServer) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.seen)
}

func startArchiveServer(t *testing.T) *archiveServer {
	t.Helper()
	zipBytes, tgzBytes := zipOf(t, archiveFiles), tarGzOf(t, archiveFiles)
	evil := zipOf(t, map[string]string{"../escape.tf": "# out\n"})
	s := &archiveServer{}
	mux := http.NewServeMux()
	serve := func(b []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(b) }
	}
	mux.HandleFunc("/mod.zip", serve(zipBytes))
	mux.HandleFunc("/mod.tar.gz", serve(tgzBytes))
	mux.HandleFunc("/mod.tgz", serve(tgzBytes))
	mux.HandleFunc("/evil.zip", serve(evil))
	mux.HandleFunc("/download", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("archive") {
			http.Error(w, "the archive argument is for the client", http.StatusBadRequest)
			return
		}
		switch r.URL.Query().Get("id") {
		case "zip":
			_, _ = w.Write(zipBytes)
		default:
			_, _ = w.Write(tgzBytes)
		}
	})
	mux.HandleFunc("/indirect", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Terraform-Get", "./mod.tar.gz//modules/sub")
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `<html><head><meta name="terraform-get" content="/mod.zip?x=1&amp;y=2"></head></html>`)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Terraform-Get", "/loop")
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("/to-git", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Terraform-Get", "git::https://git.example.test/acme/net.git//modules/sub?ref=v1.2.0")
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("/plain", serve([]byte("no archive here")))
	mux.HandleFunc("/flaky.zip", func(w http.ResponseWriter, r *http.Request) {
		if s.flaky.Add(1) <= 2 {
			w.Header().Set("Retry-After", "0")
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write(zipBytes)
	})
	mux.HandleFunc("/basic.zip", func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "alice" || p != "s3cretpw" {
			http.Error(w, "who are you", http.StatusUnauthorized)
			return
		}
		_, _ = w.Write(zipBytes)
	})
	mux.HandleFunc("/bearer.zip", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok-123" {
			http.Error(w, "who are you", http.StatusUnauthorized)
			return
		}
		_, _ = w.Write(zipBytes)
	})
	mux.HandleFunc("/downgrade.zip", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+r.Host+"/mod.zip", http.StatusFound)
	})
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.seen = append(s.seen, r.URL.RequestURI())
		s.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func newArchiveSource(srv *archiveServer, mod func(*registry.Options)) *registry.ArchiveSource {
	o := registry.Options{
		HTTPClient:  srv.Client(),
		Credentials: registry.Tokens{},
		MinBackoff:  time.Millisecond,
		MaxBackoff:  5 * time.Millisecond,
		LookupEnv:   noEnv,
	}
	if mod != nil {
		mod(&o)
	}
	return registry.NewArchiveSource(o)
}

// readTree returns every regular file under dir with its contents.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// noLeftovers fails if dir exists or its parent holds staging leftovers.
func noLeftovers(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("%s exists after a failed fetch", dir)
	}
	entries, _ := os.ReadDir(filepath.Dir(dir))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".tflock-") {
			t.Errorf("staging leftover %s", e.Name())
		}
	}
}

func TestArchiveSourceFetch(t *testing.T) {
	srv := startArchiveServer(t)
	want := archiveH1(t, archiveFiles)
	tests := []struct {
		name, src  string
		wantSubdir string
		wantPath   string // the request the archive was served for
	}{
		{name: "zip", src: srv.URL + "/mod.zip", wantPath: "/mod.zip"},
		{name: "tar.gz", src: srv.URL + "/mod.tar.gz", wantPath: "/mod.tar.gz"},
		{name: "tgz", src: srv.URL + "/mod.tgz", wantPath: "/mod.tgz"},
		{name: "archive=zip", src: srv.URL + "/download?archive=zip&id=zip", wantPath: "/download?id=zip"},
		{name: "archive=tar.gz", src: srv.URL + "/download?archive=tar.gz&id=tgz", wantPath: "/download?id=tgz"},
		{name: "forced https getter", src: "https::" + srv.URL + "/mod.zip", wantPath: "/mod.zip"},
		{name: "X-Terraform-Get with subdir", src: srv.URL + "/indirect", wantSubdir: "modules/sub", wantPath: "/mod.tar.gz"},
		{name: "terraform-get meta tag", src: srv.URL + "/page", wantPath: "/mod.zip?x=1&y=2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var events []source.EventKind
			var mu sync.Mutex
			src := newArchiveSource(srv, func(o *registry.Options) {
				o.Events = source.EventsFunc(func(e source.Event) {
					mu.Lock()
					events = append(events, e.Kind)
					mu.Unlock()
				})
			})
			dir := filepath.Join(t.TempDir(), "pkg")
			pkg := source.ModulePackage{Source: tt.src}
			f, err := src.Fetch(context.Background(), pkg, dir)
			if err != nil {
				t.Fatal(err)
			}
			if f.Package != pkg || f.Dir != dir || f.Subdir != tt.wantSubdir || f.Size == 0 {
				t.Errorf("Fetched = %+v", f)
			}
			if len(f.Hashes) != 1 || f.Hashes[0] != want {
				t.Errorf("hashes = %v, want [%s]", f.Hashes, want)
			}
			if entries, _ := os.ReadDir(filepath.Dir(dir)); len(entries) != 1 || entries[0].Name() != "pkg" {
				t.Errorf("leftovers beside the package: %v", entries)
			}
			if got := readTree(t, dir); !equalFiles(got, archiveFiles) {
				t.Errorf("extracted %v, want %v", got, archiveFiles)
			}
			info, err := os.Stat(filepath.Join(dir, "modules", "sub", "setup.sh"))
			if err != nil || info.Mode().Perm()&0o100 == 0 {
				t.Errorf("setup.sh: %v, mode %v; want the executable bit kept", err, info)
			}
			if reqs := srv.requests(); reqs[len(reqs)-1] != tt.wantPath {
				t.Errorf("last request %q, want %q", reqs[len(reqs)-1], tt.wantPath)
			}
			if strings.Contains(f.Location, "?") {
				t.Errorf("Location %q shows a query", f.Location)
			}
			mu.Lock()
			defer mu.Unlock()
			if !slices.Contains(events, source.EventFetchStarted) || events[len(events)-1] != source.EventFetchDone {
				t.Errorf("events %v, want started ... done", events)
			}
		})
	}
}

func equalFiles(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

func TestArchiveSourceCredentials(t *testing.T) {
	srv := startArchiveServer(t)
	ctx := context.Background()
	host := strings.TrimPrefix(srv.URL, "https://")

	// User information in the URL is sent as basic authentication.
	src := newArchiveSource(srv, nil)
	withUser := "https://alice:s3cretpw@" + host + "/basic.zip"
	if _, err := src.Fetch(ctx, source.ModulePackage{Source: withUser}, filepath.Join(t.TempDir(), "a")); err != nil {
		t.Fatalf("basic auth from the URL: %v", err)
	}
	// A wrong password: unauthorized, and neither the user nor the
	// password is in the message.
	dir := filepath.Join(t.TempDir(), "b")
	_, err := src.Fetch(ctx, source.ModulePackage{Source: "https://alice:wrongpw@" + host + "/basic.zip"}, dir)
	if !errors.Is(err, source.ErrUnauthorized) {
		t.Fatalf("wrong password: %v, want ErrUnauthorized", err)
	}
	for _, secret := range []string{"alice", "wrongpw"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error %q shows the credential %q", err, secret)
		}
	}
	noLeftovers(t, dir)
	// A user name alone (a token) is not shown either, even in transport
	// errors, which print the URL.
	_, err = src.Fetch(ctx, source.ModulePackage{Source: "https://tokenuser99@127.0.0.1:1/mod.zip"}, filepath.Join(t.TempDir(), "c"))
	if err == nil || strings.Contains(err.Error(), "tokenuser99") {
		t.Errorf("unreachable host: %v; want an error without the user name", err)
	}

	// A token for the host (TF_TOKEN_* or the CLI configuration) is sent
	// as a bearer token, and never shown.
	withTok := newArchiveSource(srv, func(o *registry.Options) { o.Credentials = registry.Tokens{host: "tok-123"} })
	if _, err := withTok.Fetch(ctx, source.ModulePackage{Source: srv.URL + "/bearer.zip"}, filepath.Join(t.TempDir(), "d")); err != nil {
		t.Fatalf("bearer token: %v", err)
	}
	badTok := newArchiveSource(srv, func(o *registry.Options) { o.Credentials = registry.Tokens{host: "tok-999"} })
	_, err = badTok.Fetch(ctx, source.ModulePackage{Source: srv.URL + "/bearer.zip"}, filepath.Join(t.TempDir(), "e"))
	if !errors.Is(err, source.ErrUnauthorized) || strings.Contains(err.Error(), "tok-999") {
		t.Errorf("wrong token: %v; want ErrUnauthorized without the token", err)
	}
}

func TestArchiveSourceErrors(t *testing.T) {
	srv := startArchiveServer(t)
	ctx := context.Background()
	src := newArchiveSource(srv, nil)
	tests := []struct {
		name string
		pkg  source.Package
		want error
	}{
		{"missing", source.ModulePackage{Source: srv.URL + "/nope.zip"}, source.ErrNotFound},
		{"unsafe archive", source.ModulePackage{Source: srv.URL + "/evil.zip"}, nil},
		{"endless X-Terraform-Get", source.ModulePackage{Source: srv.URL + "/loop"}, registry.ErrUnsupportedLocation},
		{"no archive, no location", source.ModulePackage{Source: srv.URL + "/plain"}, registry.ErrUnsupportedLocation},
		{"git location", source.ModulePackage{Source: srv.URL + "/to-git"}, registry.ErrUnsupportedLocation},
		{"query kept", source.ModulePackage{Source: srv.URL + "/plain?b=2&a=1"}, registry.ErrUnsupportedLocation},
		{"tar.xz", source.ModulePackage{Source: srv.URL + "/mod.tar.xz"}, registry.ErrUnsupportedLocation},
		{"archive=tar.bz2", source.ModulePackage{Source: srv.URL + "/download?archive=tar.bz2"}, registry.ErrUnsupportedLocation},
		{"https to http redirect", source.ModulePackage{Source: srv.URL + "/downgrade.zip"}, registry.ErrInsecureRedirect},
		{"version", source.ModulePackage{Source: srv.URL + "/mod.zip", Version: versions.MustParse("1.0.0")}, registry.ErrNoVersions},
		{"ref", source.ModulePackage{Source: srv.URL + "/mod.zip", Ref: "v1"}, registry.ErrNoVersions},
		{"git package", source.ModulePackage{Source: "git::https://example.test/a.git"}, source.ErrNotFound},
		{"registry package", source.ModulePackage{Source: "example.test/acme/net/aws"}, source.ErrNotFound},
		{"subdirectory in the package address", source.ModulePackage{Source: srv.URL + "/mod.zip//modules/sub"}, source.ErrNotFound},
		{"provider", source.ProviderPackage{}, source.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(srv.requests())
			dir := filepath.Join(t.TempDir(), "pkg")
			_, err := src.Fetch(ctx, tt.pkg, dir)
			if err == nil {
				t.Fatal("Fetch succeeded")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("error %v, want %v", err, tt.want)
			}
			var se *source.Error
			if !errors.As(err, &se) {
				t.Errorf("error %v is not a *source.Error", err)
			}
			noLeftovers(t, dir)
			if outside := filepath.Join(filepath.Dir(dir), "escape.tf"); fileExists(outside) {
				t.Error("the unsafe archive wrote outside the package directory")
			}
			if tt.name == "query kept" {
				// go-getter adds terraform-get=1 to the other arguments and
				// encodes them again, sorted by name.
				if reqs := srv.requests(); reqs[len(reqs)-1] != "/plain?a=1&b=2&terraform-get=1" {
					t.Errorf("request %q, want /plain?a=1&b=2&terraform-get=1", reqs[len(reqs)-1])
				}
			}
			if tt.name == "git location" && (strings.Contains(err.Error(), "registry") || !strings.Contains(err.Error(), "git::https://git.example.test/acme/net.git") || !strings.Contains(err.Error(), "assemble.Dispatch")) {
				t.Errorf("error %q: want one naming the git location and the dispatcher that routes it, without mentioning a registry", err)
			}
			switch tt.name {
			case "tar.xz", "archive=tar.bz2", "version", "ref", "git package", "registry package", "provider":
				if n := len(srv.requests()) - before; n != 0 {
					t.Errorf("%d requests for a package refused up front", n)
				}
			}
		})
	}
	// The endless chain stops after a bounded number of hops. Each hop
	// asks with terraform-get=1 in its query, as go-getter does.
	var loops int
	for _, r := range srv.requests() {
		if strings.HasPrefix(r, "/loop") {
			if r != "/loop?terraform-get=1" {
				t.Errorf("request %q, want /loop?terraform-get=1", r)
			}
			loops++
		}
	}
	if loops < 2 || loops > 6 {
		t.Errorf("%d requests to /loop, want a bounded chain (go-getter: 5 hops)", loops)
	}
	// Refused content is not a partial success: a non-empty destination
	// is an error, and left alone.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "keep"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Fetch(ctx, source.ModulePackage{Source: srv.URL + "/mod.zip"}, dir); err == nil {
		t.Error("Fetch into a non-empty directory succeeded")
	}
	if !fileExists(filepath.Join(dir, "keep")) {
		t.Error("the non-empty destination was changed")
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func TestArchiveSourceRetriesAndLimits(t *testing.T) {
	srv := startArchiveServer(t)
	ctx := context.Background()
	if _, err := newArchiveSource(srv, nil).Fetch(ctx, source.ModulePackage{Source: srv.URL + "/flaky.zip"}, filepath.Join(t.TempDir(), "a")); err != nil {
		t.Fatalf("503 twice then OK: %v", err)
	}
	if n := srv.flaky.Load(); n != 3 {
		t.Errorf("%d attempts, want 3", n)
	}
	small := newArchiveSource(srv, func(o *registry.Options) { o.Limits.MaxBytes = 16 })
	dir := filepath.Join(t.TempDir(), "b")
	if _, err := small.Fetch(ctx, source.ModulePackage{Source: srv.URL + "/mod.zip"}, dir); !errors.Is(err, registry.ErrTooLarge) {
		t.Errorf("archive over Limits.MaxBytes: %v, want ErrTooLarge", err)
	}
	noLeftovers(t, dir)
}

// TestArchiveSourceLocation: an HTTP address whose X-Terraform-Get
// answer names a git repository is reported as that location, //SUBDIR
// and ref included, for a dispatcher to route; an archive URL is reported
// as itself, with the fetcher that downloads it.
func TestArchiveSourceLocation(t *testing.T) {
	srv := startArchiveServer(t)
	src := newArchiveSource(srv, nil)
	ctx := context.Background()
	loc, err := src.ModuleLocation(ctx, source.ModulePackage{Source: srv.URL + "/to-git"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "git::https://git.example.test/acme/net.git//modules/sub?ref=v1.2.0"; loc.Address != want || loc.Archive != nil {
		t.Errorf("ModuleLocation = %q (archive fetcher %v), want %q and none", loc.Address, loc.Archive != nil, want)
	}
	pkg := source.ModulePackage{Source: srv.URL + "/mod.zip"}
	loc, err = src.ModuleLocation(ctx, pkg)
	if err != nil {
		t.Fatal(err)
	}
	if loc.Address != pkg.Source || loc.Archive == nil {
		t.Fatalf("ModuleLocation = %q (archive fetcher %v), want %q with a fetcher", loc.Address, loc.Archive != nil, pkg.Source)
	}
	dir := filepath.Join(t.TempDir(), "pkg")
	f, err := loc.Archive.Fetch(ctx, pkg, dir)
	if err != nil {
		t.Fatal(err)
	}
	want, err := src.Fetch(ctx, pkg, filepath.Join(t.TempDir(), "again"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Package != pkg || len(f.Hashes) != 1 || f.Hashes[0] != want.Hashes[0] {
		t.Errorf("Fetched %+v, want the package's h1 %v", f, want.Hashes)
	}
	if _, err := src.ModuleLocation(ctx, source.ModulePackage{Source: pkg.Source, Ref: "v1"}); !errors.Is(err, registry.ErrNoVersions) {
		t.Errorf("ModuleLocation with a ref: %v, want ErrNoVersions", err)
	}
}

func TestArchiveSourceVersions(t *testing.T) {
	src := registry.NewArchiveSource(registry.Options{})
	ctx := context.Background()
	_, err := src.Versions(ctx, source.ModulePackage{Source: "https://example.test/mod.zip"})
	if !errors.Is(err, registry.ErrNoVersions) || !errors.Is(err, source.ErrVersionNotFound) || errors.Is(err, source.ErrNotFound) {
		t.Errorf("HTTP archive: %v, want ErrNoVersions and ErrVersionNotFound", err)
	}
	if !strings.Contains(err.Error(), "https://example.test/mod.zip") || !strings.Contains(err.Error(), "version argument") {
		t.Errorf("message %q should name the package and the version argument", err)
	}
	for _, pkg := range []source.Package{
		source.ModulePackage{Source: "git::https://example.test/a.git"},
		source.ModulePackage{Source: "oci://example.test/a"},
		source.ModulePackage{Source: "./local"},
		source.ProviderPackage{},
	} {
		if _, err := src.Versions(ctx, pkg); !errors.Is(err, source.ErrNotFound) {
			t.Errorf("%T %v: %v, want ErrNotFound", pkg, pkg, err)
		}
	}
	// Credentials in the address do not reach the message.
	_, err = src.Versions(ctx, source.ModulePackage{Source: "https://bob:hunter22@example.test/mod.zip"})
	if err == nil || strings.Contains(err.Error(), "hunter22") || strings.Contains(err.Error(), "bob") {
		t.Errorf("error %v shows credentials", err)
	}
}
