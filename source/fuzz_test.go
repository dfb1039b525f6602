package source_test

import (
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/source"
)

// FuzzParseProviderPattern checks that parsing never panics, that a parsed
// pattern's String parses back to the same pattern, and that matching is
// total.
func FuzzParseProviderPattern(f *testing.F) {
	f.Add("hashicorp/aws")
	f.Add("*/*/*")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := source.ParseProviderPattern(s)
		if err != nil {
			return
		}
		q, err := source.ParseProviderPattern(p.String())
		if err != nil || q != p {
			t.Fatalf("%q: String %q parses to %v, %v", s, p.String(), q, err)
		}
		p.Match(source.ProviderPackage{Addr: tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/aws")})
		p.Match(source.ProviderPackage{})
		p.Match(source.ModulePackage{Source: s})
	})
}

// FuzzModulePattern checks that glob matching never panics and that a
// pattern always matches itself when it has no wildcard.
func FuzzModulePattern(f *testing.F) {
	f.Add("git::https://example.com/*", "git::https://example.com/a/b")
	f.Add("a*b*c", "aXbYc")
	f.Fuzz(func(t *testing.T, glob, s string) {
		p, err := source.ParseModulePattern(glob)
		if err != nil {
			return
		}
		p.Match(source.ModulePackage{Source: s})
		if !p.Match(source.ModulePackage{Source: glob}) {
			t.Fatalf("%q does not match itself", glob)
		}
	})
}
