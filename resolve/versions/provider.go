package versions

import (
	"fmt"
	"strconv"
	"strings"
)

// rawConstraint is one constraint as the provider-dialect scanner splits it:
// operator, separator (spaces, or a "v" the user should not have written),
// up to three numbers (numCt counts all), pre-release and metadata.
type rawConstraint struct {
	op, sep   string
	nums      [3]string
	numCt     int
	pre, meta string
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isExtraChar(c byte) bool { return isAlpha(c) || isDigit(c) || c == '.' || c == '-' }

// scanConstraint splits the constraint at the start of s and returns it with
// the unconsumed rest of s. It follows the scanner of
// apparentlymart/go-versions (the grammar "op sep nums pre? meta?"), including
// how it stops: at the first byte that does not fit, or at the end of input,
// keeping whatever complete parts it has seen.
func scanConstraint(s string) (rawConstraint, string) {
	var r rawConstraint
	p := 0
	// op: any bytes except digits, spaces, letters, '.' and '*'.
	for p < len(s) && !isDigit(s[p]) && !isSpace(s[p]) && !isAlpha(s[p]) && s[p] != '.' && s[p] != '*' {
		p++
	}
	r.op = s[:p]
	start := p
	for p < len(s) && (isSpace(s[p]) || s[p] == 'v') {
		p++
	}
	r.sep = s[start:p]
	// nums: num ('.' num)*, num = digits | '*' | 'x' | 'X'.
	for {
		if p >= len(s) {
			return r, ""
		}
		start = p
		switch c := s[p]; {
		case isDigit(c):
			for p < len(s) && isDigit(s[p]) {
				p++
			}
		case c == '*' || c == 'x' || c == 'X':
			p++
		default:
			return r, s[p:]
		}
		if r.numCt < len(r.nums) {
			r.nums[r.numCt] = s[start:p]
		}
		r.numCt++
		if p < len(s) && s[p] == '.' {
			p++
			continue
		}
		break
	}
	// pre: '-' extra+; meta: '+' extra+.
	for _, mark := range []byte{'-', '+'} {
		if p >= len(s) || s[p] != mark {
			continue
		}
		start = p + 1
		q := start
		for q < len(s) && isExtraChar(s[q]) {
			q++
		}
		if q == start {
			// The mark with nothing after it: the scanner stops here,
			// inside an unfinished part that is then dropped.
			if q >= len(s) {
				return r, ""
			}
			return r, s[q:]
		}
		if mark == '-' {
			r.pre = s[start:q]
		} else {
			r.meta = s[start:q]
		}
		p = q
	}
	return r, s[p:]
}

var numNames = [3]string{"major", "minor", "patch"}

// provider-dialect selection operators.
const (
	opEqual op = iota + 1
	opNotEqual
	opGreater
	opGreaterEq
	opLess
	opLessEq
	opPessimistic // provider: "~>" with 1 or 2 numbers (minor-only) or 3 (patch-only)
)

// op is a selection operator.
type op uint8

// opNames maps the operators both dialects share to their op ("" is "=").
var opNames = map[string]op{
	"": opEqual, "=": opEqual, "!=": opNotEqual,
	">": opGreater, ">=": opGreaterEq, "<": opLess, "<=": opLessEq,
	"~>": opPessimistic,
}

// parseProviderOne parses the constraint at the start of s, returning the
// unconsumed rest.
func parseProviderOne(s string) (term, string, error) {
	r, rest := scanConstraint(s)
	t := term{dialect: Provider}
	var ok bool
	switch t.op, ok = opNames[r.op]; {
	case ok:
	case r.op == "=<":
		return t, rest, fmt.Errorf("invalid constraint operator %q; did you mean \"<=\"?", r.op)
	case r.op == "=>":
		return t, rest, fmt.Errorf("invalid constraint operator %q; did you mean \">=\"?", r.op)
	default:
		return t, rest, fmt.Errorf("invalid constraint operator %q", r.op)
	}
	switch r.sep {
	case "":
	case " ":
		if r.op == "" {
			return t, rest, fmt.Errorf("extraneous spaces at start of specification")
		}
	default:
		if strings.ContainsRune(r.sep, 'v') {
			return t, rest, fmt.Errorf(`a "v" prefix should not be used when specifying versions`)
		}
		if r.op == "" {
			return t, rest, fmt.Errorf("extraneous spaces at start of specification")
		}
		return t, rest, fmt.Errorf("only one space is expected after the operator %q", r.op)
	}
	if r.numCt > 3 {
		return t, rest, fmt.Errorf("too many numbered portions; only three are allowed (major, minor, patch)")
	}
	for i, n := range r.nums {
		if n == "*" || n == "x" || n == "X" {
			return t, rest, fmt.Errorf("can't use wildcard for %s number; omit segments that should be unconstrained", numNames[i])
		}
	}
	// Unwritten numbers are unconstrained; every use OpenTofu makes of them
	// treats them as zero, so they are zero here.
	var nums [3]uint64
	for i, n := range r.nums {
		if n == "" {
			continue
		}
		v, err := strconv.ParseUint(n, 10, 64)
		if err != nil {
			// apparentlymart/go-versions panics here; we report it.
			return t, rest, fmt.Errorf("%s number %s is too large", numNames[i], n)
		}
		nums[i] = v
	}
	t.v = Version{major: nums[0], minor: nums[1], patch: nums[2], pre: r.pre, meta: r.meta, valid: true}
	t.segs = r.numCt
	return t, rest, nil
}

// parseProvider parses a comma-separated provider-dialect constraint list,
// as apparentlymart/go-versions' ParseRubyStyleMulti does.
func parseProvider(str string) ([]term, error) {
	var terms []term
	remain := strings.TrimSpace(str)
	for remain != "" {
		t, newRemain, err := parseProviderOne(remain)
		consumed := remain[:len(remain)-len(newRemain)]
		if err != nil {
			return nil, fmt.Errorf("invalid specification %q: %s", consumed, err)
		}
		remain = strings.TrimSpace(newRemain)
		if remain != "" {
			if strings.HasPrefix(remain, "v") {
				return nil, fmt.Errorf(`a "v" prefix should not be used when specifying versions`)
			}
			if !strings.HasPrefix(remain, ",") {
				return nil, fmt.Errorf("missing comma after %q", consumed)
			}
			remain = strings.TrimSpace(remain[1:])
		}
		if t.segs == 0 {
			// The peer library reads a lone operator (">=") as ">= 0.0.0";
			// that is never what was meant, so we reject it.
			return nil, fmt.Errorf("invalid specification %q: a version number is required", strings.TrimSpace(consumed))
		}
		terms = append(terms, t)
	}
	return terms, nil
}
