package versions

import (
	"slices"
	"strconv"
	"strings"
)

// precedence compares a and b by semantic-version precedence, ignoring build
// metadata: numbers (extra segments padded with zeros), then pre-release as
// the semver specification defines it. This is the order of the provider
// dialect (apparentlymart/go-versions).
func precedence(a, b Version) int {
	switch {
	case a.major != b.major:
		return cmpU(a.major, b.major)
	case a.minor != b.minor:
		return cmpU(a.minor, b.minor)
	case a.patch != b.patch:
		return cmpU(a.patch, b.patch)
	}
	if a.extra != b.extra {
		if c := compareExtra(a.extra, b.extra); c != 0 {
			return c
		}
	}
	return comparePrerelease(a.pre, b.pre)
}

// providerPrecedence is precedence as apparentlymart/go-versions (the
// provider dialect) computes it for bounds and for the canonical order of
// terms: the same as [precedence], except that two different pre-releases
// of the same numbers compare with go-versions' own rule ([extraLess]),
// which puts a pre-release that has run out of dot-separated parts before
// one that has more, whatever those parts say ("rc" before "beta.1").
func providerPrecedence(a, b Version) int {
	if a.major == b.major && a.minor == b.minor && a.patch == b.patch && a.extra == b.extra &&
		a.pre != b.pre && a.pre != "" && b.pre != "" {
		if extraLess(a.pre, b.pre) {
			return -1
		}
		return 1
	}
	return precedence(a, b)
}

// isUnspecified reports whether v is 0.0.0 exactly, the version
// apparentlymart/go-versions treats as "no version": no provider
// constraint allows it.
func (v Version) isUnspecified() bool {
	return v.valid && v.major == 0 && v.minor == 0 && v.patch == 0 && v.extra == "" && v.pre == "" && v.meta == ""
}

func cmpU(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// compareExtra compares two canonical lists of extra numeric segments,
// missing segments counting as zero.
func compareExtra(a, b string) int {
	as, bs := splitExtra(a), splitExtra(b)
	for i := 0; i < max(len(as), len(bs)); i++ {
		var x, y uint64
		if i < len(as) {
			x = as[i]
		}
		if i < len(bs) {
			y = bs[i]
		}
		if c := cmpU(x, y); c != 0 {
			return c
		}
	}
	return 0
}

func splitExtra(s string) []uint64 {
	if s == "" {
		return nil
	}
	parts := strings.Split(s, ".")
	out := make([]uint64, len(parts))
	for i, p := range parts {
		out[i], _ = strconv.ParseUint(p, 10, 64)
	}
	return out
}

// comparePrerelease compares pre-release strings by semver precedence; ""
// (a release) sorts after every pre-release.
func comparePrerelease(a, b string) int {
	if a == b {
		return 0
	}
	if a == "" {
		return 1
	}
	if b == "" {
		return -1
	}
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		if c := compareIdent(as[i], bs[i]); c != 0 {
			return c
		}
	}
	return compareInt(len(as), len(bs))
}

// compareIdent compares one pre-release identifier: numeric identifiers
// numerically (of any length) and before alphanumeric ones, which compare
// in ASCII order.
func compareIdent(a, b string) int {
	an, bn := a != "" && isDigits(a), b != "" && isDigits(b)
	switch {
	case an && bn:
		a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
		if c := compareInt(len(a), len(b)); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	case an:
		return -1
	case bn:
		return 1
	}
	return strings.Compare(a, b)
}

// segments returns the numeric segments of v as hashicorp/go-version holds
// them: at least three, plus any extra ones.
func (v Version) segments() []uint64 {
	return append([]uint64{v.major, v.minor, v.patch}, splitExtra(v.extra)...)
}

// gvCompare compares a and b exactly as hashicorp/go-version's
// Version.Compare does (module dialect), including its quirks: when the two
// have a different number of segments the pre-releases are not compared
// ("1.0.0.0" equals "1.0.0-beta1"), and pre-release parts are compared by
// its own rules.
func gvCompare(a, b Version) int {
	sa, sb := a.segments(), b.segments()
	if slices.Equal(sa, sb) {
		switch {
		case a.pre == "" && b.pre == "":
			return 0
		case a.pre == "":
			return 1
		case b.pre == "":
			return -1
		}
		return gvComparePrereleases(a.pre, b.pre)
	}
	for i := 0; i < max(len(sa), len(sb)); i++ {
		switch {
		case i >= len(sa):
			if !allZero(sb[i:]) {
				return -1
			}
			return 0
		case i >= len(sb):
			if !allZero(sa[i:]) {
				return 1
			}
			return 0
		}
		if c := cmpU(sa[i], sb[i]); c != 0 {
			return c
		}
	}
	return 0
}

func allZero(s []uint64) bool {
	for _, n := range s {
		if n != 0 {
			return false
		}
	}
	return true
}

// gvComparePrereleases is hashicorp/go-version's pre-release comparison.
func gvComparePrereleases(a, b string) int {
	if a == b {
		return 0
	}
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(as), len(bs)); i++ {
		var pa, pb string
		if i < len(as) {
			pa = as[i]
		}
		if i < len(bs) {
			pb = bs[i]
		}
		if c := gvComparePart(pa, pb); c != 0 {
			return c
		}
	}
	return 0
}

func gvComparePart(a, b string) int {
	if a == b {
		return 0
	}
	ai, aerr := strconv.ParseInt(a, 10, 64)
	bi, berr := strconv.ParseInt(b, 10, 64)
	an, bn := aerr == nil, berr == nil
	if a == "" {
		if bn {
			return -1
		}
		return 1
	}
	if b == "" {
		if an {
			return 1
		}
		return -1
	}
	switch {
	case an && !bn:
		return -1
	case !an && bn:
		return 1
	case !an && !bn:
		if a > b {
			return 1
		}
		return -1
	case ai > bi:
		return 1
	}
	return -1
}

// extraLess is apparentlymart/go-versions' ordering of dot-separated
// "extra" strings (VersionExtra.LessThan), which OpenTofu uses to order
// pre-releases and build metadata. It differs from semver precedence when
// one string runs out of parts first: it is then the smaller one, whatever
// its parts say.
func extraLess(a, b string) bool {
	if a == b {
		return false
	}
	for {
		d1, d2 := strings.IndexByte(a, '.'), strings.IndexByte(b, '.')
		switch {
		case d1 == -1 && d2 != -1:
			return true
		case d2 == -1 && d1 != -1:
			return false
		case d1 == -1:
			return extraPartLess(a, b)
		}
		if a[:d1] != b[:d2] {
			return extraPartLess(a[:d1], b[:d2])
		}
		a, b = a[d1+1:], b[d2+1:]
	}
}

func extraPartLess(a, b string) bool {
	an, bn := isDigits(a), isDigits(b)
	switch {
	case an && !bn:
		return true
	case bn && !an:
		return false
	case an:
		if len(a) != len(b) {
			return len(a) < len(b)
		}
	}
	return a < b
}
