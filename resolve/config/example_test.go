package config_test

import (
	"fmt"
	"testing/fstest"

	"github.com/hashicorp/hcl/v2"

	"github.com/tflock/tflock/resolve/config"
)

// Read one module from files in memory and list what it requires: a
// declared provider, a provider only used (implied, with a warning), and
// a registry module call whose version comes from a variable, evaluated
// early as OpenTofu does. Addresses without a host are on DefaultHost
// (OpenTofu's registry when it is not set).
func Example() {
	src := `
terraform {
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.0, < 6.0"
    }
  }
}

variable "vpc_version" {
  default = "~> 5.1"
}

resource "random_id" "suffix" {
  byte_length = 4
}

module "vpc" {
  source  = "terraform-aws-modules/vpc/aws"
  version = var.vpc_version
}
`
	noEnv := func(string) (string, bool) { return "", false }
	mod, diags := config.ReadFiles([]config.File{{Name: "main.tf", Src: []byte(src)}}, "", config.ReadOptions{
		DefaultHost: "registry.example.test",
		Variables:   config.Variables{LookupEnv: noEnv},
	})
	for _, d := range diags {
		if d.Severity == hcl.DiagWarning {
			fmt.Println("warning:", d.Summary)
		}
	}
	for _, r := range mod.Requirements {
		fmt.Println(r)
	}
	// Output:
	// warning: Provider without a required_providers entry
	// root module (main.tf:6) requires registry.example.test/hashicorp/aws >= 5.0.0, < 6.0.0
	// root module (main.tf:15) requires registry.example.test/hashicorp/random any version
	// root module (main.tf:21) requires module "vpc" (registry.example.test/terraform-aws-modules/vpc/aws) ~> 5.1
}

// Read a module tree held in a file system: the root module and the
// local module it calls, each under its call path.
func ExampleReadTreeFS() {
	fsys := fstest.MapFS{
		"main.tf": {Data: []byte(`
module "net" {
  source = "./modules/net"
}
`)},
		"modules/net/main.tf": {Data: []byte(`
terraform {
  required_providers {
    dns = { source = "hashicorp/dns", version = "~> 3.4" }
  }
}

module "sg" {
  source = "git::https://git.example.test/sg.git?ref=v1.2.0"
}
`)},
	}
	cfg, diags := config.ReadTreeFS(fsys, ".", "", config.ReadOptions{DefaultHost: "registry.example.test"})
	if diags.HasErrors() {
		fmt.Println(diags)
		return
	}
	for _, m := range cfg.Modules {
		fmt.Printf("%q in %s\n", m.Call, m.Dir)
	}
	for _, r := range cfg.Requirements() {
		fmt.Println(r)
	}
	// Output:
	// "" in .
	// "net" in modules/net
	// module "net" (modules/net/main.tf:4) requires registry.example.test/hashicorp/dns ~> 3.4
	// module "net" (modules/net/main.tf:9) requires module "net.sg" (git::https://git.example.test/sg.git?ref=v1.2.0) any version
}

// The providers a state's resources use stay required, without a
// constraint, after the configuration no longer mentions them.
func ExampleStateRequirements() {
	state := `{
  "version": 4,
  "resources": [
    {"provider": "provider[\"registry.example.test/hashicorp/aws\"]"},
    {"provider": "module.net.provider[\"registry.example.test/hashicorp/dns\"].east"}
  ]
}`
	reqs, err := config.StateRequirements([]byte(state), "terraform.tfstate")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range reqs {
		fmt.Println(r)
	}
	// Output:
	// state (terraform.tfstate) requires registry.example.test/hashicorp/aws any version
	// state (terraform.tfstate) requires registry.example.test/hashicorp/dns any version
}

// ManagedSource writes the selected version's tag into the source of a
// call constrained by a tflock annotation: git's ref, OCI's tag.
func ExampleManagedSource() {
	for _, src := range []string{
		"git::https://git.example.test/net.git?ref=v1.0.0",
		"git::https://git.example.test/net.git?depth=1",
		"oci://registry.example.test/modules/net",
	} {
		next, err := config.ManagedSource(src, "v1.2.0")
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(next)
	}
	// Output:
	// git::https://git.example.test/net.git?ref=v1.2.0
	// git::https://git.example.test/net.git?depth=1&ref=v1.2.0
	// oci://registry.example.test/modules/net?tag=v1.2.0
}
