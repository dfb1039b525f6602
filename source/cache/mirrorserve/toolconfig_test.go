package mirrorserve_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tflock/tflock/source/cache/mirrorserve"
	"github.com/tflock/tflock/source/cliconfig"
)

const userConfig = `host "registry.example.test" {
  services = {
    "providers.v1" = "https://127.0.0.1:1/v1/providers/",
    "modules.v1"   = "https://127.0.0.1:1/v1/modules/",
  }
}

credentials "registry.example.test" {
  token = "s3cr3t-token"
}

plugin_cache_dir = "/var/cache/plugins"

provider_installation {
  dev_overrides {
    "registry.example.test/acme/dev" = "/home/me/dev"
  }
  network_mirror {
    url     = "https://corp.example.test/providers/"
    include = ["registry.example.test/*/*"]
  }
  direct {
    exclude = ["registry.example.test/*/*"]
  }
}
`

// The configuration written for tofu is one that tofu accepts beside
// nothing else: one provider_installation block (the mirror, and the
// user's dev overrides), the user's hosts and plugin cache, and no
// credential; the environment loses the TF_TOKEN_ variables.
func TestWriteToolConfigReplacesTheInstallationAndDropsCredentials(t *testing.T) {
	user, diags := cliconfig.Parse([]byte(userConfig), "user.tfrc")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	roots := filepath.Join(t.TempDir(), "roots.pem")
	if err := os.WriteFile(roots, []byte("-----BEGIN CERTIFICATE-----\nroots\n-----END CERTIFICATE-----\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tc, err := mirrorserve.WriteToolConfig(t.TempDir(), "https://127.0.0.1:4443/providers/", []byte("CERT\n"), mirrorserve.ToolConfigOptions{User: user, Token: "mirror-token", TrustAllHashes: true, RootsFile: roots})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(tc.ConfigFile)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "s3cr3t") || strings.Contains(string(b), "corp.example.test") {
		t.Errorf("the tool's configuration keeps a credential or the user's mirror:\n%s", b)
	}
	got, diags := cliconfig.Parse(b, "tofurc")
	if diags.HasErrors() {
		t.Fatalf("%s\n%s", diags, b)
	}
	pi := got.ProviderInstallation
	if pi == nil || len(pi.Methods) != 1 || pi.Methods[0].Kind != cliconfig.NetworkMirror || pi.Methods[0].Location != "https://127.0.0.1:4443/providers/" || !pi.Methods[0].TrustAllHashes {
		t.Errorf("provider_installation %+v\n%s", pi, b)
	}
	if pi != nil && len(pi.DevOverrides) != 1 {
		t.Errorf("dev overrides %v", pi.DevOverrides)
	}
	if tok := got.Token("127.0.0.1:4443"); tok != "mirror-token" {
		t.Errorf("the mirror's token: %q\n%s", tok, b)
	}
	if got.PluginCacheDir != "/var/cache/plugins" || got.Token("registry.example.test") != "" {
		t.Errorf("plugin cache %q, token %q", got.PluginCacheDir, got.Token("registry.example.test"))
	}
	if s, ok := got.Services("registry.example.test"); !ok || s["modules.v1"] != "https://127.0.0.1:1/v1/modules/" {
		t.Errorf("host block: %v", s)
	}
	certs, err := os.ReadFile(tc.CertFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(certs), "CERT\n") || !strings.Contains(string(certs), "roots") {
		t.Errorf("certificate bundle:\n%s", certs)
	}
	env := tc.Environ([]string{"PATH=/bin", "TF_TOKEN_registry_example_test=s3cr3t-token", "TF_CLI_CONFIG_FILE=/x", "SSL_CERT_FILE=/y", "TERRAFORM_CONFIG=/z"})
	want := []string{"PATH=/bin", "TF_CLI_CONFIG_FILE=" + tc.ConfigFile, "SSL_CERT_FILE=" + tc.CertFile}
	if !slices.Equal(env, want) {
		t.Errorf("Environ: %q, want %q", env, want)
	}
}

func TestWriteToolConfigRefusesAURLTofuRefuses(t *testing.T) {
	for _, u := range []string{"http://127.0.0.1:1/p/", "https://127.0.0.1:1/p"} {
		if _, err := mirrorserve.WriteToolConfig(t.TempDir(), u, nil, mirrorserve.ToolConfigOptions{}); err == nil {
			t.Errorf("%s accepted", u)
		}
	}
}

// Start serves on loopback HTTPS with a certificate that a client given
// CertPEM trusts; it refuses an address that is not a loopback one.
func TestStartServesLoopbackHTTPS(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(r.URL.Path)) })
	srv, err := mirrorserve.Start(context.Background(), h, mirrorserve.ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(srv.CertPEM) {
		t.Fatal("CertPEM holds no certificate")
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	for _, u := range []string{srv.URL + "a/b/index.json", strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "x"} {
		resp, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %d", u, resp.StatusCode)
		}
	}
	if !strings.HasPrefix(srv.URL, "https://127.0.0.1:") || !strings.HasSuffix(srv.URL, "/providers/") {
		t.Errorf("URL %s", srv.URL)
	}
	if _, err := mirrorserve.Start(context.Background(), h, mirrorserve.ServeOptions{Addr: "0.0.0.0:0"}); err == nil {
		t.Error("a non-loopback address accepted")
	}
}
