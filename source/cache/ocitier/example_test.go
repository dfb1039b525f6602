package ocitier_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/cache/ocitier"
	"github.com/tflock/tflock/source/oci"
	"github.com/tflock/tflock/source/oci/ocitest"
)

// A fleet shares one remote tier: every machine's local cache has it as
// its Remote. One machine's download from an origin is written through; on
// another machine, a local miss is served by the tier, verified against
// the lock file's hashes as a download would be.
func Example() {
	srv := ocitest.NewServer(ocitest.ServerOptions{Host: "registry.example.test"})
	defer srv.Close()
	ctx := context.Background()
	tmp, err := os.MkdirTemp("", "ocitier-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)

	// In production: ocitier.New("oci://HOST/PREFIX", ocitier.Options{OCI:
	// oci.Options{ConfigFiles: oci.DefaultConfigFiles(os.Getenv, runtime.GOOS)}}).
	machine := func(name string) *cache.Cache {
		tier, err := ocitier.New("oci://registry.example.test/fleet", ocitier.Options{OCI: oci.Options{PlainHTTP: true, HTTPClient: srv.Client()}})
		if err != nil {
			log.Fatal(err)
		}
		c, err := cache.Open(filepath.Join(tmp, name), cache.Options{Remote: tier})
		if err != nil {
			log.Fatal(err)
		}
		return c
	}

	pkg := source.ProviderPackage{
		Addr:     tfaddr.MustParseProviderSource("registry.example.test/acme/tool"),
		Version:  versions.MustParse("1.2.0"),
		Platform: source.Platform{OS: "linux", Arch: "amd64"},
	}
	zip, err := ocitest.Zip(map[string]string{"terraform-provider-tool_v1.2.0": "#!/bin/sh\n"})
	if err != nil {
		log.Fatal(err)
	}
	// The origin: here a function handing over the provider's zip, as the
	// registry source does.
	origin := func(ctx context.Context, dir string) (*source.Fetched, error) {
		p := filepath.Join(dir, "package.zip")
		return &source.Fetched{Archive: p, Location: "origin"}, os.WriteFile(p, zip, 0o644)
	}
	first, _, err := machine("a").Fill(ctx, pkg, nil, origin)
	if err != nil {
		log.Fatal(err)
	}

	// The second machine has the lock file's hashes and an empty cache.
	noOrigin := func(context.Context, string) (*source.Fetched, error) {
		return nil, fmt.Errorf("the origin was asked")
	}
	second, _, err := machine("b").Fill(ctx, pkg, first.Hashes, noOrigin)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("same package:", second.H1 == first.H1)
	fmt.Println("from:", second.Location[:len("oci://registry.example.test/fleet/registry.example.test/acme/tool")])
	for _, h := range second.Hashes {
		fmt.Println(h.Scheme() == hash.SchemeH1 || h.Scheme() == hash.SchemeZH)
	}
	// Output:
	// same package: true
	// from: oci://registry.example.test/fleet/registry.example.test/acme/tool
	// true
	// true
}
