# Lenient: RFC-form module blocks (see testdata/rfc/README.md) that tflock's model
# cannot hold are kept whole, as unknown blocks, with a warning; unknown
# arguments in them are kept too.
module "delegated" {
  source  = "example.com/acme/vpc/aws"
  package = "git::https://example.com/vpc.git?ref=5632352e8042c13b2da684ad5895525f2aeb0f98" # WARNING: Unsupported module lock
}

module "hg" {
  source  = "hg::https://example.com/repo"
  package = "hg::https://example.com/repo?ref=0123456789ab" # WARNING: Unsupported module lock
}

module "example.com/acme/vpc/aws" { # WARNING: Module lock in RFC form
  version = "1.0.0"
  future  = "x" # WARNING: Unsupported argument
}

module "app" { # WARNING: Module lock in RFC form
  source  = "git::https://example.com/app.git"
  package = "git::https://example.com/app.git?ref=5632352e8042c13b2da684ad5895525f2aeb0f98"
  future  = "y" # WARNING: Unsupported argument
}
