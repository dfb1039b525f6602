terraform {
  required_providers {
    aws = {
      source "hashicorp/aws" # ERROR: Missing key/value separator
    }
  }
}
