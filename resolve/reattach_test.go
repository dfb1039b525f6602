package resolve_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/resolve"
)

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

// FuzzParseReattach: no panic on any TF_REATTACH_PROVIDERS value.
func FuzzParseReattach(f *testing.F) {
	f.Add(`{"hashicorp/aws": {"Protocol": "grpc"}}`)
	f.Add(`{"a/b/c/d": {}}`)
	f.Fuzz(func(t *testing.T, s string) {
		ps, err := resolve.ParseReattach(s, "")
		if err != nil && ps != nil {
			t.Fatal("providers and an error")
		}
	})
}
