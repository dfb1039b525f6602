package mirrorserve_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/cache/mirrorserve"
	"github.com/tflock/tflock/source/cache/ocitier"
	"github.com/tflock/tflock/source/mirror"
	"github.com/tflock/tflock/source/oci"
	"github.com/tflock/tflock/source/oci/ocitest"
	"github.com/tflock/tflock/source/registry"
	"github.com/tflock/tflock/source/registry/registrytest"
)

const (
	addr    = "registry.example.test/acme/cloud"
	version = "1.2.0"
	zipName = "terraform-provider-cloud_1.2.0_linux_amd64.zip"
)

var plats = []string{"linux_amd64", "darwin_arm64", "windows_amd64"}

type env struct {
	reg   *registrytest.Server
	src   source.Source
	cache *cache.Cache
	dir   string
}

func newEnv(t *testing.T, opts registrytest.Options) *env {
	t.Helper()
	fx := registrytest.Fixtures{Providers: []registrytest.Provider{
		{Addr: addr, Versions: []registrytest.ProviderVersion{{Version: "1.0.0", Platforms: plats}, {Version: version, Platforms: plats}}},
	}}
	reg := registrytest.New(t, fx, opts)
	c, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	src := registry.NewSource(registry.Options{HTTPClient: reg.Client(), Credentials: registry.Tokens{}, Retries: -1})
	return &env{reg: reg, src: src, cache: c, dir: t.TempDir()}
}

func (e *env) handler(t *testing.T) (*mirrorserve.Handler, *httptest.Server) {
	t.Helper()
	h, err := mirrorserve.New(mirrorserve.Options{Source: e.src, Cache: e.cache, Dir: e.dir})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return h, srv
}

// downloads is the number of package downloads the registry served for
// one platform of the release.
func (e *env) downloads(t *testing.T, plat string) int {
	t.Helper()
	info, ok := e.reg.ProviderPackage(addr, version, plat)
	if !ok {
		t.Fatalf("no package for %s", plat)
	}
	return e.reg.RequestsTo(fmt.Sprintf("/files/providers/%s/%s/%s", addr, version, info.Filename))
}

// signed is the zh: of every platform in the release's SHA256SUMS.
func (e *env) signed(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(e.reg.SHA256SUMS(addr, version)))
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			continue
		}
		name = strings.TrimSuffix(strings.TrimPrefix(name, "terraform-provider-cloud_"+version+"_"), ".zip")
		out[name] = "zh:" + sum
	}
	if len(out) != len(plats) {
		t.Fatalf("SHA256SUMS lists %v", out)
	}
	return out
}

func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

type versionDoc struct {
	Archives map[string]struct {
		URL    string   `json:"url"`
		Hashes []string `json:"hashes"`
	} `json:"archives"`
}

func versionJSON(t *testing.T, base string) versionDoc {
	t.Helper()
	code, b := get(t, base+"/"+addr+"/"+version+".json")
	if code != http.StatusOK {
		t.Fatalf("VERSION.json: %d %s", code, b)
	}
	var doc versionDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("VERSION.json: %v\n%s", err, b)
	}
	return doc
}

func zhOf(b []byte) string {
	s := sha256.Sum256(b)
	return "zh:" + hex.EncodeToString(s[:])
}

// The protocol's three documents: the versions, every platform of a
// release with its signed zh: (and its h1: once the package is known), and
// the archive exactly as the origin signed it, downloaded from the origin
// once however many ask for it at once.
func TestHandlerServesTheProtocol(t *testing.T) {
	e := newEnv(t, registrytest.Options{})
	h, srv := e.handler(t)
	signed := e.signed(t)

	code, b := get(t, srv.URL+"/"+addr+"/index.json")
	if code != http.StatusOK || !strings.Contains(string(b), `"1.0.0"`) || !strings.Contains(string(b), `"1.2.0"`) {
		t.Fatalf("index.json: %d %s", code, b)
	}
	doc := versionJSON(t, srv.URL)
	if len(doc.Archives) != len(plats) {
		t.Fatalf("VERSION.json lists %d platforms, want %d: %+v", len(doc.Archives), len(plats), doc)
	}
	for _, p := range plats {
		a := doc.Archives[p]
		if a.URL != "terraform-provider-cloud_1.2.0_"+p+".zip" {
			t.Errorf("%s: url %q", p, a.URL)
		}
		if len(a.Hashes) != 1 || a.Hashes[0] != signed[p] {
			t.Errorf("%s: hashes %v, want the signed %s only (nothing downloaded yet)", p, a.Hashes, signed[p])
		}
	}

	var wg sync.WaitGroup
	bodies := make([][]byte, 8)
	for i := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, b := get(t, srv.URL+"/"+addr+"/"+zipName)
			if code != http.StatusOK {
				t.Errorf("archive: %d %s", code, b)
			}
			bodies[i] = b
		}()
	}
	wg.Wait()
	for i, b := range bodies {
		if zhOf(b) != signed["linux_amd64"] {
			t.Errorf("request %d: archive's zh: %s, want the signed %s", i, zhOf(b), signed["linux_amd64"])
		}
	}
	if n := e.downloads(t, "linux_amd64"); n != 1 {
		t.Errorf("the origin served the package %d times to 8 requests at once, want 1", n)
	}
	if n := e.reg.RequestsTo(fmt.Sprintf("/files/providers/%s/%s/terraform-provider-cloud_%s_SHA256SUMS", addr, version, version)); n != 1 {
		t.Errorf("the release's SHA256SUMS was fetched %d times, want once (VERSION.json and the archive share it)", n)
	}
	if st := h.Stats(); st.Fetched != 1 || st.Served != 8 {
		t.Errorf("stats %+v, want 1 fetched, 8 served", st)
	}

	// The h1: is known now, from the cache.
	f := filepath.Join(t.TempDir(), "p.zip")
	if err := os.WriteFile(f, bodies[0], 0o644); err != nil {
		t.Fatal(err)
	}
	h1, err := hash.H1Zip(f)
	if err != nil {
		t.Fatal(err)
	}
	doc = versionJSON(t, srv.URL)
	if got := doc.Archives["linux_amd64"].Hashes; len(got) != 2 || !contains(got, h1.String()) || !contains(got, signed["linux_amd64"]) {
		t.Errorf("linux_amd64 hashes after the download: %v, want %s and %s", got, h1, signed["linux_amd64"])
	}
	if _, ok, err := e.cache.Lookup(context.Background(), pkg(t, "linux_amd64"), []hash.Hash{h1}); err != nil || !ok {
		t.Errorf("the package is not in the cache: %v", err)
	}

	// A second handler on the same archive directory downloads nothing.
	_, srv2 := e.handler(t)
	if code, b := get(t, srv2.URL+"/"+addr+"/"+zipName); code != http.StatusOK || zhOf(b) != signed["linux_amd64"] {
		t.Fatalf("second handler: %d", code)
	}
	if n := e.downloads(t, "linux_amd64"); n != 1 {
		t.Errorf("a second handler downloaded again: %d downloads", n)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func pkg(t *testing.T, plat string) source.ProviderPackage {
	t.Helper()
	var lf = fmt.Sprintf("provider %q {\n  version = %q\n}\n", addr, version)
	f, err := lockfile.Parse([]byte(lf), "x.hcl")
	if err != nil {
		t.Fatal(err)
	}
	for pl := range f.Providers() {
		p, err := source.ParsePlatform(plat)
		if err != nil {
			t.Fatal(err)
		}
		return source.ProviderPackage{Addr: pl.Addr, Version: pl.Version, Platform: p}
	}
	t.Fatal("no provider")
	return source.ProviderPackage{}
}

// An archive in the directory that is not the signed one (edited, or put
// there by someone else) is not served: it is fetched again.
func TestHandlerReplacesATamperedArchive(t *testing.T) {
	e := newEnv(t, registrytest.Options{})
	_, srv := e.handler(t)
	signed := e.signed(t)
	if code, _ := get(t, srv.URL+"/"+addr+"/"+zipName); code != http.StatusOK {
		t.Fatal(code)
	}
	p := filepath.Join(e.dir, filepath.FromSlash(addr), zipName)
	if err := os.WriteFile(p, []byte("PK not the package"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, srv2 := e.handler(t)
	code, b := get(t, srv2.URL+"/"+addr+"/"+zipName)
	if code != http.StatusOK || zhOf(b) != signed["linux_amd64"] {
		t.Fatalf("after tampering: %d, zh %s, want the signed %s", code, zhOf(b), signed["linux_amd64"])
	}
	if n := e.downloads(t, "linux_amd64"); n != 2 {
		t.Errorf("%d downloads, want 2 (the tampered archive fetched again)", n)
	}
}

// An origin whose package does not match its signed checksums gets
// nothing served and nothing stored.
func TestHandlerRefusesWhatTheOriginDidNotSign(t *testing.T) {
	e := newEnv(t, registrytest.Options{Fault: registrytest.TamperedPackage})
	_, srv := e.handler(t)
	code, b := get(t, srv.URL+"/"+addr+"/"+zipName)
	if code != http.StatusBadGateway || !strings.Contains(string(b), "checksum") {
		t.Errorf("tampered origin: %d %s, want 502 naming the checksum", code, b)
	}
	var left []string
	_ = filepath.Walk(e.dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			left = append(left, p)
		}
		return nil
	})
	if len(left) != 0 {
		t.Errorf("files left in the archive directory: %v", left)
	}
}

func TestHandlerNotFound(t *testing.T) {
	e := newEnv(t, registrytest.Options{})
	_, srv := e.handler(t)
	for _, p := range []string{
		"/registry.example.test/acme/nothing/index.json",
		"/" + addr + "/9.9.9.json",
		"/" + addr + "/terraform-provider-cloud_9.9.9_linux_amd64.zip",
		"/" + addr + "/terraform-provider-other_1.2.0_linux_amd64.zip",
		"/" + addr + "/../../x/index.json",
		"/REGISTRY.example.test/acme/cloud/index.json",
		"/" + addr,
	} {
		if code, b := get(t, srv.URL+p); code != http.StatusNotFound {
			t.Errorf("%s: %d %s, want 404", p, code, b)
		}
	}
	resp, err := http.Post(srv.URL+"/"+addr+"/index.json", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", resp.StatusCode)
	}
}

func TestNewNeedsItsOptions(t *testing.T) {
	for _, o := range []mirrorserve.Options{{}, {Source: registry.NewSource(registry.Options{})}} {
		if _, err := mirrorserve.New(o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
}

// With a token, a request without it gets 401 and nothing is fetched; the
// JSON documents take it as a bearer token, an archive also as the query
// parameter that VERSION.json's URLs carry.
func TestHandlerToken(t *testing.T) {
	e := newEnv(t, registrytest.Options{})
	token := mirrorserve.NewToken()
	h, err := mirrorserve.New(mirrorserve.Options{Source: e.src, Cache: e.cache, Dir: e.dir, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	base := srv.URL + "/" + addr + "/"
	for _, u := range []string{base + "index.json", base + version + ".json", base + zipName, base + zipName + "?token=wrong", base + "index.json?token=" + token} {
		if code, _ := get(t, u); code != http.StatusUnauthorized {
			t.Errorf("%s: %d, want 401", u, code)
		}
	}
	if n := e.reg.Requests(); n != 0 {
		t.Errorf("unauthorized requests reached the origin: %d requests", n)
	}
	req, _ := http.NewRequest(http.MethodGet, base+version+".json", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var doc versionDoc
	err = json.NewDecoder(resp.Body).Decode(&doc)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("with the token: %d %v", resp.StatusCode, err)
	}
	u := doc.Archives["linux_amd64"].URL
	if u != zipName+"?token="+token {
		t.Fatalf("archive URL %q", u)
	}
	if code, b := get(t, base+u); code != http.StatusOK || zhOf(b) != e.signed(t)["linux_amd64"] {
		t.Errorf("archive with the URL's token: %d", code)
	}
}

// With a remote tier: an archive fetched from the origin on one machine is
// written through; another machine's mirror (its own cache, its own
// archive directory) serves it from the tier, the origin's bytes, without
// asking the origin.
func TestHandlerRemoteTier(t *testing.T) {
	e := newEnv(t, registrytest.Options{})
	signed := e.signed(t)
	reg := ocitest.New(t, ocitest.ServerOptions{})
	machine := func() *httptest.Server {
		tier, err := ocitier.New("oci://"+reg.Host()+"/fleet", ocitier.Options{OCI: oci.Options{PlainHTTP: true, HTTPClient: reg.Client()}})
		if err != nil {
			t.Fatal(err)
		}
		c, err := cache.Open(t.TempDir(), cache.Options{Remote: tier})
		if err != nil {
			t.Fatal(err)
		}
		h, err := mirrorserve.New(mirrorserve.Options{Source: e.src, Cache: c, Dir: t.TempDir(), Remote: tier})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return srv
	}
	for i := range 2 {
		srv := machine()
		code, b := get(t, srv.URL+"/"+addr+"/"+zipName)
		if code != http.StatusOK || zhOf(b) != signed["linux_amd64"] {
			t.Fatalf("machine %d: %d, zh %s", i, code, zhOf(b))
		}
	}
	if n := e.downloads(t, "linux_amd64"); n != 1 {
		t.Errorf("the origin served %d downloads to two machines sharing a tier, want 1", n)
	}
}

// A package that its installation method hands over extracted (an
// unpacked filesystem mirror) is served as a zip of its files, whose h1:
// is the tree's.
func TestHandlerServesAnUnpackedMirror(t *testing.T) {
	src := t.TempDir()
	pdir := filepath.Join(src, "example.test", "acme", "tool", "1.0.0", "linux_amd64")
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pdir, "terraform-provider-tool_v1.0.0"), []byte("a provider"), 0o755); err != nil {
		t.Fatal(err)
	}
	want, err := hash.H1Dir(pdir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := mirrorserve.New(mirrorserve.Options{Source: mirror.NewFilesystem(src), Cache: c, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	base := srv.URL + "/example.test/acme/tool/"
	if code, b := get(t, base+"1.0.0.json"); code != http.StatusOK || !strings.Contains(string(b), `"linux_amd64"`) {
		t.Fatalf("VERSION.json: %d %s", code, b)
	}
	code, b := get(t, base+"terraform-provider-tool_1.0.0_linux_amd64.zip")
	if code != http.StatusOK {
		t.Fatalf("archive: %d %s", code, b)
	}
	f := filepath.Join(t.TempDir(), "p.zip")
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := hash.H1Zip(f); err != nil || got != want {
		t.Errorf("the archive's h1: %s (%v), want the tree's %s", got, err, want)
	}
	if code, b := get(t, base+"1.0.0.json"); code != http.StatusOK || !strings.Contains(string(b), want.String()) {
		t.Errorf("VERSION.json after the download lacks the h1: %s", b)
	}
}
