terraform {
  required_version = ">= 1.6"

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = "~> 5.0"
    }
    legacy = "~> 1.0"
    widget = {
      source                = "Example.COM/acme/widget"
      configuration_aliases = [widget.east, widget.west]
    }
  }
}

provider "google" {
  version = ">= 4.0"
}

resource "random_id" "x" {
  byte_length = 8
}

resource "aws_instance" "web" {
  provider = aws.west
}

data "terraform_remote_state" "net" {
  backend = "local"
}

module "app" {
  source = "./modules/app"
  providers = {
    aws = aws.west
  }
}

module "vpc" {
  source  = "terraform-aws-modules/vpc/aws"
  version = "~> 3.0"
}

module "net" {
  source = "git::https://example.com/net.git?ref=v1.2.0"
}

module "archive" {
  source = "https://example.com/archive.zip"
}
