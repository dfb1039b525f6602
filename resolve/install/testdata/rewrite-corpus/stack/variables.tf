variable "regions" {
  type    = set(string)
  default = ["east", "west"]
}

locals {
  # tflock: version = "~> 1.0" -- in a locals block: reported, not read
  prefix = "demo"
}
