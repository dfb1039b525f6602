provider "registry.opentofu.org/hashicorp/null" {
  version = "3.2.0"
  future  = "x" # WARNING: Unsupported argument
  hashes = [
    "h1:invalid", # WARNING: Invalid provider hash string
  ]
}

doodad "x" { # WARNING: Unsupported block type
  a = 1
}
