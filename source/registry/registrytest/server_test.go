package registrytest_test

import (
	"crypto/sha256"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source/registry"
	"github.com/tflock/tflock/source/registry/registrytest"
)

func get(t *testing.T, c *http.Client, url string) (int, []byte) {
	t.Helper()
	resp, err := c.Get(url)
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

func TestServedFilesMatchTheirHashes(t *testing.T) {
	srv := registrytest.New(t, registrytest.Fixtures{Providers: []registrytest.Provider{
		{Addr: "ns/tool", Versions: []registrytest.ProviderVersion{{Version: "1.0.0", Platforms: []string{"linux_arm64"}, Size: 5000}}},
	}}, registrytest.Options{})
	c := srv.Client()
	info, ok := srv.ProviderPackage("registry.example.test/ns/tool", "1.0.0", "linux_arm64")
	if !ok {
		t.Fatal("package not described")
	}
	base := "https://registry.example.test/files/providers/registry.example.test/ns/tool/1.0.0/"
	code, zip := get(t, c, base+info.Filename)
	if code != 200 || hash.NewHash(hash.SchemeZH, sha256.Sum256(zip)) != info.ZH || int64(len(zip)) != info.Size {
		t.Errorf("zip: status %d, %d bytes; does not match %+v", code, len(zip), info)
	}
	_, sums := get(t, c, base+"terraform-provider-tool_1.0.0_SHA256SUMS")
	if want := info.ZH.Value() + "  " + info.Filename + "\n"; string(sums) != want {
		t.Errorf("SHA256SUMS = %q, want %q", sums, want)
	}
	_, sig := get(t, c, base+"terraform-provider-tool_1.0.0_SHA256SUMS.sig")
	id, _, err := registry.VerifySignature(sums, sig, []string{srv.PublicKey})
	if err != nil || id != srv.KeyID {
		t.Errorf("signature: key %s, %v; want %s", id, err, srv.KeyID)
	}
	srv.SetFault(registrytest.BadSignature)
	_, sig = get(t, c, base+"terraform-provider-tool_1.0.0_SHA256SUMS.sig")
	if _, _, err := registry.VerifySignature(sums, sig, []string{srv.PublicKey}); err == nil {
		t.Error("BadSignature: the signature still verifies")
	}
	if code, _ := get(t, c, "https://unknown.example.test/.well-known/terraform.json"); code != 404 {
		t.Errorf("unknown host: status %d, want 404", code)
	}
	if srv.Requests() != 5 {
		t.Errorf("Requests() = %d, want 5", srv.Requests())
	}
}

func TestWithLatency(t *testing.T) {
	h := registrytest.WithLatency(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }), 20*time.Millisecond)
	ts := httptest.NewServer(h)
	defer ts.Close()
	start := time.Now()
	code, body := get(t, ts.Client(), ts.URL)
	if d := time.Since(start); d < 20*time.Millisecond || code != 200 || string(body) != "ok" {
		t.Errorf("took %v, status %d, body %q", d, code, body)
	}
}

func ExampleStart() {
	srv, err := registrytest.Start(registrytest.Fixtures{}, registrytest.Options{Hosts: []string{"registry.opentofu.org"}})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	resp, err := srv.Client().Get("https://registry.opentofu.org/.well-known/terraform.json")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Println(strings.Contains(string(b), `"providers.v1":"/v1/providers/"`))
	// Output: true
}

// TestProtocols checks that the server speaks HTTP/2 by default, as public
// registries do, so that concurrent requests share one connection, and
// HTTP/1.1 only when asked to.
func TestProtocols(t *testing.T) {
	for _, tc := range []struct {
		http1 bool
		want  int
	}{{false, 2}, {true, 1}} {
		srv := registrytest.New(t, registrytest.Fixtures{}, registrytest.Options{HTTP1: tc.http1})
		resp, err := srv.Client().Get("https://" + srv.Host + "/.well-known/terraform.json")
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.ProtoMajor != tc.want {
			t.Errorf("HTTP1 %v: the response came over %s, want HTTP/%d", tc.http1, resp.Proto, tc.want)
		}
	}
}
