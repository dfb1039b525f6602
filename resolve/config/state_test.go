package config_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tflock/tflock/resolve/config"
)

func TestReadStateFile(t *testing.T) {
	path := filepath.Join("testdata", "state", "v4.tfstate")
	reqs, err := config.ReadStateFile(path)
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
		{"version 3", `{"version": 3}`, "s.tfstate: state format version 3 is not supported; only version 4 is (a run of OpenTofu or Terraform with this state upgrades it)"},
		{"bad provider", `{"version": 4, "resources": [{"provider": "provider.aws"}]}`, `s.tfstate: resources[0]: invalid provider configuration address "provider.aws": want provider["HOST/NAMESPACE/TYPE"]`},
		{"short provider", `{"version": 4, "resources": [{"provider": "provider[\"hashicorp/aws\"]"}]}`, `s.tfstate: resources[0]: invalid provider configuration address "provider[\"hashicorp/aws\"]": the provider address must be fully qualified`},
		{"unterminated", `{"version": 4, "resources": [{"provider": "provider[\"a/b/c"}]}`, `s.tfstate: resources[0]: invalid provider configuration address "provider[\"a/b/c": no closing "]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reqs, err := config.StateRequirements([]byte(tc.src), "s.tfstate")
			if tc.want == "" {
				if err != nil || len(reqs) != 0 {
					t.Fatalf("got %v, %v; want nothing", reqs, err)
				}
				return
			}
			var se *config.StateError
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
	_, err := config.ReadStateFile(filepath.Join(t.TempDir(), "absent.tfstate"))
	var se *config.StateError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want *StateError", err)
	}
}
