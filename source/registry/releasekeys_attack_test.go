package registry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp/packet"

	"github.com/tflock/tflock/source/registry"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// TestAttackReleaseVerifiedWithEachPlatformsKeys: two platforms' download
// responses name the same SHA256SUMS and signature but list different
// signing keys. Each platform's checksums are accepted only when the
// signature verifies with the keys its own response lists, as tofu
// verifies each download with its own response's keys. Before, the
// verified document was remembered by its URLs alone: the second
// platform was accepted as signed by a key its response did not list.
func TestAttackReleaseVerifiedWithEachPlatformsKeys(t *testing.T) {
	const addr = "registry.example.test/acme/tool"
	fx := registrytest.Fixtures{Providers: []registrytest.Provider{
		{Addr: addr, Versions: []registrytest.ProviderVersion{{Version: "1.0.0", Platforms: []string{"linux_amd64", "darwin_arm64"}}}},
	}}
	srv := registrytest.New(t, fx, registrytest.Options{})
	_, otherPub := newKey(t, &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA})

	// A front end that lists another key in darwin_arm64's response.
	target, _ := url.Parse("https://registry.example.test")
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = srv.Client().Transport
	rp.ModifyResponse = func(resp *http.Response) error {
		if !strings.HasSuffix(resp.Request.URL.Path, "/download/darwin/arm64") || resp.StatusCode != http.StatusOK {
			return nil
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			return err
		}
		doc["signing_keys"] = map[string]any{"gpg_public_keys": []any{map[string]any{"key_id": "0000000000000000", "ascii_armor": otherPub}}}
		if b, err = json.Marshal(doc); err != nil {
			return err
		}
		resp.Body = io.NopCloser(bytes.NewReader(b))
		resp.ContentLength = int64(len(b))
		resp.Header.Set("Content-Length", strconv.Itoa(len(b)))
		return nil
	}
	front := httptest.NewServer(rp)
	t.Cleanup(front.Close)
	src, _ := newSource(srv, func(o *registry.Options) {
		o.HTTPClient = front.Client()
		o.Hosts = map[string]registry.Services{"registry.example.test": {"providers.v1": front.URL + "/v1/providers/"}}
	})
	ctx := context.Background()
	if _, err := src.Checksums(ctx, providerPkg(t, addr, "1.0.0", "linux_amd64")); err != nil {
		t.Fatalf("linux_amd64, whose response lists the signing key: %v", err)
	}
	if recs, err := src.Checksums(ctx, providerPkg(t, addr, "1.0.0", "darwin_arm64")); err == nil {
		t.Errorf("darwin_arm64, whose response lists only another key, was accepted: %v", recs)
	}
}
