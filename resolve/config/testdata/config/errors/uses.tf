resource "aws_instance" "a" { # WARNING: Provider without a required_providers entry
}

resource "x" "b" {
  provider = "aws" # ERROR: Invalid provider reference
}

provider "google" { # WARNING: Provider without a required_providers entry
  version = "=> 1" # ERROR: Invalid version constraint
}

data "terraform_remote_state" "s" {
}

resource "Bad!type_thing" "c" { # ERROR: Invalid provider local name
}
