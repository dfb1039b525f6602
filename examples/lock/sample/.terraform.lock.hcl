# This file is maintained automatically by "tofu init".
# Manual edits may be lost in future updates.

provider "registry.example.test/acme/cloud" {
  version     = "1.0.0"
  constraints = ">= 1.0.0, ~> 1.0"
}

provider "registry.example.test/acme/dns" {
  version     = "2.0.0"
  constraints = ">= 2.0.0"
}

module "network" {
  version     = "1.0.0"
  source      = "git::https://git.example.test/acme/network.git"
  constraints = "~> 1.0"
}

module "vpc" {
  version     = "1.0.0"
  source      = "registry.example.test/acme/vpc/cloud"
  constraints = "~> 1.0"
}
