package lockfile_test

import (
	"testing"

	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve/versions"
)

func TestRerecordedString(t *testing.T) {
	for _, tc := range []struct {
		c    lockfile.Change
		want string
	}{
		{lockfile.Change{Kind: lockfile.Rerecorded, Module: "vpc", NewVersion: versions.MustParse("1.0.0")}, `module "vpc": re-recorded 1.0.0, as installed`},
		{lockfile.Change{Kind: lockfile.Rerecorded, Module: "net", NewPin: lockfile.ModulePin{Commit: "0123456789abcdef0123456789abcdef01234567"}}, `module "net": re-recorded at commit 0123456789abcdef0123456789abcdef01234567, as installed`},
	} {
		if got := tc.c.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
	if lockfile.Rerecorded.String() != "re-recorded" {
		t.Errorf("kind %q", lockfile.Rerecorded.String())
	}
}
