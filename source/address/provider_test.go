package address

import (
	"errors"
	"strings"
	"testing"
)

func TestParseProviderSource(t *testing.T) {
	tests := map[string]struct {
		kind    ProviderKind
		str     string
		display string
	}{
		"hashicorp/aws":                  {ProviderRegular, "registry.opentofu.org/hashicorp/aws", "hashicorp/aws"},
		"HashiCorp/AWS":                  {ProviderRegular, "registry.opentofu.org/hashicorp/aws", "hashicorp/aws"},
		"registry.opentofu.org/a/b":      {ProviderRegular, "registry.opentofu.org/a/b", "a/b"},
		"registry.terraform.io/a/b":      {ProviderRegular, "registry.terraform.io/a/b", "registry.terraform.io/a/b"},
		"example.com/ns/type":            {ProviderRegular, "example.com/ns/type", "example.com/ns/type"},
		"terraform.io/builtin/terraform": {ProviderBuiltin, "terraform.io/builtin/terraform", "terraform.io/builtin/terraform"},
		"-/aws":                          {ProviderLegacy, "registry.opentofu.org/-/aws", "-/aws"},
		// A bare type is in the "hashicorp" namespace, as in a
		// required_providers source.
		"aws":       {ProviderRegular, "registry.opentofu.org/hashicorp/aws", "hashicorp/aws"},
		"terraform": {ProviderRegular, "registry.opentofu.org/hashicorp/terraform", "hashicorp/terraform"},
	}
	for in, want := range tests {
		t.Run(in, func(t *testing.T) {
			p, err := ParseProviderSource(in)
			if err != nil {
				t.Fatal(err)
			}
			if p.Kind() != want.kind || p.String() != want.str || p.ForDisplay() != want.display {
				t.Errorf("got (%s, %s, %s), want (%s, %s, %s)", p.Kind(), p, p.ForDisplay(), want.kind, want.str, want.display)
			}
		})
	}
}

func TestParseProviderSourceErrors(t *testing.T) {
	tests := map[string]string{
		"my_org/aws":                       "Invalid provider namespace",
		"example.com/ns/opentofu-aws":      "redundant",
		"":                                 "invalid provider source",
		"a/b/c/d":                          "invalid provider source",
		"hashicorp/terraform-provider-aws": "Did you mean",
		"example.com/-/aws":                "legacy provider namespace",
	}
	for in, want := range tests {
		_, err := ParseProviderSource(in)
		var pe *ParseError
		if err == nil || !errors.As(err, &pe) || pe.Kind != "provider" || !strings.Contains(err.Error(), want) || !errors.Is(err, ErrInvalidProvider) {
			t.Errorf("ParseProviderSource(%q) error = %v, want a provider *ParseError containing %q", in, err, want)
		}
	}
}

func TestProviderZero(t *testing.T) {
	var p Provider
	if p.String() != "" || p.ForDisplay() != "" {
		t.Error("zero Provider must print as empty")
	}
}
