terraform {
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = "< 6.0.0"
    }
  }
}

module "vpc" {
  source  = "registry.opentofu.org/terraform-aws-modules/vpc/aws"
  version = ">= 3.0"
}
