package install_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing/fstest"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/registry"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// exampleRegistry starts a provider registry answering as
// registry.example.test, with acme/cloud 1.0.0 and 1.1.0 and acme/dns
// 2.0.0 for two platforms, and a source that reaches it.
func exampleRegistry() (*registrytest.Server, source.Source) {
	plats := []string{"linux_amd64", "darwin_arm64"}
	srv, err := registrytest.Start(registrytest.Fixtures{Providers: []registrytest.Provider{
		{Addr: "registry.example.test/acme/cloud", Versions: []registrytest.ProviderVersion{{Version: "1.0.0", Platforms: plats}, {Version: "1.1.0", Platforms: plats}}},
		{Addr: "registry.example.test/acme/dns", Versions: []registrytest.ProviderVersion{{Version: "2.0.0", Platforms: plats}}},
	}}, registrytest.Options{Hosts: []string{"registry.example.test"}})
	if err != nil {
		log.Fatal(err)
	}
	return srv, registry.NewSource(registry.Options{HTTPClient: srv.Client()})
}

// A dependency bot bumped acme/cloud from 1.0.0 to 1.1.0 in a
// configuration it does not have checked out: it re-locks that provider
// for the platforms the team uses, and writes the lock file back. The
// other entries stay as they were; the hashes are those Init would
// record.
func ExampleLockProvider() {
	srv, src := exampleRegistry()
	defer srv.Close()
	prev, err := lockfile.Parse([]byte(`provider "registry.example.test/acme/cloud" {
  version     = "1.0.0"
  constraints = "~> 1.0.0"
}

provider "registry.example.test/acme/dns" {
  version = "2.0.0"
}
`), "old.terraform.lock.hcl")
	if err != nil {
		log.Fatal(err)
	}
	res, err := install.LockProvider(context.Background(), install.LockProviderOptions{
		Lock:        prev,
		Addr:        tfaddr.MustParseProviderSource("registry.example.test/acme/cloud"),
		Version:     versions.MustParse("1.1.0"),
		Constraints: "~> 1.1.0", // what the bot wrote into required_providers
		Platforms:   []source.Platform{{OS: "linux", Arch: "amd64"}, {OS: "darwin", Arch: "arm64"}},
		Source:      src,
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range res.Changes {
		fmt.Println(c)
	}
	cloud := res.Lock.Provider(tfaddr.MustParseProviderSource("registry.example.test/acme/cloud"))
	fmt.Printf("cloud %s %q, %d hashes (an h1: and a zh: per platform)\n", cloud.Version, cloud.Constraints, len(cloud.Hashes))
	fmt.Println("dns kept:", res.Lock.Provider(tfaddr.MustParseProviderSource("registry.example.test/acme/dns")).Version)
	// Output:
	// registry.example.test/acme/cloud: upgraded 1.0.0 to 1.1.0 (4 hashes added)
	// cloud 1.1.0 "~> 1.1.0", 4 hashes (an h1: and a zh: per platform)
	// dns kept: 2.0.0
}

// A wrapper runs many units (configurations) at once, each given as an
// fs.FS, on one cache and one source, with one event handler: each event
// names its unit, so progress and cache hits are shown where they belong.
func ExampleInit_units() {
	srv, src := exampleRegistry()
	defer srv.Close()
	tmp, err := os.MkdirTemp("", "example-units-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	c := openCacheIn(filepath.Join(tmp, "cache"))
	shared := source.Memoize(src)

	var mu sync.Mutex
	seen := map[string][]string{} // unit → the providers its events concern
	events := source.EventsFunc(func(e source.Event) {
		if p, ok := e.Package.(source.ProviderPackage); ok {
			mu.Lock()
			if !slices.Contains(seen[e.Unit], p.Addr.Type) {
				seen[e.Unit] = append(seen[e.Unit], p.Addr.Type)
			}
			mu.Unlock()
		}
	})
	units := map[string]string{"unit-a": "cloud", "unit-b": "dns", "unit-c": "cloud"}
	var wg sync.WaitGroup
	for unit, provider := range units {
		wg.Add(1)
		go func() {
			defer wg.Done()
			config := fstest.MapFS{"main.tf": {Data: []byte(`terraform {
  required_providers {
    ` + provider + ` = { source = "registry.example.test/acme/` + provider + `" }
  }
}
`)}}
			ctx := source.WithUnit(context.Background(), unit)
			_, err := install.Init(ctx, install.Options{
				Dir:           filepath.Join(tmp, unit), // where the lock file and .terraform would be
				FS:            config,
				ProvidersLock: true, // record the lock only; install nothing
				Platforms:     []source.Platform{{OS: "linux", Arch: "amd64"}},
				Source:        shared,
				Cache:         c,
				Events:        events,
			})
			if err != nil {
				log.Fatal(err)
			}
		}()
	}
	wg.Wait()
	for _, unit := range []string{"unit-a", "unit-b", "unit-c"} {
		fmt.Println(unit, seen[unit])
	}
	// Output:
	// unit-a [cloud]
	// unit-b [dns]
	// unit-c [cloud]
}
