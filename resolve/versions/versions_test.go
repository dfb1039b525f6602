package versions_test

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/Masterminds/semver/v3"
	"github.com/tflock/tflock/resolve/versions"
)

func TestParse(t *testing.T) {
	good := map[string]string{
		"1.2.3":                    "1.2.3",
		"0.0.0":                    "0.0.0",
		"1.2.3-beta.1":             "1.2.3-beta.1",
		"1.2.3-beta.1+build.5":     "1.2.3-beta.1+build.5",
		"18446744073709551615.0.0": "18446744073709551615.0.0",
	}
	for in, want := range good {
		v, err := versions.Parse(in)
		if err != nil {
			t.Errorf("Parse(%q): %v", in, err)
			continue
		}
		if v.String() != want || v.IsZero() {
			t.Errorf("Parse(%q) = %q (zero %v), want %q", in, v, v.IsZero(), want)
		}
	}
	bad := []string{"", "v1.2.3", "1.2", "1", "01.2.3", "1.02.3", "1.2.3.4", "1.2.3-01", "1.2.3-", "1.2.3+",
		"18446744073709551616.0.0", "11387778780781445675529500000000000000000.0.0", " 1.2.3", "1.2.3 ", "1.2.x"}
	for _, in := range bad {
		v, err := versions.Parse(in)
		if err == nil {
			t.Errorf("Parse(%q) = %q, want error", in, v)
			continue
		}
		if !errors.Is(err, versions.ErrInvalidVersion) {
			t.Errorf("Parse(%q) error %v does not match ErrInvalidVersion", in, err)
		}
		var ve *versions.VersionError
		if !errors.As(err, &ve) || ve.Input != in {
			t.Errorf("Parse(%q) error %#v is not a *VersionError naming the input", in, err)
		}
	}
}

func TestParseErrorMessages(t *testing.T) {
	for in, want := range map[string]string{
		"v1.2.3":  `invalid version "v1.2.3": a "v" prefix should not be used`,
		"1.2":     `invalid version "1.2": major, minor and patch numbers are all required (for example 1.2.0)`,
		"01.2.3":  `invalid version "01.2.3": number "01" has a leading zero`,
		"1.2.3.4": `invalid version "1.2.3.4": too many numbered portions; only three are allowed (major, minor, patch)`,
	} {
		_, err := versions.Parse(in)
		if err == nil || err.Error() != want {
			t.Errorf("Parse(%q) error\n got: %v\nwant: %s", in, err, want)
		}
	}
}

func TestParseModuleVersion(t *testing.T) {
	for in, want := range map[string]string{
		"1.2.3":        "1.2.3",
		"v1.2.3":       "1.2.3",
		"1.2":          "1.2.0",
		"1":            "1.0.0",
		"01.02.03":     "1.2.3",
		"1.0.9.5":      "1.0.9.5",
		"1.0.9.5.0":    "1.0.9.5.0",
		"1.0-beta2":    "1.0.0-beta2",
		"1.0beta":      "1.0.0-beta",
		"1.2.3-rc~1+x": "1.2.3-rc~1+x",
	} {
		v, err := versions.ParseModuleVersion(in)
		if err != nil {
			t.Errorf("ParseModuleVersion(%q): %v", in, err)
			continue
		}
		if v.String() != want {
			t.Errorf("ParseModuleVersion(%q) = %q, want %q", in, v, want)
		}
	}
	for _, in := range []string{"", "V1.2.3", "1.2.x", "1..2", " 1.2", "9223372036854775808"} {
		if v, err := versions.ParseModuleVersion(in); err == nil {
			t.Errorf("ParseModuleVersion(%q) = %q, want error", in, v)
		}
	}
	// Equal versions are ==, whatever way they were written.
	if versions.MustParseModuleVersion("v1.2") != versions.MustParse("1.2.0") {
		t.Error(`ParseModuleVersion("v1.2") != Parse("1.2.0")`)
	}
}

func TestZeroVersion(t *testing.T) {
	var z versions.Version
	if !z.IsZero() || z.String() != "" {
		t.Errorf("zero Version: IsZero %v, String %q", z.IsZero(), z)
	}
	zero := versions.MustParse("0.0.0")
	if zero.IsZero() || zero == z || z.Compare(zero) >= 0 {
		t.Errorf("0.0.0 must be a version, distinct from and after the zero Version")
	}
	if versions.MustParseConstraints("").Allows(z) {
		t.Error("the zero Version must never be allowed")
	}
}

// TestCompareAgreesWithMasterminds checks Compare against
// Masterminds/semver's precedence on every pair of a set of versions that
// exercises each rule of the semver specification.
func TestCompareAgreesWithMasterminds(t *testing.T) {
	list := []string{
		"0.0.0", "0.0.1", "0.1.0", "1.0.0-0", "1.0.0-1", "1.0.0-2", "1.0.0-10", "1.0.0-9", "1.0.0-a",
		"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-alpha.10", "1.0.0-alpha.2",
		"1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0-A", "1.0.0-a-b",
		"1.0.0", "1.0.1", "1.1.0", "2.0.0", "10.0.0", "18446744073709551615.0.0",
	}
	for _, a := range list {
		for _, b := range list {
			va, vb := versions.MustParse(a), versions.MustParse(b)
			want := semver.MustParse(a).Compare(semver.MustParse(b))
			if got := va.Compare(vb); got != want {
				t.Errorf("Compare(%s, %s) = %d, Masterminds says %d", a, b, got, want)
			}
			if va.LessThan(vb) != (want < 0) {
				t.Errorf("LessThan(%s, %s) wrong", a, b)
			}
		}
	}
}

// TestCompareLongNumericIdentifiers: the semver specification compares
// numeric identifiers numerically, whatever their length (Masterminds falls
// back to text comparison beyond 64 bits, so it is not the reference here).
func TestCompareLongNumericIdentifiers(t *testing.T) {
	a, b := versions.MustParse("1.0.0-99999999999999999999"), versions.MustParse("1.0.0-100000000000000000000")
	if !a.LessThan(b) {
		t.Errorf("%s must sort before %s", a, b)
	}
}

func TestCompareTotalOrder(t *testing.T) {
	// Versions equal in precedence but not == still order, so that Compare
	// is 0 exactly when ==.
	a, b := versions.MustParse("1.0.0+a"), versions.MustParse("1.0.0+b")
	if a.Compare(b) != -1 || b.Compare(a) != 1 || a.Compare(a) != 0 {
		t.Errorf("metadata tie-break wrong")
	}
	m := versions.MustParseModuleVersion("1.0.0.0")
	if m.Compare(versions.MustParse("1.0.0")) != 1 {
		t.Errorf("1.0.0.0 must sort after 1.0.0")
	}
}

func TestSort(t *testing.T) {
	in := []string{"2.0.0", "1.0.0", "1.0.0-rc.1", "1.10.0", "1.2.0", "1.0.0-beta"}
	want := []string{"1.0.0-beta", "1.0.0-rc.1", "1.0.0", "1.2.0", "1.10.0", "2.0.0"}
	vs := make([]versions.Version, len(in))
	for i, s := range in {
		vs[i] = versions.MustParse(s)
	}
	rand.Shuffle(len(vs), func(i, j int) { vs[i], vs[j] = vs[j], vs[i] })
	versions.Sort(vs)
	for i := range vs {
		if vs[i].String() != want[i] {
			t.Fatalf("Sort = %v, want %v", vs, want)
		}
	}
}

func TestVersionText(t *testing.T) {
	for _, s := range []string{"1.2.3", "1.2.3-beta.1+x", "1.0.9.5"} {
		var v versions.Version
		if err := v.UnmarshalText([]byte(s)); err != nil {
			t.Errorf("UnmarshalText(%q): %v", s, err)
			continue
		}
		b, _ := v.MarshalText()
		if string(b) != s {
			t.Errorf("MarshalText = %q, want %q", b, s)
		}
	}
	var v versions.Version
	if err := v.UnmarshalText([]byte("v1.2.3")); err == nil {
		t.Error(`UnmarshalText("v1.2.3") must fail: not canonical`)
	}
	if got := versions.MustParse("1.2.3").GoString(); got != `versions.MustParse("1.2.3")` {
		t.Errorf("GoString = %s", got)
	}
}
