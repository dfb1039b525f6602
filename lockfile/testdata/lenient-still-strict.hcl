# Lenient parsing still rejects what OpenTofu rejects.
provider "registry.opentofu.org/hashicorp/null" {
  version = "3.2" # ERROR: Invalid provider version number
  hashes = [
    "nocolon", # ERROR: Invalid provider hash string
  ]
}
