package mirror_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/dirhash"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/address"
	"github.com/tflock/tflock/source/mirror"
	"github.com/tflock/tflock/source/sourcetest"
)

// makeZip builds a provider zip deterministically and returns it with its
// h1: (dirhash.HashZip of the written file) and zh: (hex SHA-256).
func makeZip(t testing.TB, files map[string]string) ([]byte, string, string) {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range sortedKeys(files) {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(files[name])); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "p.zip")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	h1, err := dirhash.HashZip(p, dirhash.Hash1)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(buf.Bytes())
	return buf.Bytes(), h1, "zh:" + hex.EncodeToString(sum[:])
}

func sortedKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// mirrorServer serves a network mirror for registry.opentofu.org/hashicorp/null
// with versions 2.0.0 (linux_amd64, darwin_amd64) and 2.1.0 (linux_amd64).
type mirrorServer struct {
	*httptest.Server
	zips   map[string][]byte // by file name
	h1, zh map[string]string // by file name
	lie    bool              // list wrong hashes
	trunc  bool              // truncate archive bodies
	token  string            // required bearer token, if set
	flaky  int               // answer this many requests with 503 first
	// trickle sends archive bodies in 10 parts, this long apart.
	trickle time.Duration
	// stall sends half of each archive body, then nothing.
	stall bool
	mu    sync.Mutex
	paths []string
}

func newMirrorServer(t testing.TB) *mirrorServer {
	s := &mirrorServer{zips: map[string][]byte{}, h1: map[string]string{}, zh: map[string]string{}}
	for _, v := range []struct{ version, plat string }{{"2.0.0", "linux_amd64"}, {"2.0.0", "darwin_amd64"}, {"2.1.0", "linux_amd64"}} {
		name := fmt.Sprintf("terraform-provider-null_%s_%s.zip", v.version, v.plat)
		z, h1, zh := makeZip(t, map[string]string{"terraform-provider-null_v" + v.version + "_x5": "null " + v.version + " " + v.plat})
		s.zips[name], s.h1[name], s.zh[name] = z, h1, zh
	}
	mux := http.NewServeMux()
	const prefix = "/mirror/registry.opentofu.org/hashicorp/null/"
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.paths = append(s.paths, r.URL.Path)
		flaky := s.flaky > 0
		if flaky {
			s.flaky--
		}
		s.mu.Unlock()
		if flaky {
			w.Header().Set("Retry-After", "0")
			http.Error(w, "try again", http.StatusServiceUnavailable)
			return
		}
		if s.token != "" && r.Header.Get("Authorization") != "Bearer "+s.token {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		switch p := r.URL.Path; {
		case p == prefix+"index.json":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"versions":{"2.0.0":{},"2.1.0":{},"not-a-version":{}}}`)
		case strings.HasPrefix(p, prefix) && strings.HasSuffix(p, ".json"):
			v := strings.TrimSuffix(strings.TrimPrefix(p, prefix), ".json")
			archives := map[string]any{}
			for name := range s.zips {
				if !strings.Contains(name, "_"+v+"_") {
					continue
				}
				plat := strings.TrimSuffix(name[strings.Index(name, v)+len(v)+1:], ".zip")
				hashes := []string{s.h1[name], s.zh[name]}
				if s.lie {
					hashes = []string{"h1:" + strings.Repeat("A", 43) + "="}
				}
				url := name
				if plat == "darwin_amd64" {
					url = "/files/" + name // absolute path form
				}
				archives[plat] = map[string]any{"url": url, "hashes": hashes}
			}
			if len(archives) == 0 {
				http.NotFound(w, r)
				return
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"archives": archives})
		case strings.HasPrefix(p, prefix) || strings.HasPrefix(p, "/files/"):
			name := p[strings.LastIndex(p, "/")+1:]
			z, ok := s.zips[name]
			if !ok {
				http.NotFound(w, r)
				return
			}
			if s.trunc {
				w.Header().Set("Content-Length", fmt.Sprint(len(z)))
				_, _ = w.Write(z[:len(z)/2])
				return
			}
			if s.stall {
				w.Header().Set("Content-Length", fmt.Sprint(len(z)))
				_, _ = w.Write(z[:len(z)/2])
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
				case <-time.After(10 * time.Second):
				}
				return
			}
			if s.trickle > 0 {
				w.Header().Set("Content-Length", fmt.Sprint(len(z)))
				part := (len(z) + 9) / 10
				for len(z) > 0 {
					k := min(part, len(z))
					_, _ = w.Write(z[:k])
					w.(http.Flusher).Flush()
					z = z[k:]
					time.Sleep(s.trickle)
				}
				return
			}
			_, _ = w.Write(z)
		default:
			http.NotFound(w, r)
		}
	})
	s.Server = httptest.NewTLSServer(mux)
	t.Cleanup(s.Close)
	return s
}

func newNetwork(t *testing.T, s *mirrorServer, trust bool) *mirror.Network {
	t.Helper()
	n, err := mirror.NewNetwork(mirror.NetworkOptions{URL: s.URL + "/mirror", Client: s.Client(), TrustAllHashes: trust})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestNetworkConformance(t *testing.T) {
	s := newMirrorServer(t)
	n := newNetwork(t, s, false)
	l := ppkg("registry.opentofu.org/hashicorp/null", "2.0.0", "linux_amd64")
	d := ppkg("registry.opentofu.org/hashicorp/null", "2.0.0", "darwin_amd64")
	sourcetest.Run(t, n, sourcetest.Cases{
		Known: []source.Package{l, d, ppkg("registry.opentofu.org/hashicorp/null", "2.1.0", "linux_amd64")},
		WantH1: map[string]hash.Hash{
			l.String(): hash.Hash(s.h1["terraform-provider-null_2.0.0_linux_amd64.zip"]),
			d.String(): hash.Hash(s.h1["terraform-provider-null_2.0.0_darwin_amd64.zip"]),
		},
		MissingVersion:  ppkg("registry.opentofu.org/hashicorp/null", "9.9.9", "linux_amd64"),
		MissingPlatform: ppkg("registry.opentofu.org/hashicorp/null", "2.1.0", "darwin_amd64"),
	})
}

func TestNetworkFetchHashes(t *testing.T) {
	s := newMirrorServer(t)
	pkg := ppkg("registry.opentofu.org/hashicorp/null", "2.0.0", "linux_amd64")
	name := "terraform-provider-null_2.0.0_linux_amd64.zip"

	got, err := newNetwork(t, s, false).Fetch(context.Background(), pkg, filepath.Join(t.TempDir(), "a"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Hashes) != 2 || string(got.Hashes[0]) != s.h1[name] || string(got.Hashes[1]) != s.zh[name] {
		t.Errorf("hashes = %v, want [%s %s]", got.Hashes, s.h1[name], s.zh[name])
	}
	if len(got.Origin) != 0 {
		t.Errorf("origin hashes reported without trust_all_hashes: %v", got.Origin)
	}
	if got.Size != int64(len(s.zips[name])) || !strings.HasSuffix(got.Location, "/mirror/registry.opentofu.org/hashicorp/null/"+name) {
		t.Errorf("size %d location %q", got.Size, got.Location)
	}

	trusted := newNetwork(t, s, true)
	got, err = trusted.Fetch(context.Background(), pkg, filepath.Join(t.TempDir(), "b"))
	if err != nil {
		t.Fatal(err)
	}
	// Both platforms of 2.0.0, h1 and zh each, vouched for by the mirror.
	if len(got.Origin) != 4 {
		t.Fatalf("origin = %+v, want 4 records", got.Origin)
	}
	for _, r := range got.Origin {
		if r.Provenance.Mirrors[0] != trusted.String() || len(r.Provenance.Platforms) != 1 ||
			len(r.Provenance.TrustedMirrors) != 1 || r.Provenance.TrustedMirrors[0] != trusted.String() {
			t.Errorf("record %+v", r)
		}
	}
	recs, err := trusted.Checksums(context.Background(), pkg)
	if err != nil || len(recs) != 4 {
		t.Errorf("Checksums = %v, %v", recs, err)
	}
	recs, err = newNetwork(t, s, false).Checksums(context.Background(), pkg)
	if err != nil || len(recs) != 0 {
		t.Errorf("untrusted Checksums = %v, %v; want none", recs, err)
	}
}

func TestNetworkLyingMirror(t *testing.T) {
	s := newMirrorServer(t)
	s.lie = true
	dir := filepath.Join(t.TempDir(), "out")
	_, err := newNetwork(t, s, false).Fetch(context.Background(), ppkg("registry.opentofu.org/hashicorp/null", "2.0.0", "linux_amd64"), dir)
	if !errors.Is(err, source.ErrChecksumMismatch) {
		t.Fatalf("got %v, want ErrChecksumMismatch", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a rejected package was kept in %s", dir)
	}
}

func TestNetworkTruncatedBody(t *testing.T) {
	s := newMirrorServer(t)
	s.trunc = true
	dir := filepath.Join(t.TempDir(), "out")
	_, err := newNetwork(t, s, false).Fetch(context.Background(), ppkg("registry.opentofu.org/hashicorp/null", "2.0.0", "linux_amd64"), dir)
	if err == nil {
		t.Fatal("a truncated download was accepted")
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a truncated package was kept in %s", dir)
	}
}

func TestNetworkCredentials(t *testing.T) {
	s := newMirrorServer(t)
	s.token = "s3cret-token"
	pkg := source.ProviderPackage{Addr: ppkg("registry.opentofu.org/hashicorp/null", "2.0.0", "linux_amd64").Addr}
	_, err := newNetwork(t, s, false).Versions(context.Background(), pkg)
	if !errors.Is(err, source.ErrUnauthorized) {
		t.Fatalf("without a token: got %v, want ErrUnauthorized", err)
	}
	n, err := mirror.NewNetwork(mirror.NetworkOptions{URL: s.URL + "/mirror/", Client: s.Client(), Token: func(host string) string {
		if host == "127.0.0.1" {
			return s.token
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Versions(context.Background(), pkg); err != nil {
		t.Fatalf("with the token: %v", err)
	}
	_, err = n.Fetch(context.Background(), ppkg("registry.opentofu.org/hashicorp/null", "2.0.0", "linux_amd64"), filepath.Join(t.TempDir(), "x"))
	if err != nil {
		t.Fatal(err)
	}
}

func TestNetworkNeedsHTTPS(t *testing.T) {
	for _, u := range []string{"http://mirror.example.com/", "mirror.example.com", "https://user:pw@mirror.example.com/", "://"} {
		if _, err := mirror.NewNetwork(mirror.NetworkOptions{URL: u}); err == nil {
			t.Errorf("%q accepted", u)
		} else if strings.Contains(err.Error(), "pw") {
			t.Errorf("error shows the password: %v", err)
		}
	}
}

func TestNetworkUnknownProvider(t *testing.T) {
	s := newMirrorServer(t)
	n := newNetwork(t, s, false)
	_, err := n.Fetch(context.Background(), ppkg("registry.opentofu.org/hashicorp/aws", "2.0.0", "linux_amd64"), filepath.Join(t.TempDir(), "x"))
	if !errors.Is(err, source.ErrNotFound) {
		t.Errorf("got %v, want ErrNotFound", err)
	}
}

func TestNetworkSlowServerDeadline(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
		// A stalled server never completes a response. Returning would
		// send an empty 200, and the standard transport still hands over
		// a response that races the cancelling of its request (by
		// design; see net/http's persistConn.roundTrip): on a loaded
		// machine the client got that 200 instead of its deadline
		// (CI, and 1 in ~800 runs under -race with 4 in parallel).
		panic(http.ErrAbortHandler)
	}))
	defer srv.Close()
	defer close(release)
	n, err := mirror.NewNetwork(mirror.NetworkOptions{URL: srv.URL, Client: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = n.Versions(ctx, source.ProviderPackage{Addr: ppkg("registry.opentofu.org/hashicorp/null", "1.0.0", "linux_amd64").Addr})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got %v, want the context's deadline", err)
	}
}

func TestNetworkRetries(t *testing.T) {
	pkg := ppkg("registry.opentofu.org/hashicorp/null", "2.0.0", "linux_amd64")

	// Two 503s are absorbed by the default two retries (OpenTofu's default
	// download_retry_count).
	s := newMirrorServer(t)
	s.flaky = 2
	got, err := newNetwork(t, s, false).Fetch(context.Background(), pkg, filepath.Join(t.TempDir(), "a"))
	if err != nil {
		t.Fatalf("Fetch with two 503s and the default retries: %v", err)
	}
	if want := hash.Hash(s.h1["terraform-provider-null_2.0.0_linux_amd64.zip"]); got.Hashes[0] != want {
		t.Errorf("h1 = %s, want %s", got.Hashes[0], want)
	}
	if n := len(s.paths); n != 4 { // 503, 503, VERSION.json, archive
		t.Errorf("%d requests (%v), want 4", n, s.paths)
	}

	// Without retries the first 503 is the answer, named with its URL.
	s = newMirrorServer(t)
	s.flaky = 1
	n, err := mirror.NewNetwork(mirror.NetworkOptions{URL: s.URL + "/mirror", Client: s.Client(), Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "b")
	_, err = n.Fetch(context.Background(), pkg, dir)
	if err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "/2.0.0.json") {
		t.Errorf("Fetch with Retries -1 and a 503: got %v, want an error naming the 503 and the URL", err)
	}
	var se *source.Error
	if !errors.As(err, &se) || se.Package == nil {
		t.Errorf("error %v is not a *source.Error naming the package", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed fetch left %s", dir)
	}
	if len(s.paths) != 1 {
		t.Errorf("%d requests (%v), want 1", len(s.paths), s.paths)
	}
}

// archiveRequests counts the requests for archives.
func (s *mirrorServer) archiveRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, p := range s.paths {
		if strings.HasSuffix(p, ".zip") {
			n++
		}
	}
	return n
}

// TestNetworkSlowDownload is the network-mirror download that
// takes 75 s, scaled down: a package whose body keeps coming for longer
// than the metadata timeout installs (the mirror used to cut every request
// at 60 s), and one that stalls fails after the idle timeout, once.
func TestNetworkSlowDownload(t *testing.T) {
	// The provider the test mirror serves, on the default host.
	pkg := ppkg(address.DefaultRegistryHost+"/hashicorp/null", "2.0.0", "linux_amd64")
	opts := func(s *mirrorServer) mirror.NetworkOptions {
		return mirror.NetworkOptions{URL: s.URL + "/mirror", Client: s.Client(),
			RequestTimeout: time.Second, IdleTimeout: 5 * time.Second, MinBackoff: time.Millisecond}
	}

	s := newMirrorServer(t)
	s.trickle = 150 * time.Millisecond // 10 parts: 1.5 s, longer than the metadata timeout
	n, err := mirror.NewNetwork(opts(s))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	got, err := n.Fetch(context.Background(), pkg, filepath.Join(t.TempDir(), "a"))
	if err != nil {
		t.Fatalf("a download slower than the metadata timeout but never idle: %v", err)
	}
	if d := time.Since(start); d < time.Second {
		t.Errorf("the download took %v, less than the metadata timeout: the test proves nothing", d)
	}
	if want := hash.Hash(s.h1["terraform-provider-null_2.0.0_linux_amd64.zip"]); got.Hashes[0] != want {
		t.Errorf("h1 = %s, want %s", got.Hashes[0], want)
	}

	s = newMirrorServer(t)
	s.stall = true
	o := opts(s)
	o.IdleTimeout = 200 * time.Millisecond
	n, err = mirror.NewNetwork(o)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "b")
	_, err = n.Fetch(context.Background(), pkg, dir)
	if err == nil || !strings.Contains(err.Error(), "no data for 200ms") || !strings.Contains(err.Error(), ".zip") {
		t.Errorf("a stalled download: got %v, want an error naming the archive URL and the idle timeout", err)
	}
	if k := s.archiveRequests(); k != 1 {
		t.Errorf("the stalled archive was asked %d times, want 1 (an idle timeout is not retried)", k)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed fetch left %s", dir)
	}
}
