terraform {
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = "~> 5.0"
    }
    bad-source = {
      source = "not/a/valid/address" # ERROR: Invalid provider source address
    }
    legacy-addr = {
      source = "-/legacy" # ERROR: Invalid provider source address
    }
    bad-version = {
      source  = "hashicorp/bad"
      version = "=> 1.0" # ERROR: Invalid version constraint
    }
    vprefix = {
      source  = "hashicorp/vprefix"
      version = "v1.2.3" # ERROR: Invalid version constraint
    }
    extra = {
      source = "hashicorp/extra"
      region = "us-east-1" # ERROR: Invalid required_providers object
    }
    aliased = {
      source                = "hashicorp/aliased"
      configuration_aliases = [other.east] # ERROR: Invalid configuration alias
    }
    from-var = {
      source = var.source # ERROR: Variables not allowed
    }
    null-legacy = null # ERROR: Invalid required_providers entry
  }
}

terraform {
  required_providers {
    aws = "~> 4.0" # ERROR: Duplicate required provider
    aws2 = { # ERROR: Duplicate required provider
      source = "hashicorp/aws"
    }
  }
}
