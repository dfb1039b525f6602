package install_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/sourcetest"
)

// Init a configuration against an in-memory source, write its lock file,
// and init again: the second run changes nothing and asks the source
// nothing, since the lock file and the cache agree.
func ExampleInit() {
	dir, addr, src := greetExample()
	defer os.RemoveAll(dir)
	c := openCacheIn(filepath.Join(dir, "cache"))

	for range 2 {
		res, err := install.Init(context.Background(), install.Options{Dir: dir, Source: src, Cache: c})
		if err != nil {
			log.Fatal(err)
		}
		note, err := install.WriteLock(filepath.Join(dir, install.LockFileName), res)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("selected %s, listed %d, downloaded %d, %d changes\n",
			res.Lock.Provider(addr).Version, res.Listed, res.Downloads, len(res.Changes))
		if note != "" {
			fmt.Print(note)
		}
	}
	// Output:
	// selected 1.1.0, listed 1, downloaded 1, 1 changes
	// OpenTofu has created a lock file .terraform.lock.hcl to record the provider
	// selections it made above. Include this file in your version control repository
	// so that OpenTofu can guarantee to make the same selections by default when
	// you run "tofu init" in the future.
	// selected 1.1.0, listed 0, downloaded 0, 0 changes
}

// greetExample makes a temporary directory with a configuration requiring
// acme/greet "~> 1.0", and an in-memory source offering its versions
// 1.0.0, 1.1.0 and 2.0.0.
func greetExample() (string, tfaddr.Provider, *sourcetest.Static) {
	dir, err := os.MkdirTemp("", "example-init-")
	if err != nil {
		log.Fatal(err)
	}
	config := `terraform {
  required_providers {
    greet = {
      source  = "registry.example.test/acme/greet"
      version = "~> 1.0"
    }
  }
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(config), 0o644); err != nil {
		log.Fatal(err)
	}
	addr := tfaddr.MustParseProviderSource("registry.example.test/acme/greet")
	src := &sourcetest.Static{}
	for _, v := range []string{"1.0.0", "1.1.0", "2.0.0"} {
		src.Providers = append(src.Providers, sourcetest.StaticProvider{
			Addr: addr, Version: versions.MustParse(v), Platform: source.CurrentPlatform,
			Files: map[string]string{"terraform-provider-greet": "greet " + v},
		})
	}
	return dir, addr, src
}

// The solver's settings are Options.Resolve, a [resolve.Options]: here a
// lock file held in memory keeps acme/greet at 1.0.0 until Upgrade
// (tofu's -upgrade) moves it to the newest version its constraint
// allows, and the caller's ProviderPicked hears of each pick as soon as
// it is made.
func ExampleOptions_resolve() {
	dir, addr, src := greetExample()
	defer os.RemoveAll(dir)
	c := openCacheIn(filepath.Join(dir, "cache"))
	lock := lockfile.New()
	lock.SetProvider(&lockfile.ProviderLock{Addr: addr, Version: versions.MustParse("1.0.0"), Constraints: "~> 1.0"})

	for _, upgrade := range []bool{false, true} {
		res, err := install.Init(context.Background(), install.Options{Dir: dir, Source: src, Cache: c, Resolve: resolve.Options{
			Lock:    lock,
			Upgrade: upgrade,
			ProviderPicked: func(_ context.Context, p resolve.ProviderPick) {
				fmt.Printf("picked %s %s (%s)\n", p.Addr.ForDisplay(), p.Version, p.Reason)
			},
		}})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("locked", res.Lock.Provider(addr).Version)
	}
	// Output:
	// picked registry.example.test/acme/greet 1.0.0 (locked)
	// locked 1.0.0
	// picked registry.example.test/acme/greet 1.1.0 (upgraded)
	// locked 1.1.0
}
