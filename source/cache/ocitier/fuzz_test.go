package ocitier_test

import (
	"strings"
	"testing"

	"github.com/tflock/tflock/source/cache/ocitier"
)

// FuzzParseLocation: any string is either refused with an error naming the
// expected form, or read as "HOST/PREFIX" that reads back as itself.
func FuzzParseLocation(f *testing.F) {
	for _, s := range []string{"oci://registry.example.test/tflock", "127.0.0.1:5000/a/b", "oci://host", "https://h/p", "oci://h/A", "oci://h/a//b", "oci://[::1]:5000/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		loc, err := ocitier.ParseLocation(s)
		if err != nil {
			if !strings.Contains(err.Error(), "remote cache") {
				t.Fatalf("ParseLocation(%q): error without context: %v", s, err)
			}
			return
		}
		host, prefix, ok := strings.Cut(loc, "/")
		if !ok || host == "" || prefix == "" || strings.Contains(loc, "://") {
			t.Fatalf("ParseLocation(%q) = %q", s, loc)
		}
		again, err := ocitier.ParseLocation("oci://" + loc)
		if err != nil || again != loc {
			t.Fatalf("ParseLocation(oci://%s) = %q, %v", loc, again, err)
		}
	})
}
