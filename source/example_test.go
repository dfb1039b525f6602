package source_test

import (
	"context"
	"fmt"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/sourcetest"
)

// A local mirror for one namespace in front of a registry, as in a
// provider_installation block, and memoized so each package is listed once.
func ExampleMulti() {
	null := tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/null")
	linux := source.Platform{OS: "linux", Arch: "amd64"}
	local := &sourcetest.Static{Name: "local", Providers: []sourcetest.StaticProvider{
		{Addr: null, Version: versions.MustParse("3.2.0"), Platform: linux, Files: map[string]string{"terraform-provider-null": "local build"}},
	}}
	registry := &sourcetest.Static{Name: "registry", Providers: []sourcetest.StaticProvider{
		{Addr: null, Version: versions.MustParse("3.1.0"), Platform: linux, Files: map[string]string{"terraform-provider-null": "3.1.0"}},
		{Addr: null, Version: versions.MustParse("3.2.0"), Platform: linux, Files: map[string]string{"terraform-provider-null": "3.2.0"}},
	}}
	src := source.Memoize(source.Multi(
		source.Selector{Source: local, Include: []source.Pattern{source.MustParseProviderPattern("hashicorp/*")}},
		registry,
	))

	list, err := src.Versions(context.Background(), source.ProviderPackage{Addr: null})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, a := range list {
		fmt.Println(a.Version, a.Platforms)
	}
	// Output:
	// 3.1.0 [linux_amd64]
	// 3.2.0 [linux_amd64]
}

func ExampleParseProviderPattern() {
	p, err := source.ParseProviderPattern("hashicorp/*")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p)
	fmt.Println(p.Match(source.ProviderPackage{Addr: tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/aws")}))
	fmt.Println(p.Match(source.ProviderPackage{Addr: tfaddr.MustParseProviderSource("registry.terraform.io/hashicorp/aws")}))

	_, err = source.ParseProviderPattern("*/aws")
	fmt.Println(err)
	// Output:
	// registry.opentofu.org/hashicorp/*
	// true
	// false
	// invalid provider matching pattern "*/aws": namespace can be a wildcard only if the provider type is also a wildcard
}
