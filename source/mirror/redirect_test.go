package mirror

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/internal/httpx"
)

// TestClientRefusesDowngrade checks that a redirect from the https mirror to
// plain http is refused, with the caller's own client too (its redirect
// policy is wrapped), and not retried.
func TestClientRefusesDowngrade(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("the plain-http server was reached")
	}))
	defer plain.Close()
	requests := 0
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests++
		http.Redirect(w, r, plain.URL+r.URL.Path, http.StatusFound)
	}))
	defer tlsSrv.Close()

	n, err := NewNetwork(NetworkOptions{URL: tlsSrv.URL, Client: tlsSrv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = n.Versions(context.Background(), source.ProviderPackage{Addr: tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/null")})
	if !errors.Is(err, httpx.ErrInsecureRedirect) {
		t.Errorf("got %v, want the redirect to http refused (httpx.ErrInsecureRedirect)", err)
	}
	if requests != 1 {
		t.Errorf("the mirror was asked %d times, want 1 (a refused redirect is not retried)", requests)
	}
}

// TestDefaultClientNoOverallTimeout: the default client does not cut a
// download at a fixed time (it used to be an http.Client with a 60 s
// Timeout, so a large provider over a slow link could never install from a
// mirror); downloads have no overall limit by default and end when the
// mirror stops sending.
func TestDefaultClientNoOverallTimeout(t *testing.T) {
	n, err := NewNetwork(NetworkOptions{URL: "https://mirror.example.test/"})
	if err != nil {
		t.Fatal(err)
	}
	o := n.c.Options()
	hc, ok := o.Client.(*http.Client)
	if !ok || hc.Timeout != 0 {
		t.Errorf("default client %#v: want an *http.Client without Timeout", o.Client)
	}
	if o.DownloadTimeout != 0 && o.DownloadTimeout < time.Hour {
		t.Errorf("default DownloadTimeout %v: want none or at least an hour", o.DownloadTimeout)
	}
	if o.IdleTimeout <= 0 || o.RequestTimeout <= 0 || o.Retries != 2 {
		t.Errorf("defaults %+v: want an idle timeout, a request timeout and OpenTofu's 2 retries", o)
	}
}
