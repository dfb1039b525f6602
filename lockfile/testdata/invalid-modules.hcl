module "vpc" {
  version     = "3.19.0"
  source      = "registry.opentofu.org/terraform-aws-modules/vpc/aws"
  constraints = ">= 3.0.0, < 4.0.0"
  hashes = [
    "h1:7MjN4eFisdTv4tlhXH5hL4QQd39Jy4baPhFxwAd/EFE=",
  ]
}

module "vpc" { # ERROR: Duplicate module lock
  source = "registry.opentofu.org/terraform-aws-modules/vpc/aws"
}

module "vpc..nested" { # ERROR: Invalid module call path
  source = "registry.opentofu.org/a/b/c"
}

module "v1" {
  version = "v1.2.0" # ERROR: Invalid module version number
  source  = "registry.opentofu.org/a/b/c"
}

module "v2" { # ERROR: Missing required argument
  version = "1.2.0"
}

module "local" {
  source = "./modules/local" # ERROR: Invalid module source address
}

module "git" {
  source = "git::https://example.com/repo.git"
  commit = "abc123" # ERROR: Invalid module commit
}

module "oci" {
  source = "oci://example.com/repo"
  digest = "sha256:ABCDEF" # ERROR: Invalid module digest
}

module "hashes" {
  source = "registry.opentofu.org/a/b/c"
  hashes = [] # ERROR: Invalid module hash set
}

module "badhash" {
  source = "registry.opentofu.org/a/b/c"
  hashes = [
    "h1:7MjN4eFisdTv4tlhXH5hL4QQd39Jy4baPhFxwAd/EFE=",
    "h1:short", # ERROR: Invalid module hash string
  ]
}

module "nullversion" {
  version = null # ERROR: Invalid module version number
  source  = "registry.opentofu.org/a/b/c"
}

module "subdir_up" {
  source = "registry.opentofu.org/a/b/c"
  subdir = "../evil" # ERROR: Invalid module subdirectory
}

module "subdir_unclean" {
  source = "registry.opentofu.org/a/b/c"
  subdir = "modules/./good" # ERROR: Invalid module subdirectory
}

module "subdir_rooted" {
  source = "registry.opentofu.org/a/b/c"
  subdir = "/modules/good" # ERROR: Invalid module subdirectory
}

module "subdir_empty" {
  source = "registry.opentofu.org/a/b/c"
  subdir = "" # ERROR: Invalid module subdirectory
}
