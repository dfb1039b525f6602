terraform {
  required_providers {
    cloud = {
      source = "registry.example.test/acme/cloud"
    }
  }
}

provider "cloud" {
  alias  = "east"
  region = "east"
}

module "per_region" {
  for_each = var.regions
  /*
   * tflock: version = "~> 1.0"
   */
  source     = "git::https://git.example.test/acme/network.git?ref=v1.0.0"
  name       = "${local.prefix}-${each.key}"
  settings   = {
    zone = "a" # tflock: version = "~> 6.0" -- inside an argument: reported
  }
  depends_on = [module.storage]
}

module "storage" /* tflock: version = "~> 5.0" -- in the header: reported */ {
	source  = "oci://oci.example.test/modules/storage?tag=1.0.0"	# tflock: version = ">= 1.0.0, < 2.0.0"
	buckets = { logs = true, data = false }
}

module "wide" {
  source = "git::https://git.example.test/acme/network.git?ref=v1.0.0" // tflock:version=">= 1.0.0, < 2.0.0"
}
