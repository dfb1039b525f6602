# Module blocks in the RFC forms (see testdata/rfc/README.md) that are invalid, or
# valid there but not mappable onto tflock's model (strict parse).
module "mixed" {
  source  = "git::https://example.com/foo.git"
  package = "git::https://example.com/foo.git?ref=5632352e8042c13b2da684ad5895525f2aeb0f98"
  commit  = "5632352e8042c13b2da684ad5895525f2aeb0f98" # ERROR: Mixed module lock forms
}

module "other_repo" {
  source  = "git::https://example.com/foo.git"
  package = "git::https://example.com/bar.git?ref=5632352e8042c13b2da684ad5895525f2aeb0f98" # ERROR: Invalid module package address
}

module "branch_package" {
  source  = "git::https://example.com/foo.git"
  package = "git::https://example.com/foo.git?ref=main" # ERROR: Invalid module package address
}

module "floating_package" {
  source   = "git::https://example.com/foo.git"
  floating = true
  package  = "git::https://example.com/foo.git?ref=5632352e8042c13b2da684ad5895525f2aeb0f98" # ERROR: Invalid module package address
}

module "floating_hashes" {
  source   = "https://example.com/package.tar.gz"
  floating = true
  hashes   = ["h1:7MjN4eFisdTv4tlhXH5hL4QQd39Jy4baPhFxwAd/EFE="] # ERROR: Invalid module hash set
}

module "not_floating" { # ERROR: Missing required argument
  source   = "git::https://example.com/foo.git"
  floating = false
}

module "wrong_registry" {
  source  = "example.com/acme/vpc/aws"
  package = "registry::example.com/acme/subnet/aws@1.0.0" # ERROR: Invalid module package address
}

module "registry_no_version" {
  source  = "example.com/acme/vpc/aws"
  package = "registry::example.com/acme/vpc/aws" # ERROR: Invalid module package address
}

module "registry_bad_version" {
  source  = "example.com/acme/vpc/aws"
  package = "registry::example.com/acme/vpc/aws@v1.0" # ERROR: Invalid module package address
}

module "local" {
  source  = "./modules/local" # ERROR: Invalid module source address
  package = "git::https://example.com/foo.git?ref=5632352e8042c13b2da684ad5895525f2aeb0f98"
}

module "delegated" {
  source  = "example.com/acme/vpc/aws"
  package = "git::https://example.com/vpc.git?ref=5632352e8042c13b2da684ad5895525f2aeb0f98" # ERROR: Unsupported module lock
}

module "s3" {
  source  = "s3::https://s3.example.com/bucket/vpc.zip"
  package = "s3::https://s3.example.com/bucket/vpc.zip?version=3" # ERROR: Invalid module package address
}

module "hg" {
  source  = "hg::https://example.com/repo"
  package = "hg::https://example.com/repo?ref=0123456789ab" # ERROR: Unsupported module lock
}

module "bad.call-path!" { # ERROR: Invalid module call path
  source   = "https://example.com/package.tar.gz"
  floating = true
}

module "REGISTRY.example.com/acme/vpc/aws" { # ERROR: Invalid module source address
  version = "3.19.0"
}

module "terraform-aws-modules/vpc/aws" { # ERROR: Invalid module source address
  version = "3.19.0"
}

module "git::https://example.com/foo.git" { # ERROR: Invalid module source address
  version = "3.19.0"
}

module "example.com/acme/vpc/aws" { # ERROR: Missing required argument
  constraints = "~> 3.0"
}

module "example.com/acme/vpc/aws:1.0.0" {
  version = "1.0.1" # ERROR: Invalid module version number
}

module "example.com/acme/vpc/aws:1.0" { # ERROR: Invalid module source address
}

module "example.com/acme/unknown/aws" {
  version = "1.0.0"
  commit  = "5632352e8042c13b2da684ad5895525f2aeb0f98" # ERROR: Unsupported argument
}

module "example.com/acme/dup/aws" { # WARNING: Module lock in RFC form
  version = "1.0.0"
}

module "example.com/acme/dup/aws" { # ERROR: Duplicate module lock
  version = "1.0.0"
}
