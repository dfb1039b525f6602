package ocitier_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	tfaddr "github.com/hashicorp/terraform-registry-address"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache/ocitier"
	"github.com/tflock/tflock/source/internal/archive"
	"github.com/tflock/tflock/source/oci"
	"github.com/tflock/tflock/source/oci/ocitest"
)

// reg is an in-process OCI registry (go-containerregistry's, the one the
// other OCI tests use) behind a handler that counts requests and can be
// made to fail.
type reg struct {
	srv    *httptest.Server
	writes atomic.Int64 // PUT, POST, PATCH requests
	reads  atomic.Int64 // GET and HEAD requests

	mu   sync.Mutex
	fail func(*http.Request) int // a status to answer instead, or 0
}

func newReg(t *testing.T) *reg {
	t.Helper()
	r := &reg{}
	inner := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch req.Method {
		case http.MethodGet, http.MethodHead:
			r.reads.Add(1)
		default:
			r.writes.Add(1)
		}
		r.mu.Lock()
		fail := r.fail
		r.mu.Unlock()
		if fail != nil {
			if code := fail(req); code != 0 {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(code)
				io.WriteString(w, `{"errors":[{"code":"UNKNOWN","message":"injected failure"}]}`)
				return
			}
		}
		inner.ServeHTTP(w, req)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *reg) host() string { return strings.TrimPrefix(r.srv.URL, "http://") }

func (r *reg) setFail(f func(*http.Request) int) {
	r.mu.Lock()
	r.fail = f
	r.mu.Unlock()
}

// ociOptions reach the registry over plain HTTP.
func (r *reg) ociOptions() oci.Options { return oci.Options{PlainHTTP: true} }

// tier opens the tier at PREFIX on the registry: a machine of the fleet.
func (r *reg) tier(t *testing.T, prefix string) *ocitier.Tier {
	t.Helper()
	tr, err := ocitier.New("oci://"+r.host()+"/"+prefix, ocitier.Options{OCI: r.ociOptions()})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// repo is a raw oras client for reading what the tier wrote.
func (r *reg) repo(t *testing.T, name string) *remote.Repository {
	t.Helper()
	rp, err := remote.NewRepository(r.host() + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	rp.PlainHTTP = true
	return rp
}

var (
	linux  = source.Platform{OS: "linux", Arch: "amd64"}
	darwin = source.Platform{OS: "darwin", Arch: "arm64"}
	win    = source.Platform{OS: "windows", Arch: "amd64"}
	arm    = source.Platform{OS: "linux", Arch: "arm64"}
)

func provider(t *testing.T, addr, version string, plat source.Platform) source.ProviderPackage {
	t.Helper()
	if strings.Count(addr, "/") == 1 {
		addr = "registry.example.test/" + addr
	}
	return source.ProviderPackage{Addr: tfaddr.MustParseProviderSource(addr), Version: versions.MustParse(version), Platform: plat}
}

// providerZip writes a provider zip for pkg (its content names the
// package) and returns its path and verified hashes (h1:, zh:).
func providerZip(t *testing.T, pkg source.ProviderPackage) (string, []hash.Hash) {
	t.Helper()
	name := "terraform-provider-" + pkg.Addr.Type + "_v" + pkg.Version.String()
	z, err := ocitest.Zip(map[string]string{name: "#!/bin/sh\n# " + pkg.String() + "\n"})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "p.zip")
	if err := os.WriteFile(p, z, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := hash.HashZip(p)
	if err != nil {
		t.Fatal(err)
	}
	return p, s.Hashes()
}

// fetchJSON reads the manifest or index desc describes, checking its
// digest, into v, and returns its raw bytes.
func fetchJSON(t *testing.T, repo *remote.Repository, desc ocispec.Descriptor, v any) []byte {
	t.Helper()
	b, err := content.FetchAll(context.Background(), repo, desc)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
	return b
}

// verifyBlob downloads a blob and checks it against its digest.
func verifyBlob(t *testing.T, repo *remote.Repository, d ocispec.Descriptor) []byte {
	t.Helper()
	rc, err := repo.Blobs().Fetch(context.Background(), d)
	if err != nil {
		t.Fatalf("fetching blob %s: %v", d.Digest, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	if got := digest.FromBytes(b); got != d.Digest || int64(len(b)) != d.Size {
		t.Fatalf("blob %s: got digest %s and %d bytes, want %d bytes", d.Digest, got, len(b), d.Size)
	}
	return b
}

func sameFile(t *testing.T, a, b string) bool {
	t.Helper()
	x, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(x, y)
}

type tfaddrProvider = tfaddr.Provider

func sha256Bytes(b []byte) [32]byte { return sha256.Sum256(b) }

func mustVersion(t *testing.T, s string) versions.Version {
	t.Helper()
	v, err := versions.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func decodeB64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// moduleTree writes files (name → content; names under bin/ or ending in
// .sh are executable) into a new directory.
func moduleTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(name, "bin/") || strings.HasSuffix(name, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// moduleZip zips a module tree as the cache does for the tier, and
// returns the zip and the tree's h1: (module rule).
func moduleZip(t *testing.T, dir string) (string, hash.Hash) {
	t.Helper()
	h1, err := hash.Options{Module: true}.H1Dir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "m.zip")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := archive.WriteZip(context.Background(), dir, f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p, h1
}
