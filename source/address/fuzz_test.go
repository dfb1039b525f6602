package address

import (
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
