provider "registry.opentofu.org/hashicorp/null" {
  version = "3.2.0"
  future  = "x" # ERROR: Unsupported argument
  hashes = [
    "h1:invalid", # ERROR: Invalid provider hash string
  ]
}

doodad "x" { # ERROR: Unsupported block type
  a = 1
}
