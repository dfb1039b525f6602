package mirror_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/mirror"
)

// As OpenTofu's network mirror e2e test: a package that answers 500 ends,
// after the retries, in OpenTofu's words, typed as a failed query of the
// mirror; a platform the mirror lacks is typed with the mirror's URL.
func TestNetworkTypedErrors(t *testing.T) {
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/example.com/test/test/index.json":
			w.Write([]byte(`{"versions":{"0.0.1":{}}}`))
		case "/example.com/test/test/0.0.1.json":
			w.Write([]byte(`{"archives":{"linux_amd64":{"url":"terraform-provider-test_0.0.1_linux_amd64.zip","hashes":[]}}}`))
		case "/example.com/test/test/terraform-provider-test_0.0.1_linux_amd64.zip":
			w.WriteHeader(http.StatusInternalServerError)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer ts.Close()
	n, err := mirror.NewNetwork(mirror.NetworkOptions{URL: ts.URL, Client: ts.Client(), MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	pkg := source.ProviderPackage{Addr: tfaddr.MustParseProviderSource("example.com/test/test"), Version: versions.MustParse("0.0.1"), Platform: source.Platform{OS: "linux", Arch: "amd64"}}

	_, err = n.Fetch(context.Background(), pkg, filepath.Join(t.TempDir(), "p"))
	var qf *source.QueryFailedError
	if !errors.As(err, &qf) || qf.Mirror != n.String() {
		t.Fatalf("got %v (%T), want a QueryFailedError naming the mirror", err, err)
	}
	if !strings.Contains(err.Error(), "/example.com/test/test/terraform-provider-test_0.0.1_linux_amd64.zip giving up after 3 attempt(s)") {
		t.Errorf("text %q lacks OpenTofu's words", err)
	}
	if !strings.HasPrefix(err.Error(), "failed to query provider mirror "+n.String()+" for example.com/test/test: ") {
		t.Errorf("text %q", err)
	}

	pkg.Platform = source.Platform{OS: "darwin", Arch: "arm64"}
	_, err = n.Fetch(context.Background(), pkg, filepath.Join(t.TempDir(), "p"))
	var pe *source.PlatformNotSupportedError
	if !errors.As(err, &pe) || pe.Mirror != n.String() || !errors.Is(err, source.ErrPlatformNotSupported) {
		t.Fatalf("got %v (%T), want a PlatformNotSupportedError naming the mirror", err, err)
	}
	if want := "provider mirror " + n.String() + " does not have a package of example.com/test/test 0.0.1 for darwin_arm64"; err.Error() != want {
		t.Errorf("text %q, want %q", err, want)
	}
}
