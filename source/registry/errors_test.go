package registry_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/registry"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// asTyped finds the typed error T in err, failing the test without one.
func asTyped[T error](t *testing.T, err error) T {
	t.Helper()
	var target T
	if !errors.As(err, &target) {
		t.Fatalf("got %v (%T), want a %T", err, err, target)
	}
	return target
}

// Each case OpenTofu's installer tells apart has its own type, with
// OpenTofu's words, and still matches the sentinel it matched before.
func TestTypedErrors(t *testing.T) {
	ctx := context.Background()
	srv := registrytest.New(t, registrytest.Fixtures{Providers: []registrytest.Provider{
		{Addr: "hashicorp/aws", Versions: []registrytest.ProviderVersion{{Version: "5.1.0", Platforms: []string{"linux_amd64"}}}},
		{Addr: "acme/old", Versions: []registrytest.ProviderVersion{
			{Version: "2.0.0", Protocols: []string{"4.0"}},
			{Version: "1.5.0", Protocols: []string{"5.0"}},
			{Version: "1.0.0", Protocols: []string{"5.0"}},
		}},
	}}, registrytest.Options{})
	src, _ := newSource(srv, nil)

	t.Run("RegistryNotKnown", func(t *testing.T) {
		_, err := src.Versions(ctx, providerPkg(t, "registry.example.test/acme/nothere", "", ""))
		e := asTyped[*source.RegistryNotKnownError](t, err)
		if !errors.Is(err, source.ErrNotFound) || e.Host != "registry.example.test" {
			t.Errorf("got %v (host %q), want ErrNotFound from registry.example.test", err, e.Host)
		}
		if want := "provider registry registry.example.test does not have a provider named registry.example.test/acme/nothere"; err.Error() != want {
			t.Errorf("text %q, want %q", err, want)
		}
		// Through Multi, a registry's "not known" is what is reported.
		_, err = source.Multi(src).Versions(ctx, providerPkg(t, "registry.example.test/acme/nothere", "", ""))
		asTyped[*source.RegistryNotKnownError](t, err)
	})

	t.Run("NoSourceConfigured", func(t *testing.T) {
		m := source.Multi(source.Selector{Source: src, Include: []source.Pattern{source.MustParseProviderPattern("registry.example.test/acme/*")}})
		_, err := m.Versions(ctx, providerPkg(t, "registry.example.test/hashicorp/aws", "", ""))
		e := asTyped[*source.NotFoundError](t, err)
		if !errors.Is(err, source.ErrNotFound) || len(e.Sources) != 0 {
			t.Errorf("got %v, sources %v; want ErrNotFound and no source", err, e.Sources)
		}
		if !strings.Contains(err.Error(), "provider registry.example.test/hashicorp/aws was not found in any of the search locations") {
			t.Errorf("text %q", err)
		}
		if errors.As(err, new(*source.RegistryNotKnownError)) {
			t.Errorf("no registry was asked, yet %v is a RegistryNotKnownError", err)
		}
	})

	t.Run("PlatformNotSupported", func(t *testing.T) {
		_, err := src.Fetch(ctx, providerPkg(t, "registry.example.test/hashicorp/aws", "5.1.0", "freebsd_arm"), filepath.Join(t.TempDir(), "p"))
		e := asTyped[*source.PlatformNotSupportedError](t, err)
		if !errors.Is(err, source.ErrPlatformNotSupported) || e.Mirror != "" {
			t.Errorf("got %v, mirror %q", err, e.Mirror)
		}
		if want := "provider registry.example.test/hashicorp/aws 5.1.0 is not available for freebsd_arm"; err.Error() != want {
			t.Errorf("text %q, want %q", err, want)
		}
	})

	t.Run("ProtocolNotSupported", func(t *testing.T) {
		_, err := src.Fetch(ctx, providerPkg(t, "registry.example.test/acme/old", "2.0.0", "linux_amd64"), filepath.Join(t.TempDir(), "p"))
		e := asTyped[*source.ProtocolNotSupportedError](t, err)
		if !errors.Is(err, registry.ErrProtocolNotSupported) || e.Suggestion.String() != "1.5.0" {
			t.Errorf("got %v, suggestion %q; want the newest version speaking 5 or 6, 1.5.0", err, e.Suggestion)
		}
		if want := "provider registry.example.test/acme/old 2.0.0 is not supported by this version of OpenTofu"; err.Error() != want {
			t.Errorf("text %q, want %q", err, want)
		}
	})

	t.Run("HostNoProviders", func(t *testing.T) {
		for _, tc := range []struct {
			services registry.Services
			other    bool
			want     string
		}{
			{registry.Services{"modules.v1": "/m/"}, false, "host registry.example.test does not offer a OpenTofu provider registry"},
			{registry.Services{"modules.v1": "/m/", "providers.v2": "/p2/"}, true, "host registry.example.test does not support the provider registry protocol required by this OpenTofu version, but may be compatible with a different OpenTofu version"},
		} {
			s, _ := newSource(srv, func(o *registry.Options) {
				o.Hosts = map[string]registry.Services{"registry.example.test": tc.services}
			})
			_, err := s.Versions(ctx, providerPkg(t, "registry.example.test/hashicorp/aws", "", ""))
			e := asTyped[*source.HostNoProvidersError](t, err)
			if e.HasOtherVersion != tc.other || !errors.Is(err, registry.ErrNoService) || !errors.Is(err, source.ErrNotFound) {
				t.Errorf("got %v, HasOtherVersion %v; want %v, matching ErrNoService and ErrNotFound", err, e.HasOtherVersion, tc.other)
			}
			if err.Error() != tc.want {
				t.Errorf("text %q, want %q", err, tc.want)
			}
		}
	})

	t.Run("Unauthorized", func(t *testing.T) {
		locked := registrytest.New(t, registrytest.Fixtures{Providers: []registrytest.Provider{
			{Addr: "acme/secret", Versions: []registrytest.ProviderVersion{{Version: "1.0.0"}}},
		}}, registrytest.Options{Token: "right"})
		for _, tc := range []struct {
			tokens registry.Tokens
			have   bool
			want   string
		}{
			{registry.Tokens{}, false, "host registry.example.test requires authentication credentials"},
			{registry.Tokens{"registry.example.test": "wrong"}, true, "host registry.example.test rejected the given authentication credentials"},
		} {
			s, _ := newSource(locked, func(o *registry.Options) { o.Credentials = tc.tokens })
			_, err := s.Versions(ctx, providerPkg(t, "registry.example.test/acme/secret", "", ""))
			e := asTyped[*source.UnauthorizedError](t, err)
			if e.HaveCredentials != tc.have || !errors.Is(err, source.ErrUnauthorized) {
				t.Errorf("got %v, HaveCredentials %v; want %v and ErrUnauthorized", err, e.HaveCredentials, tc.have)
			}
			if err.Error() != tc.want {
				t.Errorf("text %q, want %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "wrong") {
				t.Errorf("the error shows the token: %v", err)
			}
		}
	})

	t.Run("QueryFailedAfterRetries", func(t *testing.T) {
		flaky := registrytest.New(t, registrytest.Fixtures{Providers: []registrytest.Provider{
			{Addr: "acme/flaky", Versions: []registrytest.ProviderVersion{{Version: "1.0.0"}}},
		}}, registrytest.Options{FailFirst: 100})
		s, _ := newSource(flaky, func(o *registry.Options) {
			o.Hosts = map[string]registry.Services{"registry.example.test": {"providers.v1": "/v1/providers/"}}
			o.Retries = 1
		})
		_, err := s.Versions(ctx, providerPkg(t, "registry.example.test/acme/flaky", "", ""))
		asTyped[*source.QueryFailedError](t, err)
		he := asTyped[*registry.HTTPError](t, err)
		if he.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("status %d, want 503", he.StatusCode)
		}
		if !strings.HasPrefix(err.Error(), "could not query provider registry for registry.example.test/acme/flaky: ") ||
			!strings.Contains(err.Error(), "/v1/providers/acme/flaky/versions giving up after 2 attempt(s)") {
			t.Errorf("text %q: want OpenTofu's words, the URL and the attempts", err)
		}
	})

	t.Run("HostUnreachable", func(t *testing.T) {
		ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`<html>`))
		}))
		defer ts.Close()
		host := strings.TrimPrefix(ts.URL, "https://")
		s := registry.NewSource(registry.Options{HTTPClient: ts.Client(), Credentials: registry.Tokens{}, Retries: -1})
		_, err := s.Versions(ctx, providerPkg(t, host+"/a/b", "", ""))
		e := asTyped[*source.HostUnreachableError](t, err)
		if e.Host != host || !strings.HasPrefix(err.Error(), "could not connect to "+host+": ") {
			t.Errorf("got %v (host %q), want OpenTofu's words for %s", err, e.Host, host)
		}
	})

	t.Run("QueryFailedInvalidResponse", func(t *testing.T) {
		ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/.well-known/terraform.json" {
				w.Write([]byte(`{"providers.v1":"/v1/providers/"}`))
				return
			}
			w.Write([]byte(`<html>`))
		}))
		defer ts.Close()
		host := strings.TrimPrefix(ts.URL, "https://")
		s := registry.NewSource(registry.Options{HTTPClient: ts.Client(), Credentials: registry.Tokens{}, Retries: -1})
		_, err := s.Versions(ctx, providerPkg(t, host+"/a/b", "", ""))
		asTyped[*source.QueryFailedError](t, err)
		if want := "could not query provider registry for " + host + "/a/b: invalid response from " + ts.URL + "/v1/providers/a/b/versions: "; !strings.HasPrefix(err.Error(), want) {
			t.Errorf("text %q, want it to start with %q", err, want)
		}
	})

	t.Run("Canceled", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		for _, s := range []source.Source{src, source.Multi(src)} {
			_, err := s.Versions(cctx, providerPkg(t, "registry.example.test/hashicorp/aws", "", ""))
			asTyped[*source.CanceledError](t, err)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%v does not match context.Canceled", err)
			}
		}
	})
}
