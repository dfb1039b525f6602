package source_test

import (
	"testing"

	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
)

// A module pinned by its source address is shown with the argument the
// address writes: an OCI module pinned by "?tag=" was shown as "?ref=",
// an argument OCI sources do not have (OpenTofu v1.12.6
// internal/getmodules/oci_getter.go reads "tag" and "digest" only).
func TestModulePackageForDisplayNamesTheArgument(t *testing.T) {
	for _, tc := range []struct {
		pkg      source.ModulePackage
		want, rf string
	}{
		{source.ModulePackage{Source: "oci://oci.example.test/modules/storage", Ref: "1.0.0"}, "oci://oci.example.test/modules/storage?tag=1.0.0", "tag"},
		{source.ModulePackage{Source: "oci://oci.example.test/modules/storage", Ref: "sha256:" + sixtyFourHex}, "oci://oci.example.test/modules/storage?digest=sha256:" + sixtyFourHex, "digest"},
		{source.ModulePackage{Source: "git::https://git.example.test/net.git", Ref: "v1.2.0"}, "git::https://git.example.test/net.git?ref=v1.2.0", "ref"},
		{source.ModulePackage{Source: "oci://oci.example.test/modules/storage", Version: versions.MustParse("1.0.0")}, "oci://oci.example.test/modules/storage 1.0.0", ""},
		{source.ModulePackage{Source: "oci://oci.example.test/modules/storage"}, "oci://oci.example.test/modules/storage", ""},
	} {
		if got := tc.pkg.ForDisplay(); got != tc.want {
			t.Errorf("%#v.ForDisplay() = %q, want %q", tc.pkg, got, tc.want)
		}
		if got := tc.pkg.RefArgument(); got != tc.rf {
			t.Errorf("%#v.RefArgument() = %q, want %q", tc.pkg, got, tc.rf)
		}
	}
}

const sixtyFourHex = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
