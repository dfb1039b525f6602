# Copyright (c) Example Corp.
# SPDX-License-Identifier: Apache-2.0

# This file is maintained automatically by "tofu init".
# Manual edits may be lost in future updates.

provider "registry.opentofu.org/hashicorp/null" {
  version     = "3.2.0"
  constraints = "~> 3.0"
  hashes = [
    "h1:7MjN4eFisdTv4tlhXH5hL4QQd39Jy4baPhFxwAd/EFE=",
  ]
}

module "vpc.nested" {
  source = "git::https://example.com/vpc.git//modules/nested"
  commit = "0123456789abcdef0123456789abcdef01234567"
}
