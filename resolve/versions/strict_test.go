package versions

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
)

// asMasterminds checks that Parse accepts and refuses s as
// Masterminds/semver/v3's StrictNewVersion, which it used to call, does:
// the same numbers, pre-release and metadata, or the same reason.
func asMasterminds(t *testing.T, s string) {
	t.Helper()
	if s == "" || s[0] == 'v' || s[0] == 'V' {
		return // Parse's own refusals, before either parser
	}
	got, err := strictParse(s)
	want, werr := semver.StrictNewVersion(s)
	switch {
	case (err == nil) != (werr == nil):
		t.Fatalf("%q: strictParse error %v, Masterminds %v", s, err, werr)
	case err != nil:
		if r, wr := strictReason(s, err), strictReason(s, werr); r != wr {
			t.Fatalf("%q: reason %q, Masterminds' %q", s, r, wr)
		}
	case got.major != want.Major() || got.minor != want.Minor() || got.patch != want.Patch() || got.pre != want.Prerelease() || got.meta != want.Metadata() || !got.valid:
		t.Fatalf("%q: %+v, Masterminds %s", s, got, want.Original())
	}
}

// TestParseAsMasterminds compares Parse with Masterminds' StrictNewVersion
// on versions built from parts that each rule of the grammar turns on
// (empty, zero, leading zeros, 64-bit overflow, letters, hyphens, dots,
// "+" and "-" in every position, non-ASCII and invalid UTF-8).
func TestParseAsMasterminds(t *testing.T) {
	parts := []string{"", "0", "1", "01", "00", "12", "18446744073709551615", "18446744073709551616", "99999999999999999999",
		"a", "-", "--", "x-y", "0a", "a0", "é", "\xff", " ", "beta", "rc1", "001", "1a", "A-Z"}
	seps := []string{".", "-", "+", ".", "."}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		var b strings.Builder
		for i := range 1 + r.IntN(7) {
			if i > 0 {
				b.WriteString(seps[r.IntN(len(seps))])
			}
			b.WriteString(parts[r.IntN(len(parts))])
		}
		asMasterminds(t, b.String())
	}
	for _, s := range []string{"1.2.3", "1.2.3-beta.1+build.5", "1.2.3+", "1.2.3-", "1.2.3-.a", "1.2.3-01", "1.2.3-0", "1.2.3-a..b", "1.2.3+a..b",
		"1.2.3+01", "1.2.3-+", "1.2.3+-", "1.2", "1.2.3.4", "1..3", "..", "1.2.", ".1.2", "01.2.3", "1.2.3-a+b+c", "1.2.3-a-b", "1.2-3.4"} {
		asMasterminds(t, s)
	}
}

// FuzzParseAsMasterminds is TestParseAsMasterminds on any input.
func FuzzParseAsMasterminds(f *testing.F) {
	for _, s := range []string{"1.2.3", "1.2.3-beta.1+build.5", "1.2.3-01", "18446744073709551616.0.0", "1.2.3+é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { asMasterminds(t, s) })
}
