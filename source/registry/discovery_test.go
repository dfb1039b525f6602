package registry_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/registry"
	"github.com/tflock/tflock/source/registry/registrytest"
)

func TestDiscoveryCachedPerHost(t *testing.T) {
	srv := registrytest.New(t, fixtures, registrytest.Options{})
	src, _ := newSource(srv, nil)
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := src.Versions(ctx, providerPkg(t, "registry.example.test/hashicorp/aws", "", "")); err != nil {
				t.Error(err)
			}
			// modules.v1 is an absolute URL, providers.v1 a relative one.
			if _, err := src.Versions(ctx, source.ModulePackage{Source: "registry.example.test/terraform-aws-modules/vpc/aws"}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := srv.RequestsTo("/.well-known/terraform.json"); n != 1 {
		t.Errorf("discovery requested %d times, want 1", n)
	}
}

func TestDiscoveryDocument(t *testing.T) {
	for name, tc := range map[string]struct {
		doc     string
		status  int
		wantErr error
		wantURL string // the path the versions request must reach
	}{
		"Relative":      {doc: `{"providers.v1":"/custom/prov/"}`, wantURL: "/custom/prov/a/b/versions"},
		"NoSlash":       {doc: `{"providers.v1":"/custom/prov"}`, wantURL: "/custom/prov/a/b/versions"},
		"OtherServices": {doc: `{"login.v1":{"client":"x"},"providers.v1":"p/"}`, wantURL: "/.well-known/p/a/b/versions"},
		"NoProviders":   {doc: `{"modules.v1":"/m/"}`, wantErr: registry.ErrNoService},
		"NotFound":      {status: 404, wantErr: source.ErrNotFound},
		"BadScheme":     {doc: `{"providers.v1":"ftp://x/"}`},
		"NotJSON":       {doc: `<html>`},
	} {
		t.Run(name, func(t *testing.T) {
			var got string
			ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/.well-known/terraform.json" {
					if tc.status != 0 {
						w.WriteHeader(tc.status)
					}
					w.Write([]byte(tc.doc))
					return
				}
				got = r.URL.Path
				w.Write([]byte(`{"versions":[{"version":"1.0.0"}]}`))
			}))
			defer ts.Close()
			host := strings.TrimPrefix(ts.URL, "https://")
			src := registry.NewSource(registry.Options{HTTPClient: ts.Client(), Credentials: registry.Tokens{}, Retries: -1})
			_, err := src.Versions(context.Background(), providerPkg(t, host+"/a/b", "", ""))
			switch {
			case tc.wantURL != "":
				if err != nil || got != tc.wantURL {
					t.Errorf("got path %q, error %v; want %q", got, err, tc.wantURL)
				}
			case tc.wantErr != nil:
				if !errors.Is(err, tc.wantErr) {
					t.Errorf("got %v, want %v", err, tc.wantErr)
				}
			default:
				if err == nil {
					t.Error("no error")
				}
			}
		})
	}
}

func TestHostsOverride(t *testing.T) {
	srv := registrytest.New(t, fixtures, registrytest.Options{})
	src, _ := newSource(srv, func(o *registry.Options) {
		o.Hosts = map[string]registry.Services{"Registry.Example.Test": {"providers.v1": "/v1/providers/"}}
	})
	if _, err := src.Versions(context.Background(), providerPkg(t, "registry.example.test/hashicorp/aws", "", "")); err != nil {
		t.Fatal(err)
	}
	if n := srv.RequestsTo("/.well-known/terraform.json"); n != 0 {
		t.Errorf("discovery requested %d times despite a host override", n)
	}
	_, err := src.Versions(context.Background(), source.ModulePackage{Source: "registry.example.test/terraform-aws-modules/vpc/aws"})
	if !errors.Is(err, registry.ErrNoService) {
		t.Errorf("modules.v1 not in the override: got %v, want ErrNoService", err)
	}
}
