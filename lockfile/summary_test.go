package lockfile_test

import (
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve/versions"
)

// The note after the list of changes: OpenTofu's own for provider changes
// (OpenTofu v1.12.6 internal/command/views/init.go, InitHuman.LockFileChanged:
// "OpenTofu has made some changes to the provider dependency selections
// recorded\nin the .terraform.lock.hcl file. ..."), and one that names
// modules when modules changed (it said "dependency selections" for both,
// and tofu's text names providers only).
func TestSummaryNoteNamesWhatChanged(t *testing.T) {
	const tail = "in the .terraform.lock.hcl file. Review those changes and commit them to your\n" +
		"version control system if they represent changes you intended to make.\n"
	null := tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/null")
	base := lockfile.New()
	base.SetProvider(&lockfile.ProviderLock{Addr: null, Version: versions.MustParse("3.2.0")})
	base.SetModule(&lockfile.ModuleLock{Path: "vpc", Source: "registry.opentofu.org/a/vpc/aws", Version: versions.MustParse("1.0.0")})

	providerOnly := base.Clone()
	providerOnly.Provider(null).Version = versions.MustParse("3.2.1")
	moduleOnly := base.Clone()
	moduleOnly.Module("vpc").Version = versions.MustParse("1.1.0")
	both := providerOnly.Clone()
	both.Module("vpc").Version = versions.MustParse("1.1.0")

	for _, tc := range []struct {
		name string
		next *lockfile.File
		want string
	}{
		{"providers", providerOnly, "- registry.opentofu.org/hashicorp/null: upgraded 3.2.0 to 3.2.1\n\n" +
			"OpenTofu has made some changes to the provider dependency selections recorded\n" + tail},
		{"modules", moduleOnly, "- module \"vpc\": upgraded 1.0.0 to 1.1.0\n\n" +
			"OpenTofu has made some changes to the module dependency selections recorded\n" + tail},
		{"both", both, "- registry.opentofu.org/hashicorp/null: upgraded 3.2.0 to 3.2.1\n- module \"vpc\": upgraded 1.0.0 to 1.1.0\n\n" +
			"OpenTofu has made some changes to the provider and module dependency selections\nrecorded " + tail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := lockfile.Summary(lockfile.Changes(base, tc.next)); got != tc.want {
				t.Errorf("Summary:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
	if got := lockfile.Summary(lockfile.Changes(base, base.Clone())); got != "" {
		t.Errorf("Summary of no changes = %q, want \"\"", got)
	}
}
