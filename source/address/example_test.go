package address_test

import (
	"fmt"

	"github.com/tflock/tflock/source/address"
)

func ExampleParseModuleSource() {
	for _, s := range []string{
		"./modules/vpc",
		"terraform-aws-modules/vpc/aws//modules/endpoints",
		"github.com/org/infra/modules/vpc?ref=v1.4.0",
		"oci://example.com/modules/vpc?tag=1.4.0",
	} {
		src, err := address.ParseModuleSource(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%s\n  package %q, lock source %q\n", src, src.Package(), src.LockSource())
	}
	// Output:
	// ./modules/vpc
	//   package "", lock source ""
	// registry.opentofu.org/terraform-aws-modules/vpc/aws//modules/endpoints
	//   package "registry.opentofu.org/terraform-aws-modules/vpc/aws", lock source "registry.opentofu.org/terraform-aws-modules/vpc/aws//modules/endpoints"
	// git::https://github.com/org/infra.git//modules/vpc?ref=v1.4.0
	//   package "git::https://github.com/org/infra.git", lock source "git::https://github.com/org/infra.git//modules/vpc"
	// oci://example.com/modules/vpc?tag=1.4.0
	//   package "oci://example.com/modules/vpc", lock source "oci://example.com/modules/vpc"
}

func ExampleRemote() {
	r, err := address.ParseRemote("git@example.com:org/vpc.git//modules/a?ref=v2.0.0&depth=1")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Kind, r.URL, r.Ref, r.Depth, r.Subdir)
	// Output:
	// git ssh://git@example.com/org/vpc.git v2.0.0 1 modules/a
}

func ExampleParseProviderSource() {
	p, err := address.ParseProviderSource("hashicorp/aws")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Kind(), p, p.ForDisplay())
	// Output:
	// provider registry.opentofu.org/hashicorp/aws hashicorp/aws
}
