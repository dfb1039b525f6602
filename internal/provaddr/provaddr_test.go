package provaddr_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tflock/tflock/internal/provaddr"
	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/source/address"
	"github.com/tflock/tflock/source/cliconfig"
)

const def = provaddr.DefaultRegistryHost

// parseCases are the provider source addresses of OpenTofu v1.12.6's
// addrs.TestParseProviderSourceStr and of the OpenTofu registry-address
// library's TestParseProviderSource (the version OpenTofu 1.12.6 pins),
// with the address OpenTofu's ParseProviderSourceString gives ("" for an
// error), followed by cases this project's bug reports named.
var parseCases = []struct {
	in, want string
}{
	// OpenTofu addrs.TestParseProviderSourceStr.
	{def + "/hashicorp/aws", def + "/hashicorp/aws"},
	{def + "/HashiCorp/AWS", def + "/hashicorp/aws"},
	{"hashicorp/aws", def + "/hashicorp/aws"},
	{"HashiCorp/AWS", def + "/hashicorp/aws"},
	{"aws", def + "/hashicorp/aws"},
	{"AWS", def + "/hashicorp/aws"},
	{"example.com/foo-bar/baz-boop", "example.com/foo-bar/baz-boop"},
	{"foo-bar/baz-boop", def + "/foo-bar/baz-boop"},
	{"localhost:8080/foo/bar", "localhost:8080/foo/bar"},
	{"example.com/too/many/parts/here", ""},
	{"/too///many//slashes", ""},
	{"///", ""},
	{"/ / /", ""},
	{"badhost!/hashicorp/aws", ""},
	{"example.com/badnamespace!/aws", ""},
	{"example.com/bad--namespace/aws", ""},
	{"example.com/-badnamespace/aws", ""},
	{"example.com/badnamespace-/aws", ""},
	{"example.com/bad.namespace/aws", ""},
	{"example.com/hashicorp/badtype!", ""},
	{"example.com/hashicorp/bad--type", ""},
	{"example.com/hashicorp/-badtype", ""},
	{"example.com/hashicorp/badtype-", ""},
	{"example.com/hashicorp/bad.type", ""},
	{"example.com/hashicorp/terraform-provider-bad", ""},
	{"example.com/hashicorp/terraform-bad", ""},
	// registry-address TestParseProviderSource, beyond the above.
	{"opentofu.org/builtin/opentofu", "opentofu.org/builtin/opentofu"},
	{"terraform.io/builtin/terraform", "terraform.io/builtin/terraform"},
	{"terraform", def + "/hashicorp/terraform"},
	{"example.com/opentofu/opentofu-provider-bad", ""},
	{"example.com/opentofu/opentofu-bad", ""},
	{"example.com/opentofu/terraform-provider-bad", ""},
	{"example.com/opentofu/terraform-bad", ""},
	// Named by the bug reports and checked against OpenTofu 1.12.6's
	// parser: underscores are not valid in a namespace, a bare type is not
	// checked for the redundant prefixes, hosts may carry a port, the
	// legacy namespace is only valid on the default host.
	{"my_org/aws", ""},
	{"registry.terraform.io/my_org/aws", ""},
	{"hashicorp/google_beta", ""},
	{"terraform-provider-aws", def + "/hashicorp/terraform-provider-aws"},
	{"hashicorp/terraform-provider-aws", ""},
	{"opentofu-aws", def + "/hashicorp/opentofu-aws"},
	{"127.0.0.1:8080/foo/bar", "127.0.0.1:8080/foo/bar"},
	{"EXAMPLE.com:443/Foo/Bar", "example.com/foo/bar"}, // the HTTPS port is dropped
	{"registry.terraform.io/hashicorp/aws", "registry.terraform.io/hashicorp/aws"},
	{"-/aws", def + "/-/aws"},
	{def + "/-/aws", def + "/-/aws"},
	{"example.com/-/aws", ""},
	{"Испытание/aws", def + "/испытание/aws"},
	{"xn--80akhbyknj4f/aws", ""},
	{"", ""},
	{"a//b", ""},
	{"a/b/", ""},
	{" hashicorp/aws", ""},
	{"hashicorp/*", ""},
	{"\xff/aws", ""},
}

func TestParse(t *testing.T) {
	for _, c := range parseCases {
		got, err := provaddr.Parse(c.in, "")
		switch {
		case c.want == "" && err == nil:
			t.Errorf("Parse(%q) = %s, want an error", c.in, provaddr.String(got))
		case c.want == "":
			var pe *provaddr.Error
			if !errors.As(err, &pe) || !errors.Is(err, provaddr.ErrInvalid) || pe.Summary == "" || pe.Detail == "" {
				t.Errorf("Parse(%q) error %v (%T): want a *provaddr.Error with summary and detail", c.in, err, err)
			}
		case err != nil:
			t.Errorf("Parse(%q): unexpected error %v", c.in, err)
		case provaddr.String(got) != c.want:
			t.Errorf("Parse(%q) = %s, want %s", c.in, provaddr.String(got), c.want)
		}
	}
}

func TestParseErrorTexts(t *testing.T) {
	tests := map[string]string{
		"my_org/aws":                       `Invalid provider namespace: Invalid provider namespace "my_org" in source "my_org/aws": must contain only letters, digits, and dashes`,
		"hashicorp/terraform-provider-aws": `Did you mean "hashicorp/aws"?`,
		"example.com/x/opentofu-aws":       `prefix "opentofu-", which isn't allowed because it would be redundant to name an OpenTofu provider`,
		"example.com/-/aws":                `The legacy provider namespace "-" can be used only with hostname ` + def,
		"a/b/c/d":                          `Invalid provider source string: The "source" attribute must be in the format "[hostname/][namespace/]name"`,
	}
	for in, want := range tests {
		_, err := provaddr.Parse(in, "")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) error = %v, want it to contain %q", in, err, want)
		}
	}
}

func TestParseDefaultHost(t *testing.T) {
	const host = "registry.example.com"
	for in, want := range map[string]string{
		"aws":                      host + "/hashicorp/aws",
		"acme/aws":                 host + "/acme/aws",
		"-/aws":                    host + "/-/aws",
		"Registry.Example.com/a/b": host + "/a/b",
		def + "/a/b":               def + "/a/b",
	} {
		got, err := provaddr.Parse(in, host)
		if err != nil || provaddr.String(got) != want {
			t.Errorf("Parse(%q, %q) = %s, %v; want %s", in, host, provaddr.String(got), err, want)
		}
	}
	// The legacy namespace belongs to the default host in use.
	if _, err := provaddr.Parse(def+"/-/aws", host); err == nil {
		t.Errorf("legacy address on %s accepted with default host %s", def, host)
	}
	if _, err := provaddr.Parse("aws", "not a host!"); err == nil {
		t.Error("invalid default host accepted")
	}
}

// TestParsePart ports OpenTofu's addrs.TestParseProviderPart.
func TestParsePart(t *testing.T) {
	tests := map[string]struct{ want, err string }{
		"foo":              {want: "foo"},
		"FOO":              {want: "foo"},
		"Foo":              {want: "foo"},
		"abc-123":          {want: "abc-123"},
		"Испытание":        {want: "испытание"},
		"münchen":          {want: "münchen"}, // precomposed ü
		"mu\u0308nchen":    {want: "münchen"}, // u and a combining diaeresis
		"abc--123":         {err: "cannot use multiple consecutive dashes"},
		"xn--80akhbyknj4f": {err: "cannot use multiple consecutive dashes"},
		"abc.123":          {err: "dots are not allowed"},
		"-abc123":          {err: "must contain only letters, digits, and dashes, and may not use leading or trailing dashes"},
		"abc123-":          {err: "must contain only letters, digits, and dashes, and may not use leading or trailing dashes"},
		"":                 {err: "must have at least one character"},
		"my_org":           {err: "must contain only letters, digits, and dashes, and may not use leading or trailing dashes"},
	}
	for in, want := range tests {
		got, err := provaddr.ParsePart(in)
		if want.err != "" {
			if err == nil || err.Error() != want.err {
				t.Errorf("ParsePart(%q) = %q, %v; want error %q", in, got, err, want.err)
			}
			continue
		}
		if err != nil || got != want.want {
			t.Errorf("ParsePart(%q) = %q, %v; want %q", in, got, err, want.want)
		}
	}
}

// TestEntryPointsAgree checks that every public way of reading a provider
// address reads each case as the one parser does: source/address,
// ParseNotLegacy, which the configuration reader, the state reader and the
// reattach variable use (it refuses the legacy namespace, as OpenTofu does
// when it installs; the deprecated resolve.ParseProviderSource forwards to
// it), a lock file's provider block (fully-qualified, canonical,
// lockable addresses only) and the CLI configuration's dev_overrides keys.
func TestEntryPointsAgree(t *testing.T) {
	for _, c := range parseCases {
		t.Run(c.in, func(t *testing.T) {
			want, wantErr := provaddr.Parse(c.in, "")
			legacy := wantErr == nil && want.Namespace == "-"

			a, err := address.ParseProviderSource(c.in)
			if (err != nil) != (wantErr != nil) || err == nil && a.Addr != want {
				t.Errorf("address.ParseProviderSource = %v, %v; want %v, %v", a.Addr, err, want, wantErr)
			}

			r, err := provaddr.ParseNotLegacy(c.in, "")
			if legacy {
				if err == nil || !strings.Contains(err.Error(), "legacy provider address") {
					t.Errorf("ParseNotLegacy accepted the legacy address as %v (%v)", r, err)
				}
			} else if (err != nil) != (wantErr != nil) || err == nil && r != want {
				t.Errorf("ParseNotLegacy = %v, %v; want %v, %v", r, err, want, wantErr)
			}

			if !strings.ContainsAny(c.in, "\"\\$%{}\n") {
				lockable := wantErr == nil && !legacy && !provaddr.IsBuiltIn(want) && provaddr.String(want) == c.in
				src := fmt.Sprintf("provider %q {\n  version = \"1.0.0\"\n}\n", c.in)
				f, err := lockfile.Parse([]byte(src), "test.lock.hcl")
				switch {
				case lockable && err != nil:
					t.Errorf("lock file refused %q: %v", c.in, err)
				case lockable && f.Provider(want) == nil:
					t.Errorf("lock file read %q as another address", c.in)
				case !lockable && err == nil:
					t.Errorf("lock file accepted %q", c.in)
				}

				cfg := fmt.Sprintf("provider_installation {\n  dev_overrides {\n    %q = \"/opt/dev\"\n  }\n  direct {}\n}\n", c.in)
				got, diags := cliconfig.Parse([]byte(cfg), "test.tfrc")
				switch {
				case wantErr == nil && diags.HasErrors():
					t.Errorf("CLI configuration refused %q: %v", c.in, diags)
				case wantErr == nil && got.ProviderInstallation.DevOverrides[want] == "":
					t.Errorf("CLI configuration read %q as another address: %v", c.in, got.ProviderInstallation.DevOverrides)
				case wantErr != nil && !diags.HasErrors():
					t.Errorf("CLI configuration accepted %q", c.in)
				}
			}
		})
	}
}

// TestIsBuiltIn: issue 21 item 3. The addresses OpenTofu 1.12.6 marks
// built-in: the namespace "builtin" on terraform.io or opentofu.org, any
// type, however the host is spelled.
func TestIsBuiltIn(t *testing.T) {
	for in, want := range map[string]bool{
		"terraform.io/builtin/terraform":     true,
		"terraform.io/builtin/null":          true,
		"opentofu.org/builtin/terraform":     true,
		"opentofu.org/builtin/opentofu":      true,
		"OpenTofu.ORG/builtin/terraform":     true,
		"opentofu.org:443/builtin/terraform": true,
		"builtin/terraform":                  false,
		"terraform":                          false,
		"example.com/builtin/terraform":      false,
		"registry.opentofu.org/builtin/x":    false,
		"opentofu.org/hashicorp/terraform":   false,
	} {
		p, err := provaddr.Parse(in, "")
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got := provaddr.IsBuiltIn(p); got != want {
			t.Errorf("IsBuiltIn(%s) = %v, want %v", in, got, want)
		}
	}
}
