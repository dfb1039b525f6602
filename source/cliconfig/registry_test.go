package cliconfig_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cliconfig"
	tfregistry "github.com/tflock/tflock/source/registry"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// A registry source given RegistryOptions finds a private registry's
// services and token in the CLI configuration, as tofu does.
func TestRegistryOptions(t *testing.T) {
	srv := registrytest.New(t, registrytest.Fixtures{Providers: []registrytest.Provider{{
		Addr:     "registry.example.test/acme/thing",
		Versions: []registrytest.ProviderVersion{{Version: "1.0.0", Platforms: []string{"linux_amd64"}}},
	}}}, registrytest.Options{Token: "s3cret"})
	addr := tfaddr.MustParseProviderSource("registry.example.test/acme/thing")
	versions := func(t *testing.T, cfgText string, opts tfregistry.Options) error {
		t.Helper()
		cfg, diags := cliconfig.Parse([]byte(cfgText), "test.tfrc")
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		opts.HTTPClient = srv.Client()
		src := tfregistry.NewSource(cfg.RegistryOptions(opts))
		_, err := src.Versions(context.Background(), source.ProviderPackage{Addr: addr})
		return err
	}

	if err := versions(t, "", tfregistry.Options{}); !errors.Is(err, source.ErrUnauthorized) {
		t.Fatalf("without credentials: err = %v, want unauthorized", err)
	}
	discovery := srv.RequestsTo("/.well-known/terraform.json")
	cfg := fmt.Sprintf(`
host "registry.example.test" {
  services = {
    "providers.v1" = "%s/v1/providers/"
    "login.v1"     = { client = "tofu-cli" }
  }
}
credentials "registry.example.test" {
  token = "s3cret"
}
`, "https://registry.example.test")
	if err := versions(t, cfg, tfregistry.Options{}); err != nil {
		t.Fatalf("with the CLI configuration's token: %v", err)
	}
	if n := srv.RequestsTo("/.well-known/terraform.json"); n != discovery {
		t.Errorf("service discovery asked %d more times; the host block should answer it", n-discovery)
	}
	// The configuration's token comes before the caller's credentials.
	wrong := tfregistry.Tokens{"registry.example.test": "wrong"}
	if err := versions(t, cfg, tfregistry.Options{Credentials: wrong}); err != nil {
		t.Fatalf("the caller's credentials came first: %v", err)
	}
	// The caller's own Hosts entry wins over the host block.
	broken := map[string]tfregistry.Services{"Registry.Example.Test": {"providers.v1": "https://registry.example.test/nowhere/"}}
	if err := versions(t, cfg, tfregistry.Options{Hosts: broken}); !errors.Is(err, source.ErrNotFound) {
		t.Fatalf("the caller's Hosts entry was not used: err = %v", err)
	}
	var none *cliconfig.Config
	if got := none.RegistryOptions(tfregistry.Options{UserAgent: "x"}); got.UserAgent != "x" || got.Credentials != nil || got.Hosts != nil {
		t.Errorf("a nil Config changed the options: %+v", got)
	}
}
