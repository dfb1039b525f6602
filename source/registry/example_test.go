package registry_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/registry"
	"github.com/tflock/tflock/source/registry/registrytest"
)

func ExampleNewSource() {
	// An in-process registry speaking the real protocol over TLS.
	srv, err := registrytest.Start(registrytest.Fixtures{Providers: []registrytest.Provider{
		{Addr: "hashicorp/random", Versions: []registrytest.ProviderVersion{{Version: "3.5.1"}, {Version: "3.6.0"}}},
	}}, registrytest.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	src := registry.NewSource(registry.Options{
		HTTPClient:  srv.Client(),
		Credentials: registry.Tokens{}, // no TF_TOKEN_* from this machine
	})
	ctx := context.Background()
	addr := tfaddr.MustParseProviderSource("registry.example.test/hashicorp/random")
	list, err := src.Versions(ctx, source.ProviderPackage{Addr: addr})
	if err != nil {
		log.Fatal(err)
	}
	for _, a := range list {
		fmt.Println(a.Version, a.Platforms)
	}

	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	pkg := source.ProviderPackage{Addr: addr, Version: versions.MustParse("3.6.0"), Platform: source.Platform{OS: "linux", Arch: "amd64"}}
	got, err := src.Fetch(ctx, pkg, filepath.Join(dir, "random"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(got.Hashes), "local hashes,", len(got.Origin), "signed zh: hashes, signed by the registry's key:", got.Origin[0].Provenance.SignedBy[0] == srv.KeyID)
	// Output:
	// 3.5.1 [darwin_arm64 linux_amd64]
	// 3.6.0 [darwin_arm64 linux_amd64]
	// 2 local hashes, 2 signed zh: hashes, signed by the registry's key: true
}

func ExampleEnvCredentials() {
	creds := registry.EnvCredentials([]string{"TF_TOKEN_registry_example__corp_com=abc"})
	_, ok := creds.Token("registry.example-corp.com")
	fmt.Println(registry.TokenVariable("registry.example-corp.com"), ok)
	// Output: TF_TOKEN_registry_example__corp_com true
}

func ExampleParseSums() {
	sums, err := registry.ParseSums([]byte("7d7e888fdd28abfe00894f9055209b9eec785153641de98e6852aa071008d4ee  terraform-provider-x_1.0.0_linux_amd64.zip\n"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(sums["terraform-provider-x_1.0.0_linux_amd64.zip"])
	// Output: zh:7d7e888fdd28abfe00894f9055209b9eec785153641de98e6852aa071008d4ee
}
