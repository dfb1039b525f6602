package versions_test

import (
	"testing"

	"github.com/tflock/tflock/resolve/versions"
)

// probe versions for checking that a constraint and its canonical form
// agree.
var probes = func() []versions.Version {
	var out []versions.Version
	for _, s := range []string{
		"0.0.0", "0.0.1", "0.1.0", "1.0.0-beta", "1.0.0", "1.0.1", "1.1.0", "1.2.0", "1.2.3", "1.2.3+meta",
		"1.2.3-beta", "1.2.4", "1.3.0", "2.0.0-rc.1", "2.0.0", "2.68.0", "3.0.0", "10.0.0",
	} {
		out = append(out, versions.MustParse(s))
	}
	return out
}()

func checkRoundTrip(t *testing.T, s string, c versions.Constraints, parse func(string) (versions.Constraints, error), extra ...versions.Version) {
	canon := c.String()
	c2, err := parse(canon)
	if err != nil {
		t.Fatalf("%q: canonical form %q does not parse: %v", s, canon, err)
	}
	if got := c2.String(); got != canon {
		t.Fatalf("%q: canonical form %q is written back as %q", s, canon, got)
	}
	for _, v := range append(extra, probes...) {
		if c.Allows(v) != c2.Allows(v) {
			t.Fatalf("%q and its canonical form %q disagree on %s", s, canon, v)
		}
	}
}

func FuzzParseConstraints(f *testing.F) {
	f.Add(">= 1.2.0, < 2.0.0")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := versions.ParseConstraints(s)
		if err != nil {
			return
		}
		checkRoundTrip(t, s, c, versions.ParseConstraints)
	})
}

func FuzzParseModuleConstraints(f *testing.F) {
	f.Add("~> v1.2, != 1.2.5")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := versions.ParseModuleConstraints(s)
		if err != nil {
			return
		}
		var extra []versions.Version
		if v, err := versions.ParseModuleVersion(s); err == nil {
			extra = append(extra, v)
		}
		checkRoundTrip(t, s, c, versions.ParseModuleConstraints, extra...)
	})
}

func FuzzParse(f *testing.F) {
	f.Add("1.2.3-beta.1+build")
	f.Fuzz(func(t *testing.T, s string) {
		v, err := versions.Parse(s)
		if err != nil {
			return
		}
		if v.String() != s {
			t.Fatalf("Parse(%q).String() = %q: strict input must be canonical", s, v)
		}
		if v2, err := versions.Parse(v.String()); err != nil || v2 != v {
			t.Fatalf("Parse(%q) does not round-trip: %v %v", s, v2, err)
		}
		// 0.0.0 is the one version no provider constraint allows (as in
		// apparentlymart/go-versions, where it means "unspecified").
		if c := versions.MustParseConstraints(v.String()); c.Allows(v) != (s != "0.0.0") {
			t.Fatalf("the exact constraint %q allows its version: %v", v, c.Allows(v))
		}
	})
}

func FuzzParseModuleVersion(f *testing.F) {
	f.Add("v1.0.9.5-beta~1+x")
	f.Fuzz(func(t *testing.T, s string) {
		v, err := versions.ParseModuleVersion(s)
		if err != nil {
			return
		}
		v2, err := versions.ParseModuleVersion(v.String())
		if err != nil || v2 != v {
			t.Fatalf("ParseModuleVersion(%q) = %q does not round-trip: %q %v", s, v, v2, err)
		}
		if v.Compare(v2) != 0 {
			t.Fatalf("Compare of equal versions is not 0")
		}
	})
}
