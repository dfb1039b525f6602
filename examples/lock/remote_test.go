package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache/ocitier"
	"github.com/tflock/tflock/source/oci"
)

// tierServer is an in-process OCI registry for the remote tier, which can
// be made to stop answering after a number of requests (a registry going
// away in the middle of a run).
type tierServer struct {
	srv      *httptest.Server
	requests atomic.Int64
	dieAfter atomic.Int64 // 0: never
}

func newTierServer(t *testing.T) *tierServer {
	t.Helper()
	s := &tierServer{}
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := s.requests.Add(1)
		if d := s.dieAfter.Load(); d > 0 && n > d {
			// Gone: the connection is dropped without an answer.
			if hj, ok := w.(http.Hijacker); ok {
				if c, _, err := hj.Hijack(); err == nil {
					c.Close()
					return
				}
			}
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(s.srv.Close)
	// The OCI sources' test client reaches it over plain HTTP.
	addr := s.srv.Listener.Addr().String()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	var d net.Dialer
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr)
	}
	ociTestClient = &http.Client{Transport: tr}
	t.Cleanup(func() { ociTestClient = nil })
	return s
}

func (s *tierServer) location() string {
	return "oci://" + strings.TrimPrefix(s.srv.URL, "http://") + "/fleet"
}

// downloadsRE reads the run's closing count line.
var downloadsRE = regexp.MustCompile(`(\d+) version lists fetched, (\d+) packages downloaded\.`)

func counts(t *testing.T, out string) (lists, downloads string) {
	t.Helper()
	m := downloadsRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no count line in:\n%s", out)
	}
	return m[1], m[2]
}

// copyConfig copies the configuration files and the lock file of a work
// directory (not .terraform) into a new one: the same repository checked
// out on another machine.
func copyConfig(t *testing.T, from, to string) {
	t.Helper()
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(to, e.Name()), string(b))
	}
}

// installedTree is what a run installed: every file under .terraform
// (providers and modules) with the SHA-256 of its content and its
// executable bit; modules.json is left out (it names the directory).
func installedTree(t *testing.T, work string) map[string]string {
	t.Helper()
	root := filepath.Join(work, ".terraform")
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if filepath.Base(rel) == "modules.json" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = fmt.Sprintf("%x %v", sha256.Sum256(b), info.Mode().Perm()&0o111 != 0)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRemoteCacheTwoRunners: a runner writes what it downloads through to
// the remote tier; a second runner with the same configuration and lock
// file but a local cache of its own contacts no origin and installs an
// identical tree. Both modes: the second runner's providers-lock for more
// platforms writes those packages through too.
func TestRemoteCacheTwoRunners(t *testing.T) {
	if err := installtest.HaveGit(); err != nil {
		t.Skip(err)
	}
	tier := newTierServer(t)
	tmp := t.TempDir()
	work1, work2 := filepath.Join(tmp, "w1"), filepath.Join(tmp, "w2")

	out, code := runLock(t, "-work", work1, "-cache-dir", filepath.Join(tmp, "c1"), "-remote-cache", tier.location())
	if code != 0 {
		t.Fatalf("first runner: exit %d\n%s", code, out)
	}
	if _, dl := counts(t, out); dl == "0" || strings.Contains(out, "Warning: remote cache tier") {
		t.Fatalf("first runner: %s downloads\n%s", dl, out)
	}
	copyConfig(t, work1, work2)
	out, code = runLock(t, "-work", work2, "-cache-dir", filepath.Join(tmp, "c2"), "-remote-cache", tier.location())
	if code != 0 {
		t.Fatalf("second runner: exit %d\n%s", code, out)
	}
	if lists, dl := counts(t, out); lists != "0" || dl != "0" || !strings.Contains(out, "No changes to ") {
		t.Fatalf("second runner: %s version lists, %s downloads; want none from the origins\n%s", lists, dl, out)
	}
	if !strings.Contains(out, "from the cache") {
		t.Errorf("second runner does not report the remote tier's packages:\n%s", out)
	}
	a, b := installedTree(t, work1), installedTree(t, work2)
	if len(a) == 0 || fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("installed trees differ:\n%v\n%v", a, b)
	}

	// providers-lock: every package downloaded from the origin, for every
	// platform, is written through.
	plats := installtest.Platforms()
	args := []string{"providers-lock", "-work", work2, "-cache-dir", filepath.Join(tmp, "c2"), "-remote-cache", tier.location()}
	for _, p := range plats {
		args = append(args, "-platform", p)
	}
	if out, code = runLock(t, args...); code != 0 {
		t.Fatalf("providers-lock: exit %d\n%s", code, out)
	}
	tr, err := ocitier.New(tier.location(), ocitier.Options{OCI: oci.Options{PlainHTTP: true, HTTPClient: ociTestClient}})
	if err != nil {
		t.Fatal(err)
	}
	for _, addr := range []string{"registry.example.test/acme/cloud 1.0.0", "registry.example.test/acme/dns 2.0.0"} {
		a, v, _ := strings.Cut(addr, " ")
		for _, p := range plats {
			plat, err := source.ParsePlatform(p)
			if err != nil {
				t.Fatal(err)
			}
			pkg := source.ProviderPackage{Addr: mustProvider(a), Version: versions.MustParse(v), Platform: plat}
			if _, err := tr.Get(context.Background(), pkg, nil, filepath.Join(t.TempDir(), "p.zip")); err != nil {
				t.Errorf("providers-lock did not write %s through: %v", pkg, err)
			}
		}
	}
}

// TestRemoteCacheFourRunnersAtOnce: four runners at once on an empty
// prefix all succeed, and every blob the registry holds verifies by its
// digest; a fifth runner is then served everything by the tier.
func TestRemoteCacheFourRunnersAtOnce(t *testing.T) {
	if err := installtest.HaveGit(); err != nil {
		t.Skip(err)
	}
	tier := newTierServer(t)
	tmp := t.TempDir()
	var wg sync.WaitGroup
	outs := make([]string, 4)
	codes := make([]int, 4)
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], codes[i] = runLock(t, "-work", filepath.Join(tmp, fmt.Sprint("w", i)), "-cache-dir", filepath.Join(tmp, fmt.Sprint("c", i)), "-remote-cache", tier.location())
		}()
	}
	wg.Wait()
	for i := range 4 {
		if codes[i] != 0 || strings.Contains(outs[i], "Warning: remote cache tier") {
			t.Fatalf("runner %d: exit %d\n%s", i, codes[i], outs[i])
		}
	}
	if n := verifyAllBlobs(t, strings.TrimPrefix(tier.srv.URL, "http://")); n == 0 {
		t.Fatal("the tier holds no blob")
	}
	copyConfig(t, filepath.Join(tmp, "w0"), filepath.Join(tmp, "w5"))
	out, code := runLock(t, "-work", filepath.Join(tmp, "w5"), "-cache-dir", filepath.Join(tmp, "c5"), "-remote-cache", tier.location())
	if code != 0 {
		t.Fatalf("fifth runner: exit %d\n%s", code, out)
	}
	if _, dl := counts(t, out); dl != "0" {
		t.Errorf("fifth runner downloaded %s packages\n%s", dl, out)
	}
}

// verifyAllBlobs walks every repository and tag of the registry and checks
// every manifest, index and blob against its digest; it returns how many
// blobs it checked.
func verifyAllBlobs(t *testing.T, host string) int {
	t.Helper()
	ctx := context.Background()
	reg, err := remote.NewRegistry(host)
	if err != nil {
		t.Fatal(err)
	}
	reg.PlainHTTP = true
	var repos []string
	if err := reg.Repositories(ctx, "", func(r []string) error { repos = append(repos, r...); return nil }); err != nil {
		t.Fatal(err)
	}
	blobs := 0
	for _, name := range repos {
		repo, err := reg.Repository(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		var tags []string
		if err := repo.Tags(ctx, "", func(ts []string) error { tags = append(tags, ts...); return nil }); err != nil {
			t.Fatal(err)
		}
		var walk func(d ocispec.Descriptor)
		walk = func(d ocispec.Descriptor) {
			b, err := content.FetchAll(ctx, repo, d) // checks size and digest
			if err != nil {
				t.Fatalf("%s %s: %v", name, d.Digest, err)
			}
			var m struct {
				Config    *ocispec.Descriptor  `json:"config"`
				Layers    []ocispec.Descriptor `json:"layers"`
				Manifests []ocispec.Descriptor `json:"manifests"`
			}
			if err := jsonUnmarshal(b, &m); err != nil {
				t.Fatalf("%s %s: %v", name, d.Digest, err)
			}
			for _, sub := range m.Manifests {
				walk(sub)
			}
			for _, l := range append(m.Layers, derefDesc(m.Config)...) {
				rc, err := repo.Blobs().Fetch(ctx, l)
				if err != nil {
					t.Fatalf("%s blob %s: %v", name, l.Digest, err)
				}
				data, err := io.ReadAll(rc)
				rc.Close()
				if err != nil || digest.FromBytes(data) != l.Digest || int64(len(data)) != l.Size {
					t.Fatalf("%s blob %s does not verify (%v)", name, l.Digest, err)
				}
				blobs++
			}
		}
		for _, tag := range tags {
			d, err := repo.Resolve(ctx, tag)
			if err != nil {
				t.Fatal(err)
			}
			walk(d)
		}
	}
	return blobs
}

func derefDesc(d *ocispec.Descriptor) []ocispec.Descriptor {
	if d == nil {
		return nil
	}
	return []ocispec.Descriptor{*d}
}

// TestRemoteCacheStoppedMidRun: the remote tier going away in the middle
// of a run costs one warning; the run succeeds from the origins.
func TestRemoteCacheStoppedMidRun(t *testing.T) {
	if err := installtest.HaveGit(); err != nil {
		t.Skip(err)
	}
	tier := newTierServer(t)
	tmp := t.TempDir()
	out, code := runLock(t, "-work", filepath.Join(tmp, "w1"), "-cache-dir", filepath.Join(tmp, "c1"), "-remote-cache", tier.location())
	if code != 0 {
		t.Fatalf("first runner: exit %d\n%s", code, out)
	}
	copyConfig(t, filepath.Join(tmp, "w1"), filepath.Join(tmp, "w2"))
	tier.dieAfter.Store(tier.requests.Load() + 4) // a few answers, then gone
	out, code = runLock(t, "-work", filepath.Join(tmp, "w2"), "-cache-dir", filepath.Join(tmp, "c2"), "-remote-cache", tier.location())
	if code != 0 {
		t.Fatalf("second runner with the tier dying: exit %d\n%s", code, out)
	}
	if n := strings.Count(out, "Warning: remote cache tier"); n != 1 {
		t.Errorf("%d warnings about the tier, want 1\n%s", n, out)
	}
	if fmt.Sprint(installedTree(t, filepath.Join(tmp, "w1"))) != fmt.Sprint(installedTree(t, filepath.Join(tmp, "w2"))) {
		t.Error("the installed trees differ")
	}
}

// TestRemoteCacheFlag: the location is checked before anything runs.
func TestRemoteCacheFlag(t *testing.T) {
	for _, bad := range []string{"https://registry.example.test/x", "oci://registry.example.test", "oci://registry.example.test/UPPER"} {
		out, code := runLock(t, "-remote-cache", bad, "-cache-dir", t.TempDir(), t.TempDir())
		if code == 0 || !strings.Contains(out, "-remote-cache: ") {
			t.Errorf("-remote-cache %s: exit %d\n%s", bad, code, out)
		}
	}
	out, code := runLock(t, "-remote-cache", "oci://registry.example.test/x", "-cache-dir", "", t.TempDir())
	if code == 0 || !strings.Contains(out, "needs a local cache") {
		t.Errorf("without a local cache: exit %d\n%s", code, out)
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// TestRemoteCacheFirstInstall: a runner with the configuration but no lock
// file (a first install) still gets the providers from the tier: the
// checksums their registry signs are asked first, and the tier's copies
// are verified against them, so no provider package is downloaded from
// its origin. Modules, which no origin signs, come from their origins.
func TestRemoteCacheFirstInstall(t *testing.T) {
	if err := installtest.HaveGit(); err != nil {
		t.Skip(err)
	}
	tier := newTierServer(t)
	tmp := t.TempDir()
	work1, work2 := filepath.Join(tmp, "w1"), filepath.Join(tmp, "w2")
	// The first runner's first install: the sample without its lock file.
	if out, code := runLock(t, "-work", work1, "-cache-dir", filepath.Join(tmp, "c1")); code != 0 {
		t.Fatalf("setting up the work copy: exit %d\n%s", code, out)
	}
	if err := os.Remove(filepath.Join(work1, ".terraform.lock.hcl")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(work1, ".terraform")); err != nil {
		t.Fatal(err)
	}
	copyConfig(t, work1, work2)
	out, code := runLock(t, "-work", work1, "-cache-dir", filepath.Join(tmp, "c1-fresh"), "-remote-cache", tier.location())
	if code != 0 {
		t.Fatalf("first runner: exit %d\n%s", code, out)
	}
	out, code = runLock(t, "-work", work2, "-cache-dir", filepath.Join(tmp, "c2"), "-remote-cache", tier.location())
	if code != 0 {
		t.Fatalf("second runner: exit %d\n%s", code, out)
	}
	// Three module packages (git, OCI, registry) from their origins, no
	// provider package.
	if _, dl := counts(t, out); dl != "3" {
		t.Errorf("%s packages downloaded from origins, want the 3 modules only:\n%s", dl, out)
	}
	for _, p := range []string{"registry.example.test/acme/cloud", "registry.example.test/acme/dns"} {
		if !strings.Contains(out, "- Using "+p) || !strings.Contains(out, "- Verified "+p) || !strings.Contains(out, "checksum signed by key") {
			t.Errorf("%s not served by the tier and verified against its registry's signed checksums:\n%s", p, out)
		}
	}
	lock1, _ := os.ReadFile(filepath.Join(work1, ".terraform.lock.hcl"))
	lock2, _ := os.ReadFile(filepath.Join(work2, ".terraform.lock.hcl"))
	if string(lock1) != string(lock2) {
		t.Errorf("the first install's lock differs from the first runner's:\n%s\n---\n%s", lock1, lock2)
	}
	if a, b := installedTree(t, work1), installedTree(t, work2); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("installed trees differ:\n%v\n%v", a, b)
	}
}
