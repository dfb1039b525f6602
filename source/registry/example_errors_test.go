package registry_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/registry"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// An installer tells apart, with errors.As, a registry that does not know
// a provider from a provider that no configured source may serve, as
// OpenTofu's init does; both still match source.ErrNotFound.
func Example_typedErrors() {
	srv, err := registrytest.Start(registrytest.Fixtures{Providers: []registrytest.Provider{
		{Addr: "hashicorp/random", Versions: []registrytest.ProviderVersion{{Version: "3.6.0"}}},
	}}, registrytest.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	reg := registry.NewSource(registry.Options{HTTPClient: srv.Client(), Credentials: registry.Tokens{}})
	// As a provider_installation block with one direct method that
	// excludes acme/*.
	installation := source.Multi(source.Selector{Source: reg, Exclude: []source.Pattern{source.MustParseProviderPattern("registry.example.test/acme/*")}})

	for _, addr := range []string{"registry.example.test/hashicorp/nothere", "registry.example.test/acme/tool"} {
		_, err := installation.Versions(context.Background(), source.ProviderPackage{Addr: tfaddr.MustParseProviderSource(addr)})
		var notKnown *source.RegistryNotKnownError
		var notFound *source.NotFoundError
		switch {
		case errors.As(err, &notKnown):
			fmt.Println("not known to", notKnown.Host+":", err)
		case errors.As(err, &notFound):
			fmt.Println("no source for it:", len(notFound.Sources) == 0)
		}
		fmt.Println("  matches ErrNotFound:", errors.Is(err, source.ErrNotFound))
	}
	// Output:
	// not known to registry.example.test: provider registry registry.example.test does not have a provider named registry.example.test/hashicorp/nothere
	//   matches ErrNotFound: true
	// no source for it: true
	//   matches ErrNotFound: true
}
