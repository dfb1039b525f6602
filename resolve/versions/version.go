package versions

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/tflock/tflock/internal/lazyre"
)

// Version is a version number: major, minor and patch numbers, optional
// further numeric segments (module dialect only, as in "1.0.9.5"), an optional
// pre-release and optional build metadata.
//
// Version is a comparable value: it is normalised when built (no "v" prefix,
// no leading zeros in numbers, missing minor and patch numbers filled with
// zero), so two versions with the same canonical string are ==, and a
// Version can be used as a map key. The zero value is "no version"; see
// [Version.IsZero].
type Version struct {
	major, minor, patch uint64
	// extra holds the numeric segments after the patch number, canonical
	// decimal, dot-separated ("5" for "1.0.9.5"); empty for semver versions.
	extra string
	pre   string
	meta  string
	valid bool
}

// Parse parses a strict, canonical semantic version: "1.2.3", "1.2.3-beta.1",
// "1.2.3+build". It rejects a "v" prefix, missing minor or patch numbers,
// leading zeros and numbers that do not fit in 64 bits. Provider versions
// from registries and lock files use this form.
//
// Parsing and validation are delegated to github.com/Masterminds/semver/v3.
func Parse(s string) (Version, error) {
	if s == "" {
		return Version{}, &VersionError{Input: s, Reason: "empty version string"}
	}
	if s[0] == 'v' || s[0] == 'V' {
		return Version{}, &VersionError{Input: s, Reason: `a "v" prefix should not be used`}
	}
	sv, err := semver.StrictNewVersion(s)
	if err != nil {
		return Version{}, &VersionError{Input: s, Reason: strictReason(s, err)}
	}
	return Version{
		major: sv.Major(),
		minor: sv.Minor(),
		patch: sv.Patch(),
		pre:   sv.Prerelease(),
		meta:  sv.Metadata(),
		valid: true,
	}, nil
}

// strictReason turns a Masterminds error into a sentence naming the problem.
func strictReason(s string, err error) string {
	core := s
	if i := strings.IndexAny(core, "-+"); i >= 0 {
		core = core[:i]
	}
	parts := strings.Split(core, ".")
	switch {
	case len(parts) < 3:
		return "major, minor and patch numbers are all required (for example 1.2.0)"
	case len(parts) > 3:
		return "too many numbered portions; only three are allowed (major, minor, patch)"
	}
	for _, p := range parts {
		if len(p) > 1 && p[0] == '0' && isDigits(p) {
			return fmt.Sprintf("number %q has a leading zero", p)
		}
		if isDigits(p) && p != "" {
			if _, perr := strconv.ParseUint(p, 10, 64); perr != nil {
				return fmt.Sprintf("number %s is too large", p)
			}
		}
	}
	return err.Error()
}

// MustParse is like [Parse] but panics if s is not a valid version. It is
// meant for constants in programs and tests.
func MustParse(s string) Version {
	v, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return v
}

// moduleVersionRE is the version grammar of hashicorp/go-version, which
// OpenTofu uses for module versions and module version constraints.
const moduleVersionRaw = `v?([0-9]+(\.[0-9]+)*?)` +
	`(-([0-9]+[0-9A-Za-z\-~]*(\.[0-9A-Za-z\-~]+)*)|(-?([A-Za-z\-~]+[0-9A-Za-z\-~]*(\.[0-9A-Za-z\-~]+)*)))?` +
	`(\+([0-9A-Za-z\-~]+(\.[0-9A-Za-z\-~]+)*))?`

var moduleVersionRE = lazyre.New(`^` + moduleVersionRaw + `$`)

// ParseModuleVersion parses a version in the lenient module dialect
// (hashicorp/go-version, as OpenTofu applies it to module versions): an
// optional "v" prefix, one or more numeric segments (missing minor and patch
// numbers are zero: "1.2" is 1.2.0; segments after the patch number are kept:
// "1.0.9.5"), leading zeros allowed ("01.2.3" is 1.2.3), and a pre-release
// that may omit its "-" when it starts with a letter ("1.0beta" is
// 1.0.0-beta). Numbers must fit in a signed 64-bit integer.
func ParseModuleVersion(s string) (Version, error) {
	m := moduleVersionRE().FindStringSubmatch(s)
	if m == nil {
		return Version{}, &VersionError{Input: s, Dialect: Module, Reason: "malformed version: " + s}
	}
	v, _, err := moduleVersionFromMatch(m[1:])
	if err != nil {
		return Version{}, &VersionError{Input: s, Dialect: Module, Reason: err.Error()}
	}
	return v, nil
}

// moduleVersionFromMatch builds a Version from the submatches of
// moduleVersionRaw (m[0] is the numeric part) and returns the number of
// numeric segments written.
func moduleVersionFromMatch(m []string) (Version, int, error) {
	segs := strings.Split(m[0], ".")
	nums := make([]uint64, len(segs))
	for i, str := range segs {
		n, err := strconv.ParseInt(str, 10, 64)
		if err != nil {
			return Version{}, 0, fmt.Errorf("error parsing version: %w", err)
		}
		nums[i] = uint64(n)
	}
	v := Version{valid: true}
	v.major = nums[0]
	if len(nums) > 1 {
		v.minor = nums[1]
	}
	if len(nums) > 2 {
		v.patch = nums[2]
	}
	if len(nums) > 3 {
		var b strings.Builder
		for i, n := range nums[3:] {
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(strconv.FormatUint(n, 10))
		}
		v.extra = b.String()
	}
	v.pre = m[6]
	if v.pre == "" {
		v.pre = m[3]
	}
	v.meta = m[9]
	return v, len(nums), nil
}

// IsZero reports whether v is the zero Version, meaning "no version".
// (Version 0.0.0 is not zero.)
func (v Version) IsZero() bool { return !v.valid }

// Major returns the major version number.
func (v Version) Major() uint64 { return v.major }

// Minor returns the minor version number.
func (v Version) Minor() uint64 { return v.minor }

// Patch returns the patch version number.
func (v Version) Patch() uint64 { return v.patch }

// Prerelease returns the pre-release part without its "-" ("beta.1" for
// "1.2.3-beta.1"), or "" for a release.
func (v Version) Prerelease() string { return v.pre }

// Metadata returns the build metadata without its "+", or "".
func (v Version) Metadata() string { return v.meta }

// String returns the canonical form of v ("1.2.3", "1.2.3-beta.1+build"),
// or "" for the zero Version.
func (v Version) String() string {
	if !v.valid {
		return ""
	}
	var b strings.Builder
	v.write(&b, 3)
	return b.String()
}

// write writes v to b with only its first n (1 to 3) numbers, then any
// extra numbers, the pre-release and the metadata.
func (v Version) write(b *strings.Builder, n int) {
	b.WriteString(strconv.FormatUint(v.major, 10))
	if n >= 2 {
		b.WriteByte('.')
		b.WriteString(strconv.FormatUint(v.minor, 10))
	}
	if n >= 3 {
		b.WriteByte('.')
		b.WriteString(strconv.FormatUint(v.patch, 10))
	}
	if v.extra != "" {
		b.WriteByte('.')
		b.WriteString(v.extra)
	}
	if v.pre != "" {
		b.WriteByte('-')
		b.WriteString(v.pre)
	}
	if v.meta != "" {
		b.WriteByte('+')
		b.WriteString(v.meta)
	}
}

// GoString returns a Go expression that rebuilds v, for test diffs.
func (v Version) GoString() string {
	if !v.valid {
		return "versions.Version{}"
	}
	if v.extra == "" && semverIdents(v.pre, true) && semverIdents(v.meta, false) {
		return fmt.Sprintf("versions.MustParse(%q)", v.String())
	}
	return fmt.Sprintf("versions.MustParseModuleVersion(%q)", v.String())
}

// MustParseModuleVersion is like [ParseModuleVersion] but panics if s is
// not valid.
func MustParseModuleVersion(s string) Version {
	v, err := ParseModuleVersion(s)
	if err != nil {
		panic(err)
	}
	return v
}

// MarshalText implements encoding.TextMarshaler: the canonical string.
func (v Version) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler. It accepts exactly the
// canonical forms that [Version.String] produces (so a module version with
// more than three numeric segments round-trips), and the empty string for
// the zero Version.
func (v *Version) UnmarshalText(text []byte) error {
	s := string(text)
	if s == "" {
		*v = Version{}
		return nil
	}
	p, err := Parse(s)
	if err == nil {
		*v = p
		return nil
	}
	if m, merr := ParseModuleVersion(s); merr == nil && m.String() == s {
		*v = m
		return nil
	}
	return err
}

// Compare returns -1, 0 or +1 as v sorts before, equal to or after o. The
// order is semantic-version precedence (numbers, then pre-release per the
// semver specification, a release after its pre-releases), extended to
// extra numeric segments (missing ones count as zero); ties are then broken
// by the number of segments written and by the build metadata (as text), so
// that Compare returns 0 only when v == o. The zero Version sorts first.
func (v Version) Compare(o Version) int {
	if v.valid != o.valid {
		if !v.valid {
			return -1
		}
		return 1
	}
	if c := precedence(v, o); c != 0 {
		return c
	}
	if c := compareInt(strings.Count(v.extra, ".")+boolInt(v.extra != ""), strings.Count(o.extra, ".")+boolInt(o.extra != "")); c != 0 {
		return c
	}
	return strings.Compare(v.meta, o.meta)
}

// LessThan reports whether v sorts before o (see [Version.Compare]).
func (v Version) LessThan(o Version) bool { return v.Compare(o) < 0 }

// Sort sorts vs in ascending order of [Version.Compare].
func Sort(vs []Version) {
	slices.SortFunc(vs, Version.Compare)
}

// List is a list of versions, for example the versions a registry offers.
type List []Version

// Sort sorts l in ascending order.
func (l List) Sort() { Sort(l) }

// Newest returns the highest version in l allowed by c; see [Newest].
func (l List) Newest(c Constraints) (Version, bool) { return Newest(l, c) }

// Filter returns the versions of l that c allows, in their original order.
func (l List) Filter(c Constraints) List {
	var out List
	for _, v := range l {
		if c.Allows(v) {
			out = append(out, v)
		}
	}
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func compareInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// semverIdents reports whether s is a valid (possibly empty) dot-separated
// list of semver identifiers; pre forbids leading zeros in numeric ones.
func semverIdents(s string, pre bool) bool {
	if s == "" {
		return true
	}
	for _, id := range strings.Split(s, ".") {
		if id == "" {
			return false
		}
		for i := 0; i < len(id); i++ {
			c := id[i]
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-') {
				return false
			}
		}
		if pre && len(id) > 1 && id[0] == '0' && isDigits(id) {
			return false
		}
	}
	return true
}
