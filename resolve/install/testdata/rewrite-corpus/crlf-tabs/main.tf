# Network stack (CRLF line endings, tabs).
terraform {
	required_version = ">= 1.6"
}

/* The VPC comes from git;
   tflock manages its ref. */
module "vpc" {
	# tflock: version = "~> 1.0"
	source	= "git::https://git.example.test/acme/network.git?ref=v1.0.0" # the ref is written by tflock
	name   = "main"	// trailing
}

module "edge" { source = "git::https://git.example.test/acme/network.git?ref=v1.0.0" /* tflock: version = ">= 1.0.0, < 2.0.0" */ }

module "store" {
	source = "oci://oci.example.test/modules/storage?" // tflock: version = ">= 1.0.0, < 2.0.0"
}

module "pinned" {
	# an ordinary comment: this call is pinned by hand
	source = "git::https://git.example.test/acme/network.git?ref=v1.0.0"
}
