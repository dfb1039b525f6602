# No errors: module locks in the form of OpenTofu's module-locking RFC,
# pull request #3540 (see testdata/rfc/README.md), keyed by registry source address.
provider "registry.opentofu.org/hashicorp/aws" {
  version = "5.31.0"
}

module "registry.opentofu.org/terraform-aws-modules/vpc/aws" { # WARNING: Module lock in RFC form
  version     = "3.19.0"
  constraints = ">= 3.0.0, < 4.0.0"

  hashes = [
    "h1:7MjN4eFisdTv4tlhXH5hL4QQd39Jy4baPhFxwAd/EFE=",
    "zh:40335019c11e5bdb3780301da5197cbc756b4b5ac3d699c52583f1d34e963176",
  ]
}

# The PR's open question 2: one source at two versions, as two blocks with
# the same label (option a) or with the version in the label (option b).
module "registry.opentofu.org/terraform-aws-modules/vpc/aws" { # WARNING: Module lock in RFC form
  version     = "5.1.0"
  constraints = "~> 5.0"
}

module "example.com/acme/network/aws:2.0.0" { # WARNING: Module lock in RFC form
  hashes = ["h1:DvLRiv4Pbjq3Rh0yNWtq+9dwVXqHF+bQspfhckLyFWU="]
}
