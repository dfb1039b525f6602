package mirror_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/mirror"
)

// FuzzNetworkJSON serves a network mirror's index.json (version false) or
// 2.0.0.json (version true) from the fuzzer and everything else from the
// test mirror, and runs Versions, Checksums and Fetch. It checks that
// nothing panics or hangs, that every error is a *source.Error, that a
// failed Fetch leaves nothing behind, that listed versions are sorted and
// distinct, that hashes are reported only with TrustAllHashes and are
// valid and name a valid platform, and that a download location shows no
// password.
func FuzzNetworkJSON(f *testing.F) {
	backend := newMirrorServer(f)
	const prefix = "/mirror/registry.opentofu.org/hashicorp/null/"
	var mu sync.Mutex
	var fuzzPath string
	var fuzzBody []byte
	front := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		path, body := fuzzPath, fuzzBody
		mu.Unlock()
		if r.URL.Path == path {
			w.Write(body)
			return
		}
		resp, err := backend.Client().Get(backend.URL + r.URL.RequestURI())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	f.Cleanup(front.Close)

	for _, version := range []bool{false, true} {
		p := prefix + "index.json"
		if version {
			p = prefix + "2.0.0.json"
		}
		resp, err := backend.Client().Get(backend.URL + p)
		if err != nil {
			f.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		f.Add(version, body)
	}
	f.Add(true, []byte(`{"archives":{"linux_amd64":{"url":"https://user:pw@[::1]:0/x.zip","hashes":["h1:x"]},"Linux_AMD64":{"url":"../../../../files/terraform-provider-null_2.0.0_darwin_amd64.zip"}}}`))
	f.Add(true, []byte(`{"archives":{"darwin_amd64":{"url":"/files/terraform-provider-null_2.1.0_linux_amd64.zip","hashes":[]}}}`))
	f.Add(false, []byte(`{"versions":{"v2.0.0":{},"2.0.0+x":{},"2.0.0":{}}}`))

	addr := tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/null")
	f.Fuzz(func(t *testing.T, version bool, body []byte) {
		mu.Lock()
		fuzzPath, fuzzBody = prefix+"index.json", body
		if version {
			fuzzPath = prefix + "2.0.0.json"
		}
		mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		check := func(what string, err error) bool {
			t.Helper()
			if err == nil {
				return true
			}
			if ctx.Err() != nil {
				t.Fatalf("%s: still running after 20s: %v", what, err)
			}
			var se *source.Error
			if !errors.As(err, &se) {
				t.Errorf("%s: error %v (%T) is not a *source.Error", what, err, err)
			}
			return false
		}
		for _, trust := range []bool{false, true} {
			n, err := mirror.NewNetwork(mirror.NetworkOptions{URL: front.URL + "/mirror", Client: front.Client(), TrustAllHashes: trust, Retries: -1})
			if err != nil {
				t.Fatal(err)
			}
			if !version {
				list, err := n.Versions(ctx, source.ProviderPackage{Addr: addr})
				if check("versions", err) {
					for i := 1; i < len(list); i++ {
						if list[i-1].Version.Compare(list[i].Version) >= 0 {
							t.Errorf("versions not sorted and distinct: %v", list)
						}
					}
				}
				continue
			}
			pkg := source.ProviderPackage{Addr: addr, Version: versions.MustParse("2.0.0")}
			recs, err := n.Checksums(ctx, pkg)
			if check("checksums", err) {
				if !trust && len(recs) > 0 {
					t.Errorf("checksums without TrustAllHashes: %v", recs)
				}
				for _, r := range recs {
					if _, err := hash.ParseHash(string(r.Hash)); err != nil {
						t.Errorf("checksums: %v", err)
					}
					for _, p := range r.Provenance.Platforms {
						if _, err := source.ParsePlatform(p); err != nil {
							t.Errorf("checksums: %v", err)
						}
					}
				}
			}
			for _, plat := range []string{"linux_amd64", "darwin_amd64"} {
				pkg.Platform, _ = source.ParsePlatform(plat)
				base := t.TempDir()
				dir := filepath.Join(base, "pkg")
				got, err := n.Fetch(ctx, pkg, dir)
				if !check("fetch "+plat, err) {
					if entries, _ := os.ReadDir(base); len(entries) != 0 {
						t.Errorf("fetch %s failed and left %v", plat, entries)
					}
					continue
				}
				if got.Dir != dir || len(got.Hashes) == 0 {
					t.Errorf("fetch %s: %+v", plat, got)
				}
				if strings.Contains(got.Location, "pw@") {
					t.Errorf("fetch %s: location %q shows a password", plat, got.Location)
				}
			}
		}
	})
}
