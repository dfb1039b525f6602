module "local_versioned" {
  source  = "./child"
  version = "1.0.0" # ERROR: Invalid version argument
}

module "pinned_versioned" {
  source  = "git::https://example.com/x.git?ref=v1.0.0"
  version = "1.0.0" # ERROR: Invalid version argument
}

module "no_source" { # ERROR: Missing required argument
}

module "bad_version" {
  source  = "acme/x/aws"
  version = "~> 1.0 || 2.0" # ERROR: Invalid version constraint
}

module "dup" {
  source = "acme/dup/aws"
}

module "dup" { # ERROR: Duplicate module call
  source = "acme/dup/aws"
}

module "double_ref" {
  source = "git::https://example.com/y.git?ref=a&ref=b" # ERROR: Invalid module source address
}

module "expr_source" {
  source = local.src # ERROR: Reference to undeclared local value
}

module "archive_versioned" {
  source  = "https://example.com/modules/net.zip"
  version = "~> 1.0" # ERROR: Invalid version argument
}
