package resolve_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/resolve"
)

func TestReadStateFile(t *testing.T) {
	path := filepath.Join("testdata", "state", "v4.tfstate")
	reqs, err := resolve.ReadStateFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"state (" + path + ") requires example.com/acme/widget any version",
		"state (" + path + ") requires registry.opentofu.org/hashicorp/aws any version",
		"state (" + path + ") requires terraform.io/builtin/terraform any version",
	}
	if diff := cmp.Diff(want, reqLines(reqs)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestStateRequirementsErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
	}{
		{"empty", "", ""},
		{"not json", "{", "s.tfstate: not a valid state file: unexpected end of JSON input"},
		{"array", "[]", "s.tfstate: not a valid state file: the top level is a JSON array (at byte 1)"},
		{"string version", `{"version": "4"}`, `s.tfstate: not a valid state file: "version" is a JSON string (at byte 15)`},
		{"no version", "{}", "s.tfstate: not a state file: no format version"},
		{"version 3", `{"version": 3}`, "s.tfstate: state format version 3 is not supported; only version 4 is (run tofu once to upgrade the state)"},
		{"bad provider", `{"version": 4, "resources": [{"provider": "provider.aws"}]}`, `s.tfstate: resources[0]: invalid provider configuration address "provider.aws": want provider["HOST/NAMESPACE/TYPE"]`},
		{"short provider", `{"version": 4, "resources": [{"provider": "provider[\"hashicorp/aws\"]"}]}`, `s.tfstate: resources[0]: invalid provider configuration address "provider[\"hashicorp/aws\"]": the provider address must be fully qualified`},
		{"unterminated", `{"version": 4, "resources": [{"provider": "provider[\"a/b/c"}]}`, `s.tfstate: resources[0]: invalid provider configuration address "provider[\"a/b/c": no closing "]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reqs, err := resolve.StateRequirements([]byte(tc.src), "s.tfstate")
			if tc.want == "" {
				if err != nil || len(reqs) != 0 {
					t.Fatalf("got %v, %v; want nothing", reqs, err)
				}
				return
			}
			var se *resolve.StateError
			if err == nil || !errors.As(err, &se) {
				t.Fatalf("err = %v, want a *StateError", err)
			}
			if err.Error() != tc.want {
				t.Errorf("err = %q\nwant  %q", err, tc.want)
			}
		})
	}
}

func TestReadStateFileMissing(t *testing.T) {
	_, err := resolve.ReadStateFile(filepath.Join(t.TempDir(), "absent.tfstate"))
	var se *resolve.StateError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want *StateError", err)
	}
}

func TestParseReattach(t *testing.T) {
	got, err := resolve.ParseReattach(`{"hashicorp/aws": {"Protocol": "grpc"}, "example.com/acme/widget": {}}`, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []tfaddr.Provider{
		tfaddr.MustParseProviderSource("example.com/acme/widget"),
		tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/aws"),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, bad := range []string{`[]`, `{"hashicorp/aws": []}`, `{"a/b/c/d": {}}`, `not json`} {
		if _, err := resolve.ParseReattach(bad, ""); err == nil {
			t.Errorf("ParseReattach(%q): no error", bad)
		}
	}
}

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
	}
}

func TestProviderRequirementsSkipsZero(t *testing.T) {
	reqs := resolve.ProviderRequirements([]tfaddr.Provider{{}, tfaddr.MustParseProviderSource("a/b"), tfaddr.MustParseProviderSource("a/b")}, resolve.Origin{})
	if got := reqLines(reqs); len(got) != 1 || got[0] != "caller requires registry.terraform.io/a/b any version" {
		t.Errorf("got %q", got)
	}
	if s := (resolve.Requirement{}).String(); s != "caller requires <no package> any version" {
		t.Errorf("zero requirement: %q", s)
	}
}
