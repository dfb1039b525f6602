package versions_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tflock/tflock/resolve/versions"
)

// TestConstraintsString: the cases of OpenTofu v1.12.6
// internal/getproviders TestVersionConstraintsString, plus the examples of
// issue 4.
func TestConstraintsString(t *testing.T) {
	for in, want := range map[string]string{
		"1.2.3":              "1.2.3",
		"1.2.3-beta":         "1.2.3-beta",
		"1.2.3+foo.bar":      "1.2.3+foo.bar",
		"1.2.3-beta+foo.bar": "1.2.3-beta+foo.bar",
		">= 3":               ">= 3.0.0",
		"~> 3":               "~> 3.0",
		"~> 3.0":             "~> 3.0",
		"~> 3.0.0":           "~> 3.0.0",
		"> 1.0.0, < 1.0.0, >= 1.0.0, <= 1.0.0, != 1.0.0": "> 1.0.0, >= 1.0.0, <= 1.0.0, < 1.0.0, != 1.0.0",
		">= 3.0, < 4.0":                  ">= 3.0.0, < 4.0.0",
		">= 1.2.3, 1.2.3, ~> 1.2, 1.2.3": "~> 1.2, >= 1.2.3, 1.2.3",
		">= 2.68, >= 2.68.0":             ">= 2.68.0",
		"< 1.2.3, <= 1.2.3, != 1.2.3, 1.2.3+local.2, 1.2.3+local.1, = 1.2.4, = 1.2.3, > 2, > 1.2.3, >= 1.2.3, ~> 1.2.3, ~> 1.2": "~> 1.2, > 1.2.3, >= 1.2.3, 1.2.3, ~> 1.2.3, <= 1.2.3, < 1.2.3, != 1.2.3, 1.2.3+local.1, 1.2.3+local.2, 1.2.4, > 2.0.0",
		"~> 1.2, >= 1.2, 1.2.4":              ">= 1.2.0, ~> 1.2, 1.2.4",
		">= 2, >= 1.2, < 1.3":                ">= 1.2.0, < 1.3.0, >= 2.0.0",
		"":                                   "",
		"=1.2.0, 1.2.0,1.2.0":                "1.2.0",
		"~> 1.2, ~> 1.2.0, >= 1.2, >= 1.2.0": ">= 1.2.0, ~> 1.2.0, ~> 1.2",
		"~> 1.2-beta":                        "~> 1.2-beta",
		"  >= 1.0 ,< 2  ":                    ">= 1.0.0, < 2.0.0",
		"01.002.3":                           "1.2.3",
	} {
		c, err := versions.ParseConstraints(in)
		if err != nil {
			t.Errorf("ParseConstraints(%q): %v", in, err)
			continue
		}
		if got := c.String(); got != want {
			t.Errorf("ParseConstraints(%q).String()\n got: %q\nwant: %q", in, got, want)
		}
	}
}

func TestModuleConstraintsString(t *testing.T) {
	for in, want := range map[string]string{
		"~> 1":                 "~> 1",
		"~> 1.0":               "~> 1.0",
		"~> v1.2.3":            "~> 1.2.3",
		"= v1.2":               "1.2.0",
		">= 1.0, < 2":          ">= 1.0.0, < 2.0.0",
		"~> 1.0.9.5":           "~> 1.0.9.5",
		"1.0.0.0":              "1.0.0.0",
		">= 2, >= 1.2, >= 1.2": ">= 1.2.0, >= 2.0.0",
	} {
		c, err := versions.ParseModuleConstraints(in)
		if err != nil {
			t.Errorf("ParseModuleConstraints(%q): %v", in, err)
			continue
		}
		if got := c.String(); got != want {
			t.Errorf("ParseModuleConstraints(%q).String() = %q, want %q", in, got, want)
		}
	}
}

// TestPessimistic pins the difference that other tools get wrong:
// Terraform's "~> 2.3" is ">= 2.3.0, < 3.0.0", not Masterminds' "< 2.4".
func TestPessimistic(t *testing.T) {
	type tc struct {
		c       string
		module  bool
		allowed []string
		denied  []string
	}
	for _, c := range []tc{
		{c: "~> 2.3", allowed: []string{"2.3.0", "2.4.0", "2.99.1"}, denied: []string{"2.2.9", "3.0.0", "3.0.0-beta"}},
		{c: "~> 2.3.1", allowed: []string{"2.3.1", "2.3.9"}, denied: []string{"2.3.0", "2.4.0"}},
		{c: "~> 2", allowed: []string{"2.0.0", "2.9.0"}, denied: []string{"1.9.9", "3.0.0"}},
		{c: "~> 2", module: true, allowed: []string{"2.0.0", "2.9.0", "3.0.0", "99.0.0"}, denied: []string{"1.9.9"}},
		{c: "~> 2.3", module: true, allowed: []string{"2.3.0", "2.9.0"}, denied: []string{"2.2.0", "3.0.0"}},
		{c: "~> 2.3.1", module: true, allowed: []string{"2.3.1", "2.3.9"}, denied: []string{"2.3.0", "2.4.0"}},
	} {
		parse := versions.ParseConstraints
		if c.module {
			parse = versions.ParseModuleConstraints
		}
		cs, err := parse(c.c)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range c.allowed {
			if !cs.Allows(versions.MustParse(v)) {
				t.Errorf("%q (module %v) must allow %s", c.c, c.module, v)
			}
		}
		for _, v := range c.denied {
			if cs.Allows(versions.MustParse(v)) {
				t.Errorf("%q (module %v) must not allow %s", c.c, c.module, v)
			}
		}
	}
}

func TestProviderSemantics(t *testing.T) {
	type tc struct {
		c    string
		v    string
		want bool
	}
	for _, c := range []tc{
		{"= 1.2", "1.2.0", true},       // missing segments are zero
		{"= 1.2", "1.2.1", false},      // ... not wildcards
		{"!= 1.2", "1.2.1", true},      // != excludes only 1.2.0
		{"!= 1.2", "1.2.0", false},     //
		{"1.2.3", "1.2.3+meta", false}, // = compares metadata
		{">= 1.2.3+x", "1.2.3", true},  // ordering ignores metadata
		{"2.0.0-rc.1", "2.0.0-rc.1", true},
		{">= 1.0.0", "2.0.0-rc.1", false},            // not requested exactly
		{"2.0.0-rc.1, >= 1.0.0", "2.0.0-rc.1", true}, // requested, and >= holds
		{"2.0.0-rc.1, != 2.0.0-rc.1", "2.0.0-rc.1", false},
		{"", "1.0.0", true},
		{"", "1.0.0-beta", false},
	} {
		if got := versions.MustParseConstraints(c.c).Allows(versions.MustParse(c.v)); got != c.want {
			t.Errorf("%q allows %s = %v, want %v", c.c, c.v, got, c.want)
		}
	}
}

// TestModulePrerelease pins the module dialect's pre-release rules, and
// the cases of opentofu/opentofu#2117 where tflock differs from OpenTofu.
func TestModulePrerelease(t *testing.T) {
	type tc struct {
		c    string
		v    string
		want bool
	}
	for _, c := range []tc{
		{"1.0.0-beta1", "1.0.0-beta1", true},
		{"v1.0.0-beta1", "1.0.0-beta1", true},                // OpenTofu before 1.9 rejected the "v" form (#2117)
		{"= 1.0.0-beta1", "1.0.0-beta1", true},               // OpenTofu's filter rejects this: its parser wants "=1.0.0-beta1"
		{"1.0.0-beta1, >= 1.0.0-alpha", "1.0.0-beta1", true}, // OpenTofu's filter rejects any list
		{">= 1.0.0-alpha", "1.0.0-beta1", false},             // not requested exactly
		{"0.0.3-alpha.1, >= 0.0.2", "0.0.3-alpha.1", false},  // go-version: ">= 0.0.2" matches no pre-release
		{"0.0.3-alpha.1, >= 0.0.2", "0.0.3", false},
		{"1.0.0-beta1+b", "1.0.0-beta1", false},
		{"1.0.0+b", "1.0.0", true}, // go-version's = ignores metadata on releases
	} {
		got := versions.MustParseModuleConstraints(c.c).Allows(versions.MustParseModuleVersion(c.v))
		if got != c.want {
			t.Errorf("module %q allows %s = %v, want %v", c.c, c.v, got, c.want)
		}
	}
}

func TestProviderErrors(t *testing.T) {
	for in, want := range map[string]string{
		">=":         `invalid specification ">=": a version number is required`,
		">= 1, ~>":   `invalid specification "~>": a version number is required`,
		"1.0.0 ,, 2": `invalid specification ", 2": invalid constraint operator ","`,
		"11387778780781445675529500000000000000000": `invalid specification "11387778780781445675529500000000000000000": major number 11387778780781445675529500000000000000000 is too large`,
		"1.0 v2": `a "v" prefix should not be used when specifying versions`,
	} {
		_, err := versions.ParseConstraints(in)
		if err == nil || err.Error() != want {
			t.Errorf("ParseConstraints(%q) error\n got: %v\nwant: %s", in, err, want)
			continue
		}
		var ce *versions.ConstraintError
		if !errors.Is(err, versions.ErrInvalidConstraint) || !errors.As(err, &ce) || ce.Input != in || ce.Dialect != versions.Provider {
			t.Errorf("ParseConstraints(%q) error %#v: wrong type or fields", in, err)
		}
	}
	if _, err := versions.ParseModuleConstraints(""); err == nil || !strings.Contains(err.Error(), "malformed constraint") {
		t.Errorf("ParseModuleConstraints(\"\") error = %v, want malformed constraint", err)
	}
}

func TestIntersectAndNewest(t *testing.T) {
	a := versions.MustParseConstraints(">= 1.2")
	b := versions.MustParseConstraints("< 2.0.0, != 1.5.0")
	c := versions.Intersect(a, versions.Constraints{}, b)
	if got, want := c.String(), ">= 1.2.0, != 1.5.0, < 2.0.0"; got != want {
		t.Errorf("Intersect = %q, want %q", got, want)
	}
	if !versions.Intersect().IsZero() || c.IsZero() {
		t.Error("IsZero wrong")
	}
	list := []versions.Version{
		versions.MustParse("1.0.0"), versions.MustParse("1.5.0"), versions.MustParse("1.4.9"),
		versions.MustParse("2.0.0"), versions.MustParse("1.9.0-rc.1"),
	}
	got, ok := versions.Newest(list, c)
	if !ok || got.String() != "1.4.9" {
		t.Errorf("Newest = %s, %v; want 1.4.9", got, ok)
	}
	if _, ok := versions.Newest(list, versions.MustParseConstraints("> 3")); ok {
		t.Error("Newest must report none")
	}
	if got, _ := versions.Newest(list, versions.Constraints{}); got.String() != "2.0.0" {
		t.Errorf("Newest(zero constraints) = %s", got)
	}
	if got := versions.List(list).Filter(c); len(got) != 1 || got[0].String() != "1.4.9" {
		t.Errorf("Filter = %v", got)
	}
}

func TestMixedDialectIntersection(t *testing.T) {
	c := versions.Intersect(versions.MustParseModuleConstraints("~> 1"), versions.MustParseConstraints("< 3"))
	for v, want := range map[string]bool{"1.0.0": true, "2.5.0": true, "3.0.0": false, "0.9.0": false} {
		if got := c.Allows(versions.MustParse(v)); got != want {
			t.Errorf("%s: %v, want %v", v, got, want)
		}
	}
}

// TestProviderGoVersionsQuirks pins two behaviours of
// apparentlymart/go-versions v1.0.3 that OpenTofu inherits for providers,
// derived from its source: VersionExtra.LessThan puts a pre-release that
// runs out of dot-separated parts first before one that has more ("rc"
// before "beta.1"), both in the bounds (setBound.Has uses
// Version.LessThan/GreaterThan) and in VersionConstraintsString's sort;
// and Set.Has never admits 0.0.0 (versions.Unspecified) into a
// constrained set.
func TestProviderGoVersionsQuirks(t *testing.T) {
	allows := map[[2]string]bool{
		{"= 1.0.0-rc, < 1.0.0-beta.1", "1.0.0-rc"}:         true,
		{"= 1.0.0-beta.1, > 1.0.0-rc", "1.0.0-beta.1"}:     true,
		{"= 1.0.0-beta.1, < 1.0.0-rc", "1.0.0-beta.1"}:     false,
		{"= 1.0.0-beta.2, > 1.0.0-beta.1", "1.0.0-beta.2"}: true,
		{"= 1.0.0-rc, >= 1.0.0-beta.1", "1.0.0-rc"}:        false,
		{">= 0.0.0", "0.0.0"}:                              false,
		{"0.0.0", "0.0.0"}:                                 false,
		{"!= 1.0.0", "0.0.0"}:                              false,
		{">= 0.0.0", "0.0.1"}:                              true,
		{"0.0.0-beta", "0.0.0-beta"}:                       true,
		{"0.0.0+meta", "0.0.0+meta"}:                       true,
	}
	for in, want := range allows {
		c := versions.MustParseConstraints(in[0])
		if got := c.Allows(versions.MustParse(in[1])); got != want {
			t.Errorf("%q allows %s = %v, want %v", in[0], in[1], got, want)
		}
	}
	// The module dialect (hashicorp/go-version) has neither quirk.
	if !versions.MustParseModuleConstraints(">= 0.0.0").Allows(versions.MustParse("0.0.0")) {
		t.Error(`module ">= 0.0.0" does not allow 0.0.0`)
	}
	for in, want := range map[string]string{
		"1.0.0-beta.1, 1.0.0-rc":             "1.0.0-rc, 1.0.0-beta.1",
		"!= 1.0.0-beta.1, != 1.0.0-rc":       "!= 1.0.0-rc, != 1.0.0-beta.1",
		"1.0.0-beta.10, 1.0.0-beta.2":        "1.0.0-beta.2, 1.0.0-beta.10",
		"< 2.0.0, 2.0.0-alpha.1, 1.0.0-beta": "1.0.0-beta, 2.0.0-alpha.1, < 2.0.0",
	} {
		if got := versions.MustParseConstraints(in).String(); got != want {
			t.Errorf("ParseConstraints(%q).String() = %q, want %q", in, got, want)
		}
	}
}
