package registry_test

import (
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
	"testing"
	"time"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/registry"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// fuzzHost is the registry host of FuzzRegistryJSON: a name the
// certificate of an httptest TLS server covers.
const fuzzHost = "example.com"

// fuzzToken is the registry token FuzzRegistryJSON sends; no error may
// show it.
const fuzzToken = "fuzz-secret-token-7f3a"

// The documents FuzzRegistryJSON replaces, by its selector.
var fuzzDocs = []string{
	"/.well-known/terraform.json",
	"/v1/providers/hashicorp/aws/versions",
	"/v1/providers/hashicorp/aws/5.1.0/download/linux_amd64",
	"/v1/modules/terraform-aws-modules/vpc/aws/versions",
	"/v1/modules/terraform-aws-modules/vpc/aws/3.19.0/download",
}

// fuzzDoc is the document (and X-Terraform-Get header) the fuzzing front
// server answers at path; every other request goes to the real test
// registry behind it.
type fuzzDoc struct {
	mu           sync.Mutex
	path, header string
	body         []byte
}

// FuzzRegistryJSON serves one registry protocol document (service
// discovery, provider versions, provider download, module versions, module
// download) from the fuzzer, and the rest from the real test registry, and
// runs the calls that read it: Versions, Checksums and Fetch. It checks
// that nothing panics or hangs, that every error is a *source.Error that
// does not show the registry token, that a failed Fetch leaves nothing, and
// that listed versions are sorted, distinct and have valid platforms.
func FuzzRegistryJSON(f *testing.F) {
	backend := registrytest.New(f, fixtures, registrytest.Options{Hosts: []string{fuzzHost}, Token: fuzzToken, HTTP1: true})
	toBackend := backend.Client()
	doc := &fuzzDoc{}
	front := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		doc.mu.Lock()
		path, header, body := doc.path, doc.header, doc.body
		doc.mu.Unlock()
		if r.URL.Path == path {
			if header != "" {
				w.Header().Set("X-Terraform-Get", header)
				w.WriteHeader(http.StatusNoContent)
			}
			w.Write(body)
			return
		}
		req, err := http.NewRequestWithContext(r.Context(), r.Method, "https://"+r.Host+r.URL.RequestURI(), nil)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		req.Header = r.Header.Clone()
		resp, err := toBackend.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	front.EnableHTTP2 = false
	front.StartTLS()
	f.Cleanup(front.Close)
	client := registrytest.ClientFor(front.Listener.Addr().String(), front.Certificate(), true)

	// Seeds: the real documents, as the test registry serves them.
	for i, p := range fuzzDocs {
		req, _ := http.NewRequest(http.MethodGet, "https://"+fuzzHost+p, nil)
		req.Header.Set("Authorization", "Bearer "+fuzzToken)
		resp, err := toBackend.Do(req)
		if err != nil {
			f.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		f.Add(uint8(i), body, resp.Header.Get("X-Terraform-Get"))
	}
	f.Add(uint8(0), []byte(`{"providers.v1":"http://example.com/v1/providers/","modules.v1":"https://user:pw@example.com/m/"}`), "")
	f.Add(uint8(2), []byte(`{"os":"linux","arch":"amd64","filename":"x.zip","download_url":"/x.zip","shasums_url":"file:///etc/passwd","shasums_signature_url":"s","shasum":"00"}`), "")
	f.Add(uint8(4), []byte(`{"location":"git::https://example.com/x.git?ref=v1"}`), "")
	f.Add(uint8(4), []byte{}, "./vpc.tar.gz//sub")

	provider := func(t *testing.T, platform string) source.ProviderPackage {
		return providerPkg(t, fuzzHost+"/hashicorp/aws", "5.1.0", platform)
	}
	module := source.ModulePackage{Source: fuzzHost + "/terraform-aws-modules/vpc/aws"}
	f.Fuzz(func(t *testing.T, which uint8, body []byte, header string) {
		which %= uint8(len(fuzzDocs))
		if strings.ContainsAny(header, "\r\n\x00") {
			header = "" // not a header value net/http sends
		}
		doc.mu.Lock()
		doc.path, doc.body, doc.header = fuzzDocs[which], body, header
		doc.mu.Unlock()
		src := registry.NewSource(registry.Options{
			HTTPClient:  client,
			Credentials: registry.Tokens{fuzzHost: fuzzToken},
			MinBackoff:  time.Microsecond,
			MaxBackoff:  time.Microsecond,
			Warn:        func(string) {},
			LookupEnv:   noEnv,
		})
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()

		check := func(what string, err error) bool {
			t.Helper()
			if err == nil {
				return true
			}
			t.Logf("%s: %v", what, err)
			if ctx.Err() != nil {
				t.Fatalf("%s: still running after 20s: %v", what, err)
			}
			var se *source.Error
			if !errors.As(err, &se) {
				t.Errorf("%s: error %v (%T) is not a *source.Error", what, err, err)
			}
			if strings.Contains(err.Error(), fuzzToken) {
				t.Errorf("%s: error shows the registry token: %v", what, err)
			}
			return false
		}
		checkList := func(what string, list []source.Available) {
			t.Helper()
			for i, a := range list {
				if i > 0 && list[i-1].Version.Compare(a.Version) >= 0 {
					t.Errorf("%s: versions not sorted and distinct: %v then %v", what, list[i-1].Version, a.Version)
				}
				for _, p := range a.Platforms {
					if _, err := source.ParsePlatform(p.String()); err != nil {
						t.Errorf("%s: %v lists an invalid platform: %v", what, a.Version, err)
					}
				}
			}
		}
		fetch := func(what string, pkg source.Package) {
			t.Helper()
			dir := filepath.Join(t.TempDir(), "pkg")
			got, err := src.Fetch(ctx, pkg, dir)
			if !check(what, err) {
				nothingLeft(t, dir)
				return
			}
			if got.Dir != dir {
				t.Errorf("%s: fetched into %s, not %s", what, got.Dir, dir)
			}
			if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(got.Subdir))); err != nil {
				t.Errorf("%s: subdirectory %q of the package: %v", what, got.Subdir, err)
			}
		}
		switch which {
		case 0, 1: // discovery, provider versions
			list, err := src.Versions(ctx, source.ProviderPackage{Addr: provider(t, "").Addr})
			if check("provider versions", err) {
				checkList("provider versions", list)
			}
			if which == 0 {
				list, err := src.Versions(ctx, module)
				if check("module versions", err) {
					checkList("module versions", list)
				}
			}
		case 2: // provider download
			recs, err := src.Checksums(ctx, provider(t, "linux_amd64"))
			if check("checksums", err) {
				for _, r := range recs {
					if _, err := hash.ParseHash(string(r.Hash)); err != nil {
						t.Errorf("checksums: %v", err)
					}
				}
			}
			fetch("provider fetch", provider(t, "linux_amd64"))
		case 3: // module versions
			list, err := src.Versions(ctx, module)
			if check("module versions", err) {
				checkList("module versions", list)
				if slices.ContainsFunc(list, func(a source.Available) bool { return a.Version.IsZero() }) {
					t.Errorf("module versions: a zero version is listed")
				}
			}
		case 4: // module download
			m := module
			m.Version = versions.MustParse("3.19.0")
			fetch("module fetch", m)
		}
	})
}
