package registry_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/tflock/tflock/source/registry"
)

// TestTokenNotSentOverHTTP checks that a service URL over plain http (here
// from a host block; a discovery document can name one too) gets no bearer
// token, unless LoopbackHTTPTokens is set and the host is a loopback one.
func TestTokenNotSentOverHTTP(t *testing.T) {
	var mu sync.Mutex
	var auth []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Write([]byte(`{"versions":[{"version":"1.0.0"}]}`))
	}))
	defer ts.Close()
	for _, tc := range []struct {
		name     string
		loopback bool
		want     string
	}{
		{"Default", false, ""},
		{"Loopback", true, "Bearer s3cret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			auth = nil
			var w warnings
			src := registry.NewSource(registry.Options{
				HTTPClient:         ts.Client(),
				Credentials:        registry.Tokens{"registry.example.test": "s3cret"},
				Hosts:              map[string]registry.Services{"registry.example.test": {"providers.v1": ts.URL + "/v1/providers/"}},
				LoopbackHTTPTokens: tc.loopback,
				Warn:               w.add,
			})
			for range 2 {
				if _, err := src.Versions(context.Background(), providerPkg(t, "registry.example.test/a/b", "", "")); err != nil {
					t.Fatal(err)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(auth) != 2 || auth[0] != tc.want || auth[1] != tc.want {
				t.Errorf("Authorization headers = %q, want %q twice", auth, tc.want)
			}
			msgs := w.all()
			if tc.want == "" {
				if len(msgs) != 1 || !strings.Contains(msgs[0], "plain http") || strings.Contains(msgs[0], "s3cret") {
					t.Errorf("warnings = %q, want one about plain http without the token", msgs)
				}
			} else if len(msgs) != 0 {
				t.Errorf("warnings = %q, want none", msgs)
			}
		})
	}
}
