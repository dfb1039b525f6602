package lockfile_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/hashicorp/hcl/v2"
	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve/versions"
)

// Build a lock file from nothing and write it in canonical form.
func Example_generateFromScratch() {
	f := lockfile.New()
	f.SetProvider(&lockfile.ProviderLock{
		Addr:        tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/random"),
		Version:     versions.MustParse("3.6.0"),
		Constraints: "~> 3.0",
		Hashes: []hash.Hash{
			"zh:40335019c11e5bdb3780301da5197cbc756b4b5ac3d699c52583f1d34e963176",
			"h1:7MjN4eFisdTv4tlhXH5hL4QQd39Jy4baPhFxwAd/EFE=",
		},
	})
	f.SetProvider(&lockfile.ProviderLock{
		Addr:    tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/null"),
		Version: versions.MustParse("3.2.0"),
	})
	f.SetModule(&lockfile.ModuleLock{
		Path:        "vpc",
		Source:      "registry.opentofu.org/terraform-aws-modules/vpc/aws",
		Version:     versions.MustParse("3.19.0"),
		Constraints: ">= 3.0.0, < 4.0.0",
		Hashes:      []hash.Hash{"h1:DvLRiv4Pbjq3Rh0yNWtq+9dwVXqHF+bQspfhckLyFWU="},
	})
	os.Stdout.Write(f.Bytes())
	// Output:
	// # This file is maintained automatically by "tofu init".
	// # Manual edits may be lost in future updates.
	//
	// provider "registry.opentofu.org/hashicorp/null" {
	//   version = "3.2.0"
	// }
	//
	// provider "registry.opentofu.org/hashicorp/random" {
	//   version     = "3.6.0"
	//   constraints = "~> 3.0"
	//   hashes = [
	//     "h1:7MjN4eFisdTv4tlhXH5hL4QQd39Jy4baPhFxwAd/EFE=",
	//     "zh:40335019c11e5bdb3780301da5197cbc756b4b5ac3d699c52583f1d34e963176",
	//   ]
	// }
	//
	// module "vpc" {
	//   version     = "3.19.0"
	//   source      = "registry.opentofu.org/terraform-aws-modules/vpc/aws"
	//   constraints = ">= 3.0.0, < 4.0.0"
	//   hashes = [
	//     "h1:DvLRiv4Pbjq3Rh0yNWtq+9dwVXqHF+bQspfhckLyFWU=",
	//   ]
	// }
}

// Strict parsing reports each fault with OpenTofu's summary and a
// suggestion.
func ExampleParse_diagnostics() {
	src := []byte(`provider "hashicorp/aws" {
  version = "5.0.0"
}

provider "registry.opentofu.org/hashicorp/null" {
  version = "v3.2"
}
`)
	_, err := lockfile.Parse(src, ".terraform.lock.hcl")
	var pe *lockfile.ParseError
	if errors.As(err, &pe) {
		for _, d := range pe.Diagnostics {
			fmt.Printf("%s: %s\n  %s\n", d.Subject, d.Summary, d.Detail)
		}
	}
	// Output:
	// .terraform.lock.hcl:1,10-25: Non-normalized provider source address
	//   The provider source address for this provider lock must be written as "registry.opentofu.org/hashicorp/aws", the fully-qualified and normalized form.
	// .terraform.lock.hcl:6,13-19: Invalid provider version number
	//   The selected version number for provider registry.opentofu.org/hashicorp/null must be written in normalized form: "3.2.0".
}

// Report what changed between two versions of a lock file.
func ExampleChanges() {
	old, _ := lockfile.Parse([]byte(`
provider "registry.opentofu.org/hashicorp/null" {
  version = "3.2.0"
}
`), "old")
	new := old.Clone()
	new.Provider(tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/null")).Version = versions.MustParse("3.2.1")
	new.SetModule(&lockfile.ModuleLock{Path: "vpc", Source: "registry.opentofu.org/a/vpc/aws", Version: versions.MustParse("1.0.0")})
	fmt.Print(lockfile.Summary(lockfile.Changes(old, new)))
	// Output:
	// - registry.opentofu.org/hashicorp/null: upgraded 3.2.0 to 3.2.1
	// - module "vpc": added 1.0.0
	//
	// OpenTofu has made some changes to the provider and module dependency selections
	// recorded in the .terraform.lock.hcl file. Review those changes and commit them to your
	// version control system if they represent changes you intended to make.
}

// A bot bumps a version and keeps the file's comments.
func ExamplePatch() {
	src := []byte(`# Pinned for the 2024 audit.
provider "registry.opentofu.org/hashicorp/null" {
  version = "3.2.0" # bump with care
}
`)
	f, _ := lockfile.Parse(src, "x")
	f.Provider(tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/null")).Version = versions.MustParse("3.2.1")
	out, _ := lockfile.Patch(src, "x", f)
	os.Stdout.Write(out)
	// Output:
	// # Pinned for the 2024 audit.
	// provider "registry.opentofu.org/hashicorp/null" {
	//   version = "3.2.1" # bump with care
	// }
}

// A lenient parse keeps what a newer format adds, with a warning.
func ExampleParseOptions_lenient() {
	src := []byte(`provider "registry.opentofu.org/hashicorp/null" {
  version = "3.2.0"
  signed_by = "ABCDEF"
}
`)
	f, err := lockfile.ParseOptions{Lenient: true}.Parse(src, "x")
	fmt.Println(err)
	for _, w := range f.Warnings() {
		fmt.Println(w.Severity == hcl.DiagWarning, w.Summary)
	}
	os.Stdout.Write(f.Bytes())
	// Output:
	// <nil>
	// true Unsupported argument
	// # This file is maintained automatically by "tofu init".
	// # Manual edits may be lost in future updates.
	//
	// provider "registry.opentofu.org/hashicorp/null" {
	//   version   = "3.2.0"
	//   signed_by = "ABCDEF"
	// }
}

// Recover the module locks that OpenTofu 1.12 dropped when it rewrote a
// lock file: merge the file it wrote with the one before.
func ExampleMerge() {
	before, _ := lockfile.Parse([]byte(`
provider "registry.opentofu.org/hashicorp/null" {
  version = "3.2.0"
}

module "vpc" {
  version = "3.19.0"
  source  = "registry.opentofu.org/terraform-aws-modules/vpc/aws"
}
`), "before")
	writtenByTofu, _ := lockfile.Parse([]byte(`
provider "registry.opentofu.org/hashicorp/null" {
  version = "3.2.1"
}
`), "after")
	os.Stdout.Write(lockfile.Merge(writtenByTofu, before).Bytes())
	// Output:
	// # This file is maintained automatically by "tofu init".
	// # Manual edits may be lost in future updates.
	//
	// provider "registry.opentofu.org/hashicorp/null" {
	//   version = "3.2.1"
	// }
	//
	// module "vpc" {
	//   version = "3.19.0"
	//   source  = "registry.opentofu.org/terraform-aws-modules/vpc/aws"
	// }
}
