package resolve_test

import (
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/source/address"
)

func TestParseProviderSource(t *testing.T) {
	for _, tc := range []struct{ in, host, want string }{
		{"hashicorp/aws", "", "registry.opentofu.org/hashicorp/aws"},
		{"aws", "", "registry.opentofu.org/hashicorp/aws"},
		{"HashiCorp/AWS", "", "registry.opentofu.org/hashicorp/aws"},
		{"hashicorp/aws", "mirror.example", "mirror.example/hashicorp/aws"},
		{"registry.terraform.io/hashicorp/aws", "", "registry.terraform.io/hashicorp/aws"},
		{"Example.COM/acme/widget", "", "example.com/acme/widget"},
		{"-/aws", "", ""},
		{"registry.terraform.io/-/aws", "", ""},
		{"a/b/c/d", "", ""},
		{"hashicorp/terraform-provider-aws", "", ""},
		{"", "", ""},
	} {
		p, err := resolve.ParseProviderSource(tc.in, tc.host)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("ParseProviderSource(%q) = %v, want an error", tc.in, p)
		case tc.want != "" && err != nil:
			t.Errorf("ParseProviderSource(%q): %v", tc.in, err)
		case tc.want != "" && p.String() != tc.want:
			t.Errorf("ParseProviderSource(%q) = %v, want %s", tc.in, p, tc.want)
		}
	}
}

func TestClassifyModuleSource(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want resolve.ModuleSourceKind
	}{
		{"./app", resolve.ModuleSourceLocal},
		{"../common", resolve.ModuleSourceLocal},
		{`.\win`, resolve.ModuleSourceLocal},
		{"terraform-aws-modules/vpc/aws", resolve.ModuleSourceRegistry},
		{"terraform-aws-modules/vpc/aws//modules/sub", resolve.ModuleSourceRegistry},
		{"registry.opentofu.org/terraform-aws-modules/vpc/aws", resolve.ModuleSourceRegistry},
		{"github.com/hashicorp/example", resolve.ModuleSourceRemote},
		{"github.com/hashicorp/example/sub", resolve.ModuleSourceRemote},
		{"bitbucket.org/org/repo", resolve.ModuleSourceRemote},
		{"git::https://example.com/x.git", resolve.ModuleSourceRemote},
		{"git@github.com:org/repo.git", resolve.ModuleSourceRemote},
		{"https://example.com/x.zip", resolve.ModuleSourceRemote},
		{"oci://example.com/repo/mod", resolve.ModuleSourceRemote},
		{"s3::https://s3.amazonaws.com/bucket/x.zip", resolve.ModuleSourceRemote},
		{"ns/name/sys?ref=v1", resolve.ModuleSourceRemote},
		{"ns/name", resolve.ModuleSourceRemote},
		{"-ns/name/sys", resolve.ModuleSourceRemote},
		{"", resolve.ModuleSourceRemote},
	} {
		if got := resolve.ClassifyModuleSource(tc.in); got != tc.want {
			t.Errorf("ClassifyModuleSource(%q) = %v, want %v", tc.in, got, tc.want)
		}
		// The parsed address is classified the same, whatever the
		// default registry host.
		if ms, err := address.ParseModuleSourceWith(tc.in, address.Options{DefaultRegistryHost: "registry.example.test"}); err == nil {
			if got := resolve.ClassifyModuleAddress(ms); got != tc.want {
				t.Errorf("ClassifyModuleAddress(%q) = %v, want %v", tc.in, got, tc.want)
			}
		}
	}
}

func TestProviderRequirementsSkipsZero(t *testing.T) {
	reqs := resolve.ProviderRequirements([]tfaddr.Provider{{}, tfaddr.MustParseProviderSource("a/b"), tfaddr.MustParseProviderSource("a/b")}, resolve.Origin{})
	if len(reqs) != 1 || reqs[0].String() != "caller requires registry.terraform.io/a/b any version" {
		t.Errorf("got %q", reqs)
	}
	if s := (resolve.Requirement{}).String(); s != "caller requires <no package> any version" {
		t.Errorf("zero requirement: %q", s)
	}
}
