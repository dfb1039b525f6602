package registry_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/registry"
	"github.com/tflock/tflock/source/registry/registrytest"
)

func TestResolveLegacyProvider(t *testing.T) {
	fx := registrytest.Fixtures{Providers: []registrytest.Provider{
		{Addr: "hashicorp/aws", Versions: []registrytest.ProviderVersion{{Version: "5.1.0"}}},
		{Addr: "acme/aws", Versions: []registrytest.ProviderVersion{{Version: "0.1.0"}}},
		{Addr: "oldco/tool", MovedTo: "newco/tool", Versions: []registrytest.ProviderVersion{{Version: "1.0.0"}}},
	}}
	srv := registrytest.New(t, fx, registrytest.Options{})
	src, w := newSource(srv, func(o *registry.Options) { o.DefaultHost = "registry.example.test" })
	ctx := context.Background()
	for in, want := range map[string]string{
		"aws":   "registry.example.test/hashicorp/aws", // bare type: namespace "?"
		"-/aws": "registry.example.test/hashicorp/aws", // Terraform 0.13's legacy form
		"tool":  "registry.example.test/newco/tool",    // moved_to followed
	} {
		got, err := src.ResolveProvider(ctx, tfaddr.MustParseProviderSource(in))
		if err != nil || got.String() != want {
			t.Errorf("ResolveProvider(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	if n := srv.RequestsTo("/v1/providers/-/aws/versions"); n != 1 {
		t.Errorf("legacy lookup for aws made %d times, want 1 (cached)", n)
	}
	if ws := w.all(); len(ws) != 2 || !strings.Contains(strings.Join(ws, "\n"), "moved to registry.example.test/newco/tool") {
		t.Errorf("warnings %q; want one per resolved type, naming the move", ws)
	}
	// Versions works through the resolution.
	list, err := src.Versions(ctx, source.ProviderPackage{Addr: tfaddr.MustParseProviderSource("aws")})
	if err != nil || len(list) != 1 || list[0].Version.String() != "5.1.0" {
		t.Errorf("Versions(aws) = %v, %v", list, err)
	}
	// Unknown type.
	if _, err := src.ResolveProvider(ctx, tfaddr.MustParseProviderSource("nope")); !errors.Is(err, source.ErrNotFound) {
		t.Errorf("unknown legacy type: %v, want ErrNotFound", err)
	}
}

func TestBuiltInTerraformProvider(t *testing.T) {
	src := registry.NewSource(registry.Options{Credentials: registry.Tokens{}})
	for _, in := range []string{"terraform", "-/terraform", "terraform.io/builtin/terraform"} {
		got, err := src.ResolveProvider(context.Background(), tfaddr.MustParseProviderSource(in))
		if !errors.Is(err, registry.ErrBuiltIn) || got.String() != "terraform.io/builtin/terraform" {
			t.Errorf("ResolveProvider(%q) = %v, %v; want the built-in address and ErrBuiltIn", in, got, err)
		}
		if _, err := src.Versions(context.Background(), source.ProviderPackage{Addr: tfaddr.MustParseProviderSource(in)}); !errors.Is(err, source.ErrNotFound) {
			t.Errorf("Versions(%q): %v, want ErrNotFound", in, err)
		}
	}
}
