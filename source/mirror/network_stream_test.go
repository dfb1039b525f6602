package mirror_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/internal/httpx"
	"github.com/tflock/tflock/source/mirror"
)

// bigMirror is a network mirror serving one provider package of about
// 300 KB, large enough to be handed over while it downloads once
// httpx.StreamMin is lowered. The zip is served as a download host serves
// files (http.ServeContent: ranges); its listed hashes, the bytes served and
// the ranges can be made to lie.
type bigMirror struct {
	*httptest.Server
	zip        []byte
	h1, zh     string
	listed     atomic.Value // []string: the hashes index JSON lists
	tamper     atomic.Bool  // serve other bytes than the listed zh:'s
	rangeLie   atomic.Bool  // ranged requests get a changed last byte
	noRanges   atomic.Bool  // Range headers are ignored
	zipGets    atomic.Int64 // requests for the zip
	rangedGets atomic.Int64 // of which ranged
}

func newBigMirror(t *testing.T) *bigMirror {
	t.Helper()
	old := httpx.StreamMin
	httpx.StreamMin = 64 << 10
	t.Cleanup(func() { httpx.StreamMin = old })
	r := rand.New(rand.NewPCG(5, 6))
	body := make([]byte, 300<<10)
	for i := range body {
		body[i] = byte(r.Uint32())
	}
	m := &bigMirror{}
	m.zip, m.h1, m.zh = makeZip(t, map[string]string{"terraform-provider-big_v3.0.0_x5": string(body), "LICENSE": "MIT\n"})
	m.listed.Store([]string{m.h1, m.zh})
	const prefix = "/mirror/registry.opentofu.org/hashicorp/big/"
	m.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; {
		case p == prefix+"index.json":
			w.Write([]byte(`{"versions":{"3.0.0":{}}}`))
		case p == prefix+"3.0.0.json":
			json.NewEncoder(w).Encode(map[string]any{"archives": map[string]any{
				"linux_amd64": map[string]any{"url": "big.zip", "hashes": m.listed.Load()},
			}})
		case p == prefix+"big.zip":
			m.zipGets.Add(1)
			data := m.zip
			if m.tamper.Load() {
				data = bytes.Clone(data)
				data[100] ^= 1
			}
			if m.noRanges.Load() {
				r.Header.Del("Range")
			}
			if r.Header.Get("Range") != "" {
				m.rangedGets.Add(1)
				if m.rangeLie.Load() {
					data = bytes.Clone(data)
					data[len(data)-1] ^= 1
				}
			}
			http.ServeContent(w, r, "big.zip", time.Time{}, bytes.NewReader(data))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(m.Close)
	return m
}

func (m *bigMirror) network(t *testing.T) *mirror.Network {
	t.Helper()
	n, err := mirror.NewNetwork(mirror.NetworkOptions{URL: m.URL + "/mirror", Client: m.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

var bigPkg = ppkg("registry.opentofu.org/hashicorp/big", "3.0.0", "linux_amd64")

func fillFromMirror(n *mirror.Network) cache.FetchFunc {
	return func(ctx context.Context, dir string) (*source.Fetched, error) {
		return n.FetchArchive(ctx, bigPkg, dir)
	}
}

// A large package from a network mirror is handed over while it downloads,
// with the hashes the mirror lists for the cache to check: the cache stores
// the package's tree, asking the mirror for the zip and its end.
func TestNetworkStreamed(t *testing.T) {
	m := newBigMirror(t)
	n := m.network(t)
	f, err := n.FetchArchive(context.Background(), bigPkg, filepath.Join(t.TempDir(), "p"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Pending == nil || f.Pending.Size() != int64(len(m.zip)) {
		t.Fatalf("Fetched.Pending = %v; want the archive while it downloads", f.Pending)
	}
	if err := f.Pending.Wait(); err != nil {
		t.Fatal(err)
	}
	if len(f.Hashes) != 2 {
		t.Errorf("stated hashes %v, want the listed h1: and zh:", f.Hashes)
	}
	c, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	before, ranged := m.zipGets.Load(), m.rangedGets.Load()
	e, _, err := c.Fill(context.Background(), bigPkg, nil, fillFromMirror(n))
	if err != nil || string(e.H1) != m.h1 {
		t.Fatalf("Fill = %s, %v; want %s", e.H1, err, m.h1)
	}
	if got, err := hash.H1Dir(e.Dir); err != nil || string(got) != m.h1 {
		t.Errorf("the stored tree hashes to %s, %v", got, err)
	}
	if g, r := m.zipGets.Load()-before, m.rangedGets.Load()-ranged; g != 2 || r != 1 {
		t.Errorf("%d requests for the zip, %d ranged; want 2, 1", g, r)
	}
}

// What the mirror lists is checked by the cache on what it read: a lying
// listing or lying bytes fail the fill, which stores and leaves nothing;
// the same cache fills once the mirror is honest. Without ranges the
// package is handed over once downloaded, and checked the same way.
func TestNetworkHandOverChecksListedHashes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		apply func(m *bigMirror)
	}{
		{"wrong h1", func(m *bigMirror) { m.listed.Store([]string{"h1:" + strings.Repeat("A", 43) + "=", m.zh}) }},
		{"wrong zh", func(m *bigMirror) { m.listed.Store([]string{m.h1, "zh:" + strings.Repeat("0", 64)}) }},
		{"tampered", func(m *bigMirror) { m.tamper.Store(true) }},
		{"lying range", func(m *bigMirror) { m.rangeLie.Store(true) }},
		{"tampered, no ranges", func(m *bigMirror) { m.tamper.Store(true); m.noRanges.Store(true) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newBigMirror(t)
			n := m.network(t)
			tc.apply(m)
			c, err := cache.Open(t.TempDir(), cache.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := c.Fill(context.Background(), bigPkg, nil, fillFromMirror(n)); !errors.Is(err, source.ErrChecksumMismatch) {
				t.Fatalf("Fill = %v, want ErrChecksumMismatch", err)
			}
			for _, sub := range []string{"objects", "tmp"} {
				if ents, _ := os.ReadDir(filepath.Join(c.Dir(), sub)); len(ents) != 0 {
					t.Errorf("%s holds %d items after the failed fill", sub, len(ents))
				}
			}
			m.listed.Store([]string{m.h1, m.zh})
			m.tamper.Store(false)
			m.rangeLie.Store(false)
			n = m.network(t) // a Network keeps the listing it read
			if e, _, err := c.Fill(context.Background(), bigPkg, nil, fillFromMirror(n)); err != nil || string(e.H1) != m.h1 {
				t.Errorf("Fill once honest = %s, %v", e.H1, err)
			}
		})
	}
}

// A mirror listing two hashes of a kind is matched by either (as tofu
// matches it), which the cache's check cannot express: the source extracts
// and checks such a package itself, as before.
func TestNetworkSeveralListedHashesExtracted(t *testing.T) {
	m := newBigMirror(t)
	m.listed.Store([]string{"h1:" + strings.Repeat("A", 43) + "=", m.h1})
	f, err := m.network(t).FetchArchive(context.Background(), bigPkg, filepath.Join(t.TempDir(), "p"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Archive != "" || f.Dir == "" {
		t.Errorf("Fetched Archive %q, Dir %q; want the package extracted", f.Archive, f.Dir)
	}
}
