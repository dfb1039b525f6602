package versions

import (
	"slices"
	"strconv"
	"strings"
)

// Dialect names one of the two constraint grammars OpenTofu uses.
type Dialect uint8

const (
	// Provider is the provider-constraint dialect (OpenTofu's
	// getproviders.ParseVersionConstraints: apparentlymart/go-versions,
	// "Ruby style"). It is the zero value.
	Provider Dialect = iota
	// Module is the module-constraint dialect (hashicorp/go-version, plus
	// the rule that a pre-release must be requested exactly).
	Module
)

// String returns "provider" or "module".
func (d Dialect) String() string {
	if d == Module {
		return "module"
	}
	return "provider"
}

// term is one selection: an operator applied to a boundary version.
type term struct {
	dialect Dialect
	op      op
	v       Version // the boundary, numbers zero-filled, as written otherwise
	segs    int     // how many numeric segments were written
}

// Constraints is a parsed version constraint: a list of terms that must all
// hold. It is an immutable value; the zero value has no terms and allows
// every release (but no pre-release). Build one with [ParseConstraints],
// [ParseModuleConstraints] or [Intersect].
type Constraints struct {
	terms []term
}

// ParseConstraints parses a provider version constraint, as OpenTofu does
// for `required_providers` version arguments and for the `constraints`
// attribute of the lock file: comma-separated terms, each an optional
// operator (=, !=, >, >=, <, <=, ~>) and a version of one to three numbers
// with optional pre-release and metadata. The empty (or all-space) string
// gives the zero Constraints. Errors are *ConstraintError with OpenTofu's
// message. See the package documentation for the exact semantics.
func ParseConstraints(s string) (Constraints, error) {
	terms, err := parseProvider(s)
	if err != nil {
		return Constraints{}, &ConstraintError{Input: s, Dialect: Provider, Msg: err.Error()}
	}
	return Constraints{terms: terms}, nil
}

// MustParseConstraints is like [ParseConstraints] but panics on error. It is
// meant for constants in programs and tests.
func MustParseConstraints(s string) Constraints {
	c, err := ParseConstraints(s)
	if err != nil {
		panic(err)
	}
	return c
}

// MustParseModuleConstraints is like [ParseModuleConstraints] but panics on
// error.
func MustParseModuleConstraints(s string) Constraints {
	c, err := ParseModuleConstraints(s)
	if err != nil {
		panic(err)
	}
	return c
}

// IsZero reports whether c has no terms at all. The zero Constraints allows
// every release and no pre-release.
func (c Constraints) IsZero() bool { return len(c.terms) == 0 }

// Dialect returns the dialect c was parsed in (that of its first term for
// an intersection; Provider for the zero Constraints).
func (c Constraints) Dialect() Dialect {
	if len(c.terms) == 0 {
		return Provider
	}
	return c.terms[0].dialect
}

// Len returns the number of terms in c, duplicates included.
func (c Constraints) Len() int { return len(c.terms) }

// Intersect returns the constraints that hold when all of cs hold: the
// concatenation of their terms, as OpenTofu combines the constraints of
// every module that requires one provider. Each term keeps its dialect.
func Intersect(cs ...Constraints) Constraints {
	var n int
	for _, c := range cs {
		n += len(c.terms)
	}
	if n == 0 {
		return Constraints{}
	}
	terms := make([]term, 0, n)
	for _, c := range cs {
		terms = append(terms, c.terms...)
	}
	return Constraints{terms: terms}
}

// Allows reports whether v satisfies every term of c. A pre-release version
// is allowed only if some "=" term names exactly that version (build
// metadata included) and every other term allows it too. The zero Version
// is never allowed.
func (c Constraints) Allows(v Version) bool {
	if !v.valid {
		return false
	}
	requested := v.pre == ""
	for _, t := range c.terms {
		if !t.allows(v) {
			return false
		}
		if !requested && t.op == opEqual && t.v == v {
			requested = true
		}
	}
	return requested
}

// allows evaluates one term alone (without the set-wide pre-release rule).
func (t term) allows(v Version) bool {
	if t.dialect == Module {
		return t.allowsModule(v)
	}
	if v.isUnspecified() {
		// go-versions' Set.Has: 0.0.0 belongs to no constrained set.
		return false
	}
	switch t.op {
	case opEqual:
		return v == t.v
	case opNotEqual:
		return v != t.v
	case opGreater:
		return providerPrecedence(v, t.v) > 0
	case opGreaterEq:
		return providerPrecedence(v, t.v) >= 0
	case opLess:
		return providerPrecedence(v, t.v) < 0
	case opLessEq:
		return providerPrecedence(v, t.v) <= 0
	case opPessimistic:
		if providerPrecedence(v, t.v) < 0 {
			return false
		}
		upper := Version{valid: true}
		if t.segs == 3 {
			upper.major, upper.minor = t.v.major, t.v.minor+1
		} else {
			upper.major = t.v.major + 1
		}
		return precedence(v, upper) < 0
	}
	return false
}

// String returns the canonical form of c, exactly as OpenTofu writes the
// `constraints` attribute of a provider in the lock file
// (getproviders.VersionConstraintsString): numbers zero-filled ("2" is
// written "2.0.0"), a "~>" with one or two numbers written with two ("~> 3"
// becomes "~> 3.0") and with three numbers written with three, exact
// versions bare (no "="), duplicates removed, and terms sorted by version,
// then by operator in the order > >= = ~>(3 numbers) ~>(2 numbers) <= < !=.
// For example ">= 2, >= 1.2, < 1.3" becomes ">= 1.2.0, < 1.3.0, >= 2.0.0".
//
// Module-dialect terms keep their meaning, so they are written differently:
// a "~>" term keeps the number of segments it was written with (in the
// module dialect "~> 1" and "~> 1.0" differ), and extra segments are kept.
// ParseConstraints(c.String()) (or ParseModuleConstraints for the module
// dialect) gives back c's terms, deduplicated and sorted.
func (c Constraints) String() string {
	terms := c.canonicalTerms()
	var b strings.Builder
	for i, t := range terms {
		if i > 0 {
			b.WriteString(", ")
		}
		t.write(&b)
	}
	return b.String()
}

// canonicalTerms returns the terms of c deduplicated and sorted as String
// writes them.
func (c Constraints) canonicalTerms() []term {
	terms := slices.Clone(c.terms)
	for i := range terms {
		// The written segment count matters only to "~>"; in the provider
		// dialect only "three numbers" versus "fewer" matters.
		switch {
		case terms[i].op != opPessimistic:
			terms[i].segs = 0
		case terms[i].dialect == Provider && terms[i].segs != 3:
			terms[i].segs = 2
		}
	}
	slices.SortStableFunc(terms, compareTerms)
	return slices.CompactFunc(terms, func(a, b term) bool { return a == b })
}

// opPriority is OpenTofu's order of operators on the same version.
func (t term) opPriority() int {
	switch t.op {
	case opGreater:
		return 1
	case opGreaterEq:
		return 2
	case opEqual:
		return 3
	case opPessimistic:
		if t.segs >= 3 {
			return 4
		}
		return 5
	case opLessEq:
		return 6
	case opLess:
		return 7
	case opNotEqual:
		return 8
	}
	return 0
}

func compareTerms(a, b term) int {
	order := precedence
	if a.dialect == Provider && b.dialect == Provider {
		order = providerPrecedence
	}
	if c := order(a.v, b.v); c != 0 {
		return c
	}
	if a.v.meta != b.v.meta {
		if extraLess(a.v.meta, b.v.meta) {
			return -1
		}
		return 1
	}
	if c := compareInt(a.opPriority(), b.opPriority()); c != 0 {
		return c
	}
	// Beyond OpenTofu's order (which never sees these): dialect, then the
	// written segment count, then the extra segments as text.
	if c := compareInt(int(a.dialect), int(b.dialect)); c != 0 {
		return c
	}
	if c := compareInt(a.segs, b.segs); c != 0 {
		return c
	}
	return strings.Compare(a.v.extra, b.v.extra)
}

func (t term) write(b *strings.Builder) {
	switch t.op {
	case opNotEqual:
		b.WriteString("!= ")
	case opGreater:
		b.WriteString("> ")
	case opGreaterEq:
		b.WriteString(">= ")
	case opLess:
		b.WriteString("< ")
	case opLessEq:
		b.WriteString("<= ")
	case opPessimistic:
		b.WriteString("~> ")
	}
	n := 3
	if t.op == opPessimistic {
		if t.dialect == Provider {
			n = t.segs
		} else {
			n = max(t.segs, 1)
		}
	}
	t.v.write(b, n)
}

// GoString returns a Go expression that rebuilds c, for test diffs.
func (c Constraints) GoString() string {
	if c.Dialect() == Module {
		return "versions.MustParseModuleConstraints(" + strconv.Quote(c.String()) + ")"
	}
	return "versions.MustParseConstraints(" + strconv.Quote(c.String()) + ")"
}

// MarshalText implements encoding.TextMarshaler with [Constraints.String].
func (c Constraints) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler with
// [ParseConstraints] (the provider dialect, as in the lock file).
func (c *Constraints) UnmarshalText(text []byte) error {
	p, err := ParseConstraints(string(text))
	if err != nil {
		return err
	}
	*c = p
	return nil
}

// Newest returns the highest version in list (by [Version.Compare]) that c
// allows, and false if there is none. list need not be sorted.
func Newest(list []Version, c Constraints) (Version, bool) {
	var best Version
	for _, v := range list {
		if c.Allows(v) && (!best.valid || best.Compare(v) < 0) {
			best = v
		}
	}
	return best, best.valid
}
