package source_test

import (
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/address"
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

// TestVersionsShownAlike checks that a provider's version is shown as a
// module's is (and as the lock file writes it), so that one progress output
// does not say "v1.0.0" for one and "1.0.0" for the other.
func TestVersionsShownAlike(t *testing.T) {
	v := versions.MustParse("1.0.0")
	prov := source.ProviderPackage{Addr: tfaddr.MustParseProviderSource("registry.example.test/acme/cloud"), Version: v, Platform: source.Platform{OS: "linux", Arch: "amd64"}}
	mod := source.ModulePackage{Source: "registry.example.test/acme/vpc/cloud", Version: v}
	if got, want := prov.ForDisplay(), "registry.example.test/acme/cloud 1.0.0 (linux_amd64)"; got != want {
		t.Errorf("provider ForDisplay() = %q, want %q", got, want)
	}
	if got, want := mod.ForDisplay(), "registry.example.test/acme/vpc/cloud 1.0.0"; got != want {
		t.Errorf("module ForDisplay() = %q, want %q", got, want)
	}
}

// RefArgument asks the package's typed address for its kind: a package
// built from its parsed address answers as one built from its string.
func TestRefArgumentByTypedKind(t *testing.T) {
	for raw, want := range map[string]string{
		"oci://oci.example.test/modules/storage?tag=v1": "tag",
		"git::https://git.example.test/net.git?ref=v1":  "ref",
	} {
		pkg, err := source.NewModulePackage(address.MustParseModuleSource(raw))
		if err != nil {
			t.Fatal(err)
		}
		pkg.Ref = "v1"
		if got := pkg.RefArgument(); got != want {
			t.Errorf("%s: RefArgument() = %q, want %q", raw, got, want)
		}
		if pkg.Source = ""; pkg.RefArgument() != want {
			t.Errorf("%s: the typed address does not decide", raw)
		}
	}
}
