package address

import (
	"reflect"
	"strings"
	"testing"
)

func FuzzParseModuleSource(f *testing.F) {
	for _, s := range []string{
		"./a", "hashicorp/consul/aws//x", "git::https://h/x.git//s?ref=v1", "git@h:o/r.git",
		"github.com/o/r/s?ref=x", "oci://h/r?tag=1", "https://h/x.zip", "/abs",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		src, err := ParseModuleSource(in)
		if err != nil {
			if src != nil {
				t.Fatalf("non-nil source %#v with error", src)
			}
			return
		}
		again, err := ParseModuleSource(src.String())
		if err != nil {
			t.Fatalf("canonical form %q of %q does not parse: %v", src.String(), in, err)
		}
		if again.String() != src.String() {
			t.Fatalf("canonical form of %q not stable: %q then %q", in, src.String(), again.String())
		}
		if _, local := src.(Local); local {
			if src.Package() != "" || !strings.HasPrefix(src.String(), ".") {
				t.Fatalf("bad local %q", src.String())
			}
			return
		}
		lock, err := ParseModuleSource(src.LockSource())
		if err != nil {
			t.Fatalf("lock source %q of %q does not parse: %v", src.LockSource(), in, err)
		}
		if lock.LockSource() != src.LockSource() {
			t.Fatalf("lock source %q of %q reparses as %q", src.LockSource(), in, lock.LockSource())
		}
		pkg, err := ParseModuleSource(src.Package())
		if err != nil {
			t.Fatalf("package %q of %q does not parse: %v", src.Package(), in, err)
		}
		if pkg.Package() != src.Package() {
			t.Fatalf("package %q of %q reparses as %q", src.Package(), in, pkg.Package())
		}
	})
}

func FuzzParseProviderSource(f *testing.F) {
	for _, s := range []string{"hashicorp/aws", "example.com/a/b", "terraform.io/builtin/terraform", "-/aws"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		p, err := ParseProviderSource(in)
		if err != nil {
			return
		}
		again, err := ParseProviderSource(p.String())
		if err != nil || again != p {
			t.Fatalf("canonical %q of %q reparses as %v, %v", p.String(), in, again, err)
		}
		if _, err := ParseProviderSource(p.ForDisplay()); err != nil {
			t.Fatalf("display form %q of %q does not parse: %v", p.ForDisplay(), in, err)
		}
	})
}

// packageAddr is the PackageAddr of a registry or remote address.
func packageAddr(src ModuleSource) ModuleSource {
	switch s := src.(type) {
	case Registry:
		return s.PackageAddr()
	case Remote:
		return s.PackageAddr()
	}
	return nil
}

// FuzzPackageAddr: an address's PackageAddr is what its Package string
// parses as.
func FuzzPackageAddr(f *testing.F) {
	for _, s := range []string{
		"hashicorp/consul/aws//x", "git::https://h/x.git//s?ref=v1&depth=1", "git@h:o/r.git",
		"github.com/o/r/s?ref=x", "oci://h/r?tag=1", "oci://h/r//s?digest=sha256:0123456789012345678901234567890123456789012345678901234567890123", "https://h/x.zip//s?archive=zip", "/abs//s",
		"git::https://h/x.git?foo=1&sshkey=YQ==&ref=v2", "s3::https://s3.amazonaws.com/b/k.zip//d",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		checkPackageAddr(t, in)
	})
}

// TestPackageAddr: PackageAddr is what Package parses as, for every
// address of the OpenTofu cases.
func TestPackageAddr(t *testing.T) {
	for in := range tofuModuleCases {
		checkPackageAddr(t, in)
	}
}

func checkPackageAddr(t *testing.T, in string) {
	t.Helper()
	src, err := ParseModuleSource(in)
	if err != nil {
		return
	}
	got := packageAddr(src)
	if got == nil {
		return
	}
	want, err := ParseModuleSource(src.Package())
	if err != nil {
		t.Fatalf("package %q of %q does not parse: %v", src.Package(), in, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("PackageAddr of %q = %#v, want %#v (its Package parsed)", in, got, want)
	}
}
