# No diagnostics: every kind of module lock.
module "vpc" {
  version     = "3.19.0"
  source      = "registry.opentofu.org/terraform-aws-modules/vpc/aws"
  constraints = ">= 3.0.0, < 4.0.0"
  hashes = [
    "h1:7MjN4eFisdTv4tlhXH5hL4QQd39Jy4baPhFxwAd/EFE=",
  ]
}

module "vpc.nested" {
  source = "git::https://example.com/vpc.git//modules/nested"
  commit = "0123456789abcdef0123456789abcdef01234567"
  hashes = [
    "h1:DvLRiv4Pbjq3Rh0yNWtq+9dwVXqHF+bQspfhckLyFWU=",
  ]
}

module "app" {
  version = "1.0.0"
  source  = "oci://example.com/modules/app"
  digest  = "sha256:40335019c11e5bdb3780301da5197cbc756b4b5ac3d699c52583f1d34e963176"
}
