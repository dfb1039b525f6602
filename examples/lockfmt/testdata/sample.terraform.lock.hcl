# This file is maintained automatically by "tofu init".
# Manual edits may be lost in future updates.

provider "registry.opentofu.org/hashicorp/null" {
  version     = "3.2.0"
  constraints = "~> 3.0"
  hashes = [
    "h1:DvLRiv4Pbjq3Rh0yNWtq+9dwVXqHF+bQspfhckLyFWU=",
    "zh:40335019c11e5bdb3780301da5197cbc756b4b5ac3d699c52583f1d34e963176",
  ]
}

provider "registry.opentofu.org/hashicorp/random" {
  version = "3.6.0"
  hashes = [
    "h1:7MjN4eFisdTv4tlhXH5hL4QQd39Jy4baPhFxwAd/EFE=",
  ]
}

module "vpc" {
  version     = "3.19.0"
  source      = "registry.opentofu.org/terraform-aws-modules/vpc/aws"
  constraints = ">= 3.0.0, < 4.0.0"
  hashes = [
    "h1:uQv2oPjJv+ue8bPrVp+So2hHd90UTssnCNajTW554Cw=",
  ]
}
