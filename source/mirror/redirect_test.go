package mirror

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/source"
)

func TestDefaultClientRefusesDowngrade(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("the plain-http server was reached")
	}))
	defer plain.Close()
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, plain.URL+r.URL.Path, http.StatusFound)
	}))
	defer tlsSrv.Close()

	client := tlsSrv.Client() // trusts the test certificate
	client.CheckRedirect = httpsOnly
	n, err := NewNetwork(NetworkOptions{URL: tlsSrv.URL, Client: client})
	if err != nil {
		t.Fatal(err)
	}
	_, err = n.Versions(context.Background(), source.ProviderPackage{Addr: tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/null")})
	if err == nil || !strings.Contains(err.Error(), "refusing a redirect") {
		t.Errorf("got %v, want the redirect to http refused", err)
	}
	if d, ok := NewNetwork(NetworkOptions{URL: "https://mirror.example.com"}); ok != nil || d.opts.Client.(*http.Client).CheckRedirect == nil {
		t.Error("the default client follows redirects to http")
	}
}
