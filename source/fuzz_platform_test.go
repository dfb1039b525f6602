package source_test

import (
	"strings"
	"testing"

	"github.com/tflock/tflock/source"
)

// FuzzParsePlatform checks that ParsePlatform accepts exactly "os_arch"
// with both parts made of lower-case letters and digits, that an accepted
// platform prints back to its input and survives a text round trip, and
// that UnmarshalText agrees with ParsePlatform and leaves its receiver
// alone on error.
func FuzzParsePlatform(f *testing.F) {
	for _, s := range []string{"linux_amd64", "darwin_arm64", "windows_386", "freebsd_arm", "", "_", "linux_", "_amd64", "Linux_amd64", "linux_amd64_v2", "linux-amd64", "linux_amd64\n", "ｌinux_amd64"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := source.ParsePlatform(s)
		osPart, arch, ok := strings.Cut(s, "_")
		want := ok && valid(osPart) && valid(arch)
		if (err == nil) != want {
			t.Fatalf("ParsePlatform(%q) = %v, %v; valid by the definition: %v", s, p, err, want)
		}
		sentinel := source.Platform{OS: "keep", Arch: "me"}
		q := sentinel
		uerr := q.UnmarshalText([]byte(s))
		if (uerr == nil) != (err == nil) {
			t.Fatalf("UnmarshalText(%q) = %v, ParsePlatform gives %v", s, uerr, err)
		}
		if err != nil {
			if q != sentinel {
				t.Errorf("UnmarshalText(%q) failed but changed its receiver to %v", s, q)
			}
			if !strings.Contains(err.Error(), "invalid platform") {
				t.Errorf("error %q does not say what is wrong", err)
			}
			return
		}
		if p.IsZero() || p.String() != s || q != p || p.OS != osPart || p.Arch != arch {
			t.Fatalf("ParsePlatform(%q) = %#v (String %q), UnmarshalText %#v", s, p, p.String(), q)
		}
		b, merr := p.MarshalText()
		if merr != nil || string(b) != s {
			t.Fatalf("MarshalText = %q, %v; want %q", b, merr, s)
		}
		if p.LessThan(p) {
			t.Errorf("%v is less than itself", p)
		}
	})
}

// valid is the definition ParsePlatform documents: non-empty, lower-case
// ASCII letters and digits.
func valid(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
