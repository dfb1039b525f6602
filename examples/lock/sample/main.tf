# The sample configuration of "go run ./examples/lock": two registry
# providers, a registry module, a git module selected by a version
# constraint, and an OCI module. Every source is served in-process.
#
# The git module's constraint is a "# tflock: version" comment, which
# tofu and terraform ignore (they refuse a version argument on a git
# source, the module-locking RFC's form): tflock resolves it and writes
# the selected tag into the source's ?ref=, so that a stock tofu installs
# the locked commit.

terraform {
  required_providers {
    cloud = {
      source  = "registry.example.test/acme/cloud"
      version = "~> 1.0"
    }
    dns = {
      source  = "registry.example.test/acme/dns"
      version = ">= 2.0.0"
    }
  }
}

module "vpc" {
  source  = "registry.example.test/acme/vpc/cloud"
  version = "~> 1.0"
}

module "network" {
  # tflock: version = "~> 1.0"
  source = "git::https://git.example.test/acme/network.git"
}

module "storage" {
  source = "oci://oci.example.test/modules/storage?tag=1.0.0"
  name   = "demo"
}

resource "dns_record" "www" {}
