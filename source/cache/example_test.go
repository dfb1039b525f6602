package cache_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/registry"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// Fill a cache once; a second Fill of the same package, here with its h1:
// as a lock file would record it, is served from the cache without calling
// the fetch function.
func ExampleCache_Fill() {
	dir, err := os.MkdirTemp("", "cache-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	c, err := cache.Open(dir, cache.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	pkg := source.ProviderPackage{
		Addr:     tfaddr.MustParseProviderSource("registry.example.test/acme/tool"),
		Version:  versions.MustParse("1.0.0"),
		Platform: source.Platform{OS: "linux", Arch: "amd64"},
	}
	fetches := 0
	fetch := func(ctx context.Context, into string) (*source.Fetched, error) {
		fetches++
		return nil, os.WriteFile(filepath.Join(into, "terraform-provider-tool_v1.0.0"), []byte("tool"), 0o755)
	}
	ctx := context.Background()
	first, hit, err := c.Fill(ctx, pkg, nil, fetch) // nothing recorded: trust on first use
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("first fill from the cache:", hit)
	again, hit, err := c.Fill(ctx, pkg, []hash.Hash{first.H1}, fetch)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("second fill from the cache:", hit)
	fmt.Println("same entry:", again.Dir == first.Dir)
	h1, err := hash.Options{}.H1Dir(ctx, again.Dir)
	fmt.Println("entry named by its h1:", err == nil && h1 == again.H1)
	fmt.Println("fetches:", fetches)
	// Output:
	// first fill from the cache: false
	// second fill from the cache: true
	// same entry: true
	// entry named by its h1: true
	// fetches: 1
}

// An installer that holds only the cache's fetcher learns what vouched for
// a package it installs, and the hashes of another platform's package
// without installing it (hash-only locking, as "tofu providers lock").
func ExampleCache_Fetcher() {
	srv, err := registrytest.Start(registrytest.Fixtures{Providers: []registrytest.Provider{
		{Addr: "acme/tool", Versions: []registrytest.ProviderVersion{{Version: "1.0.0", Platforms: []string{"linux_amd64", "darwin_arm64"}}}},
	}}, registrytest.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	dir, err := os.MkdirTemp("", "cache-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	c, err := cache.Open(filepath.Join(dir, "cache"), cache.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fetcher := c.Fetcher(registry.NewSource(registry.Options{HTTPClient: srv.Client(), Credentials: registry.Tokens{}}))
	ctx := context.Background()
	addr := tfaddr.MustParseProviderSource("registry.example.test/acme/tool")

	linux := source.ProviderPackage{Addr: addr, Version: versions.MustParse("1.0.0"), Platform: source.Platform{OS: "linux", Arch: "amd64"}}
	if _, err := fetcher.Fetch(ctx, linux, filepath.Join(dir, "install")); err != nil {
		fmt.Println(err)
		return
	}
	e, _, _ := c.Lookup(ctx, linux, nil)
	fmt.Println("signed by the registry's key:", e.Provenance.SignedBy[0] == srv.KeyID, "for", e.Provenance.Platforms)

	darwin := linux
	darwin.Platform = source.Platform{OS: "darwin", Arch: "arm64"}
	f, err := fetcher.(source.Hasher).FetchHashes(ctx, darwin)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("darwin_arm64 hashes:", len(f.Hashes), "installed:", f.Dir != "")
	// Output:
	// signed by the registry's key: true for [linux_amd64]
	// darwin_arm64 hashes: 2 installed: false
}
