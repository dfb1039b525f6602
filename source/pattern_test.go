package source_test

import (
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/source"
)

func TestParseProviderPattern(t *testing.T) {
	aws := source.ProviderPackage{Addr: tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/aws")}
	tfAWS := source.ProviderPackage{Addr: tfaddr.MustParseProviderSource("registry.terraform.io/hashicorp/aws")}
	corp := source.ProviderPackage{Addr: tfaddr.MustParseProviderSource("tf.example.com/awesomecorp/happycloud")}
	mod := source.ModulePackage{Source: "registry.opentofu.org/hashicorp/aws/x"}
	tests := map[string]struct {
		matches []source.Package
		misses  []source.Package
		str     string
	}{
		"hashicorp/aws":                     {matches: []source.Package{aws}, misses: []source.Package{tfAWS, corp, mod}, str: "registry.opentofu.org/hashicorp/aws"},
		"hashicorp/*":                       {matches: []source.Package{aws}, misses: []source.Package{tfAWS, corp}},
		"registry.terraform.io/hashicorp/*": {matches: []source.Package{tfAWS}, misses: []source.Package{aws}},
		"*/*/*":                             {matches: []source.Package{aws, tfAWS, corp}, misses: []source.Package{mod}},
		"TF.Example.COM/AwesomeCorp/*":      {matches: []source.Package{corp}, misses: []source.Package{aws}, str: "tf.example.com/awesomecorp/*"},
		"tf.example.com/*/*":                {matches: []source.Package{corp}, misses: []source.Package{aws}},
	}
	for in, tc := range tests {
		t.Run(in, func(t *testing.T) {
			p, err := source.ParseProviderPattern(in)
			if err != nil {
				t.Fatal(err)
			}
			for _, pkg := range tc.matches {
				if !p.Match(pkg) {
					t.Errorf("%q does not match %s", in, pkg)
				}
			}
			for _, pkg := range tc.misses {
				if p.Match(pkg) {
					t.Errorf("%q matches %s", in, pkg)
				}
			}
			if tc.str != "" && p.String() != tc.str {
				t.Errorf("String() = %q, want %q", p.String(), tc.str)
			}
		})
	}
}

func TestParseProviderPatternErrors(t *testing.T) {
	// The rules and messages are OpenTofu's ParseMultiSourceMatchingPatterns.
	for in, want := range map[string]string{
		"aws":                      `invalid provider matching pattern "aws": must have either two or three slash-separated segments`,
		"a/b/c/d":                  `invalid provider matching pattern "a/b/c/d": must have either two or three slash-separated segments`,
		"*/hashicorp/aws":          `invalid provider matching pattern "*/hashicorp/aws": hostname can be a wildcard only if both namespace and provider type are also wildcards`,
		"*/aws":                    `invalid provider matching pattern "*/aws": namespace can be a wildcard only if the provider type is also a wildcard`,
		"hashicorp/a b":            `invalid provider type "a b" in provider matching pattern "hashicorp/a b": must either be the wildcard * or a provider type name`,
		"example..com/hashicorp/a": "invalid hostname in provider matching pattern",
	} {
		_, err := source.ParseProviderPattern(in)
		if err == nil {
			t.Errorf("%q: no error", in)
			continue
		}
		if got := err.Error(); len(got) < len(want) || got[:len(want)] != want {
			t.Errorf("%q: got %q, want prefix %q", in, got, want)
		}
	}
}

func TestModulePattern(t *testing.T) {
	p, err := source.ParseModulePattern("git::https://git.example.com/*")
	if err != nil {
		t.Fatal(err)
	}
	if !p.Match(source.ModulePackage{Source: "git::https://git.example.com/acme/net.git"}) {
		t.Error("glob does not match a source under it")
	}
	if p.Match(source.ModulePackage{Source: "git::https://other.example.com/acme/net.git"}) {
		t.Error("glob matches another host")
	}
	if p.Match(source.ProviderPackage{Addr: tfaddr.MustParseProviderSource("hashicorp/aws")}) {
		t.Error("module pattern matches a provider")
	}
	if _, err := source.ParseModulePattern(""); err == nil {
		t.Error("empty module pattern accepted")
	}
	mid := must(source.ParseModulePattern("registry.opentofu.org/*/vpc/*"))
	if !mid.Match(source.ModulePackage{Source: "registry.opentofu.org/acme/vpc/aws"}) || mid.Match(source.ModulePackage{Source: "registry.opentofu.org/acme/eks/aws"}) {
		t.Error("inner wildcards misbehave")
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
