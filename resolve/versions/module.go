package versions

import (
	"slices"
	"strings"

	"github.com/tflock/tflock/internal/lazyre"
)

// moduleConstraintRE is hashicorp/go-version's grammar for one constraint.
var moduleConstraintRE = lazyre.New(`^\s*(~>|>=|<=|!=|=|>|<|)\s*(` + moduleVersionRaw + `)\s*$`)

// ParseModuleConstraints parses a module version constraint, as OpenTofu
// does for the `version` argument of a `module` block (hashicorp/go-version):
// comma-separated terms, each an optional operator (=, !=, >, >=, <, <=, ~>)
// and a version in the lenient module form of [ParseModuleVersion] ("v"
// prefix, any number of numeric segments). Unlike the provider dialect, the
// empty string is an error, as it is for OpenTofu (a module call without a
// version argument has no constraint: use the zero Constraints). Errors are
// *ConstraintError with go-version's message. See the package
// documentation for the exact semantics.
func ParseModuleConstraints(s string) (Constraints, error) {
	parts := strings.Split(s, ",")
	terms := make([]term, 0, len(parts))
	for _, single := range parts {
		m := moduleConstraintRE().FindStringSubmatch(single)
		if m == nil {
			return Constraints{}, &ConstraintError{Input: s, Dialect: Module, Msg: "malformed constraint: " + single}
		}
		v, si, err := moduleVersionFromMatch(m[3:])
		if err != nil {
			return Constraints{}, &ConstraintError{Input: s, Dialect: Module, Msg: err.Error()}
		}
		// The regular expression admits only the operators of opNames.
		terms = append(terms, term{dialect: Module, op: opNames[m[1]], v: v, segs: si})
	}
	return Constraints{terms: terms}, nil
}

// allowsModule is hashicorp/go-version's Constraint.Check for one term.
func (t term) allowsModule(v Version) bool {
	c := t.v
	switch t.op {
	case opEqual:
		return gvCompare(v, c) == 0
	case opNotEqual:
		return gvCompare(v, c) != 0
	case opGreater:
		return gvPrereleaseCheck(v, c) && gvCompare(v, c) > 0
	case opGreaterEq:
		return gvPrereleaseCheck(v, c) && gvCompare(v, c) >= 0
	case opLess:
		return gvPrereleaseCheck(v, c) && gvCompare(v, c) < 0
	case opLessEq:
		return gvPrereleaseCheck(v, c) && gvCompare(v, c) <= 0
	case opPessimistic:
		if !gvPrereleaseCheck(v, c) || (c.pre != "" && v.pre == "") {
			return false
		}
		if gvCompare(v, c) < 0 {
			return false
		}
		cs, vs := c.segments(), v.segments()
		if len(cs) > len(vs) {
			return false
		}
		for i := 0; i < t.segs-1; i++ {
			if vs[i] != cs[i] {
				return false
			}
		}
		return cs[len(cs)-1] <= vs[len(cs)-1]
	}
	return false
}

// gvPrereleaseCheck is go-version's rule for ordering operators: a
// constraint with a pre-release matches only pre-releases of the same
// numbers (and releases), and a constraint without one matches no
// pre-release.
func gvPrereleaseCheck(v, c Version) bool {
	switch vPre, cPre := v.pre != "", c.pre != ""; {
	case cPre && vPre:
		return slices.Equal(c.segments(), v.segments())
	case !cPre && vPre:
		return false
	}
	return true
}
