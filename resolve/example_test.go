package resolve_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/config"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/address"
)

// staticLister is a fixed, in-memory [source.Lister]: versions by
// package (a provider address or a module source).
type staticLister map[string][]string

func (l staticLister) Versions(_ context.Context, pkg source.Package) ([]source.Available, error) {
	list, ok := l[pkg.String()]
	if !ok {
		return nil, &source.Error{Source: "example", Package: pkg, Err: source.ErrNotFound}
	}
	var out []source.Available
	for _, s := range list {
		v, err := versions.ParseModuleVersion(s)
		if err != nil {
			return nil, err
		}
		out = append(out, source.Available{Version: v})
	}
	return out, nil
}

const exampleConfig = `
terraform {
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.0, < 6.0"
    }
  }
}

resource "random_id" "suffix" {
  byte_length = 4
}

module "vpc" {
  source  = "terraform-aws-modules/vpc/aws"
  version = "~> 5.1"
}
`

// Read a module's configuration, resolve it against a lister and explain
// each pick.
func Example() {
	mod, diags := config.ReadFiles([]config.File{{Name: "main.tf", Src: []byte(exampleConfig)}}, "", config.ReadOptions{})
	if diags.HasErrors() {
		fmt.Println(diags)
		return
	}
	lister := staticLister{
		"registry.opentofu.org/hashicorp/aws":                 {"4.67.0", "5.0.0", "5.31.0", "6.0.0"},
		"registry.opentofu.org/hashicorp/random":              {"3.5.1", "3.6.0"},
		"registry.opentofu.org/terraform-aws-modules/vpc/aws": {"5.0.0", "5.1.2", "5.8.1", "6.0.0"},
	}
	sel, err := resolve.Resolve(context.Background(), mod.Requirements, lister, resolve.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := sel.Explain(os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// provider registry.opentofu.org/hashicorp/aws 5.31.0: newest of 4 available versions allowed by >= 5.0.0, < 6.0.0
	//   root module (main.tf:6) requires >= 5.0.0, < 6.0.0
	//
	// provider registry.opentofu.org/hashicorp/random 3.6.0: newest of 2 available versions allowed by any version
	//   root module (main.tf:11) requires any version
	//
	// module "vpc" registry.opentofu.org/terraform-aws-modules/vpc/aws 5.8.1: newest of 4 available versions allowed by ~> 5.1
	//   root module (main.tf:17) requires ~> 5.1
}

// A constraint conflict names every constraint, where it comes from, and
// the versions that exist.
func ExampleConflictError() {
	app, _ := config.ReadFiles([]config.File{{Name: "modules/app/main.tf", Src: []byte(`
terraform {
  required_providers {
    aws = { source = "hashicorp/aws", version = ">= 2.0.0" }
  }
}
`)}}, "app", config.ReadOptions{})
	utils, _ := config.ReadFiles([]config.File{{Name: "modules/utils/main.tf", Src: []byte(`
terraform {
  required_providers {
    aws = { source = "hashicorp/aws", version = "< 2.0.0" }
  }
}
`)}}, "utils", config.ReadOptions{})
	reqs := append(app.Requirements, utils.Requirements...)
	lister := staticLister{"registry.opentofu.org/hashicorp/aws": {"1.0.0", "1.4.2", "2.1.0"}}
	_, err := resolve.Resolve(context.Background(), reqs, lister, resolve.Options{})
	var conflict *resolve.ConflictError
	if errors.As(err, &conflict) {
		fmt.Println(len(conflict.Requirements), "constraints")
	}
	fmt.Println(err)
	// Output:
	// 2 constraints
	// no version of provider registry.opentofu.org/hashicorp/aws satisfies all constraints: module "app" (modules/app/main.tf:4) requires >= 2.0.0; module "utils" (modules/utils/main.tf:4) requires < 2.0.0; available: 1.0.0 1.4.2 2.1.0
}

// Apply writes the picks into a lock file; a locked version that still
// fits is kept, with its hashes.
func ExampleSelection_Apply() {
	old, err := lockfile.Parse([]byte(`# This file is maintained automatically by "tofu init".
# Manual edits may be lost in future updates.

provider "registry.opentofu.org/hashicorp/aws" {
  version     = "5.0.0"
  constraints = ">= 5.0.0"
  hashes = [
    "h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
  ]
}

provider "registry.opentofu.org/hashicorp/null" {
  version = "3.2.3"
}
`), ".terraform.lock.hcl")
	if err != nil {
		fmt.Println(err)
		return
	}
	mod, _ := config.ReadFiles([]config.File{{Name: "main.tf", Src: []byte(exampleConfig)}}, "", config.ReadOptions{})
	lister := staticLister{
		"registry.opentofu.org/hashicorp/aws":                 {"5.0.0", "5.31.0"},
		"registry.opentofu.org/hashicorp/random":              {"3.6.0"},
		"registry.opentofu.org/terraform-aws-modules/vpc/aws": {"5.8.1"},
	}
	sel, err := resolve.Resolve(context.Background(), mod.Requirements, lister, resolve.Options{Lock: old})
	if err != nil {
		fmt.Println(err)
		return
	}
	sel.Apply(old)
	fmt.Print(string(old.Bytes()))
	// Output:
	// # This file is maintained automatically by "tofu init".
	// # Manual edits may be lost in future updates.
	//
	// provider "registry.opentofu.org/hashicorp/aws" {
	//   version     = "5.0.0"
	//   constraints = ">= 5.0.0, < 6.0.0"
	//   hashes = [
	//     "h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
	//   ]
	// }
	//
	// provider "registry.opentofu.org/hashicorp/random" {
	//   version = "3.6.0"
	// }
	//
	// module "vpc" {
	//   version     = "5.8.1"
	//   source      = "registry.opentofu.org/terraform-aws-modules/vpc/aws"
	//   constraints = "~> 5.1"
	// }
}

// A git module whose version constraint matches no tag: the error lists
// the tags the lister saw.
func ExampleNoMatchError() {
	mod, _ := config.ReadFiles([]config.File{{Name: "main.tf", Src: []byte(`
module "net" {
  source  = "git::https://example.com/net.git"
  version = "~> 2.0"
}
`)}}, "", config.ReadOptions{})
	lister := source.ListerFunc(func(_ context.Context, pkg source.Package) ([]source.Available, error) {
		var out []source.Available
		for _, tag := range []string{"v1.0.0", "v1.1.0"} {
			v, _ := versions.ParseModuleVersion(tag)
			out = append(out, source.Available{Version: v, Ref: tag})
		}
		return out, nil
	})
	_, err := resolve.Resolve(context.Background(), mod.Requirements, lister, resolve.Options{})
	var nm *resolve.NoMatchError
	if errors.As(err, &nm) {
		fmt.Println(nm.Tags)
	}
	fmt.Println(err)
	// Output:
	// [v1.0.0 v1.1.0]
	// module "net": no tag of git::https://example.com/net.git matches ~> 2.0 (required by root module (main.tf:4)); tags seen: v1.0.0, v1.1.0
}

// ClassifyModuleAddress tells the kinds of module source addresses
// apart once they are parsed, here with another default registry host.
func ExampleClassifyModuleAddress() {
	for _, src := range []string{"./modules/net", "acme/vpc/aws", "git::https://git.example.test/net.git"} {
		ms, err := address.ParseModuleSourceWith(src, address.Options{DefaultRegistryHost: "registry.example.test"})
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(ms, resolve.ClassifyModuleAddress(ms))
	}
	// Output:
	// ./modules/net local
	// registry.example.test/acme/vpc/aws registry
	// git::https://git.example.test/net.git remote
}
