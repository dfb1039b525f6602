# No errors: module locks in the form of OpenTofu's module-locking RFC,
# pull request #4071 (see testdata/rfc/README.md), keyed by call path, with
# "package" (the immutable package address) or "floating".
module "foo.bar.baz" { # WARNING: Module lock in RFC form
  source      = "git::https://example.com/foo.git//subdir"
  package     = "git::https://example.com/foo.git?ref=5632352e8042c13b2da684ad5895525f2aeb0f98"
  hashes = [
    "h1:7MjN4eFisdTv4tlhXH5hL4QQd39Jy4baPhFxwAd/EFE=",
  ]
}

module "vpc" { # WARNING: Module lock in RFC form
  source      = "example.com/terraform-aws-modules/vpc/aws"
  constraints = "~> 1.0.0"
  package     = "registry::example.com/terraform-aws-modules/vpc/aws@1.0.4"
  hashes      = ["h1:DvLRiv4Pbjq3Rh0yNWtq+9dwVXqHF+bQspfhckLyFWU="]
}

module "pinned" { # WARNING: Module lock in RFC form
  source  = "git::https://example.com/foo.git?ref=v1.2.0"
  package = "git::https://example.com/foo.git?ref=0123456789abcdef0123456789abcdef01234567"
}

module "app" { # WARNING: Module lock in RFC form
  source  = "oci://example.com/modules/app?tag=1.2.0"
  package = "oci://example.com/modules/app?digest=sha256:40335019c11e5bdb3780301da5197cbc756b4b5ac3d699c52583f1d34e963176"
}

module "archive" { # WARNING: Module lock in RFC form
  source   = "https://example.com/package.tar.gz//subdir"
  floating = true
}

module "checksummed" { # WARNING: Module lock in RFC form
  source  = "https://example.com/vpc.zip//modules/vpc?checksum=sha256:40335019c11e5bdb3780301da5197cbc756b4b5ac3d699c52583f1d34e963176"
  package = "https://example.com/vpc.zip?checksum=sha256:40335019c11e5bdb3780301da5197cbc756b4b5ac3d699c52583f1d34e963176"
  hashes  = ["h1:7MjN4eFisdTv4tlhXH5hL4QQd39Jy4baPhFxwAd/EFE="]
}
