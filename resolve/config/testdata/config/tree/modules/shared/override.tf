terraform {
  required_providers {
    aws = {
      version = "!= 5.5.0"
    }
  }
}

module "vpc" {
  version = "3.19.0"
}
