# tflock: version = "~> 9.0"
module "above" {
  source = "git::https://git.example.test/acme/network.git?ref=v1.0.0"
}

module "between" {
  count  = 1
  // tflock: version = ">= 1.0.0, < 2.0.0"
  source = "git::https://git.example.test/acme/network.git?depth=1&ref=v1.0.0"
  tags = {
    # tflock: version = "~> 8.0"
    team = "net"
  }
  description = <<-EOT
    # tflock: version = "~> 7.0" (text, not a comment)
  EOT
}

module "last" {
  source    =    "git::https://git.example.test/acme/network.git"
  # tflock: version = "~> 1.0"
}

module "oci_tagged" {
  source = "oci://oci.example.test/modules/storage?tag=1.0.0" /* tflock: version = ">= 1.0.0, < 2.0.0" */
}

module "local" {
  source = "./modules/net"
}
