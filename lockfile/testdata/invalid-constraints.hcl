provider "registry.opentofu.org/hashicorp/null" {
  version     = "3.2.0"
  constraints = ">=3.0.0" # ERROR: Invalid provider version constraints
}

provider "registry.opentofu.org/hashicorp/random" {
  version     = "3.2.0"
  constraints = "~> bananas" # ERROR: Invalid provider version constraints
}

provider "registry.opentofu.org/hashicorp/local" {
  version     = "3.2.0"
  constraints = ">= 1.0.0, < 4.0.0"
}

provider "registry.opentofu.org/hashicorp/time" {
  version     = "3.2.0"
  constraints = null # ERROR: Invalid provider version constraints
}
