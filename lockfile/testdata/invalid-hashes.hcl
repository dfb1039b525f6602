provider "registry.opentofu.org/hashicorp/null" {
  version = "3.2.0"
  hashes = [
    "h1:7MjN4eFisdTv4tlhXH5hL4QQd39Jy4baPhFxwAd/EFE=",
    "h1:not-base64!", # ERROR: Invalid provider hash string
    "zh:40335019C11E5bdb3780301da5197cbc756b4b5ac3d699c52583f1d34e963176", # ERROR: Invalid provider hash string
    "nocolon", # ERROR: Invalid provider hash string
    "zh:40335019c11e5bdb3780301da5197cbc756b4b5ac3d699c52583f1d34e963176",
  ]
}

provider "registry.opentofu.org/hashicorp/random" {
  version = "3.2.0"
  hashes  = [] # ERROR: Invalid provider hash set
}

provider "registry.opentofu.org/hashicorp/local" {
  version = "3.2.0"
  hashes  = "h1:7MjN4eFisdTv4tlhXH5hL4QQd39Jy4baPhFxwAd/EFE=" # ERROR: Invalid expression
}
