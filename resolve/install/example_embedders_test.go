package install_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source/cache"
)

// A program like OpenTofu's core: "init" installs the configuration's
// dependencies and writes the lock file; "plan", later, checks read-only
// that the lock file and the install directory are what the
// configuration needs, and gets the provider executables to start. A
// constraint changed since init is reported, typed, with its file and
// line.
func ExampleCheck() {
	ctx := context.Background()
	w, err := installtest.Start(ctx, installtest.Options{NoGit: true})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()
	dir, err := os.MkdirTemp("", "example-check-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	config := `terraform {
  required_providers {
    cloud = {
      source  = "registry.example.test/acme/cloud"
      version = "~> 1.0"
    }
  }
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(config), 0o644); err != nil {
		log.Fatal(err)
	}
	c, err := cache.Open(filepath.Join(dir, "cache"), cache.Options{})
	if err != nil {
		log.Fatal(err)
	}

	// init
	opts := install.Options{Dir: dir, Source: w.Source, Cache: c}
	res, err := install.Init(ctx, opts)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := install.WriteLock(filepath.Join(dir, install.LockFileName), res); err != nil {
		log.Fatal(err)
	}

	// plan: the same settings, read-only.
	chk, err := install.Check(ctx, opts.ForCheck())
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range chk.Providers {
		fmt.Println("ready:", p.Package.Addr.ForDisplay(), p.Package.Version, strings.TrimSuffix(filepath.Base(p.Executable), ".exe"))
	}

	// The configuration moves on without an init.
	moved := strings.Replace(config, "~> 1.0", "~> 2.0", 1)
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(moved), 0o644); err != nil {
		log.Fatal(err)
	}
	chk, err = install.Check(ctx, install.CheckOptions{Dir: dir})
	fmt.Println("error:", err != nil)
	for _, p := range chk.Problems {
		fmt.Printf("%s at %s:%d\n", p.Kind, filepath.Base(p.Range.Filename), p.Range.Start.Line)
	}
	// Output:
	// ready: registry.example.test/acme/cloud 1.1.0 terraform-provider-cloud_v1.1.0
	// error: true
	// constraints changed at main.tf:5
}
