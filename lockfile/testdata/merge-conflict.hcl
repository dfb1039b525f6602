# This file is maintained automatically by "tofu init".
# Manual edits may be lost in future updates.

provider "registry.opentofu.org/hashicorp/null" {
<<<<<<< HEAD # ERROR: Unresolved merge conflict
  version = "3.2.0"
||||||| base # ERROR: Unresolved merge conflict
  version = "3.1.0"
======= # ERROR: Unresolved merge conflict
  version = "3.2.1"
>>>>>>> feature # ERROR: Unresolved merge conflict
}
