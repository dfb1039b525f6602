// Package hclguard refuses HCL input nested deeply enough to crash the HCL
// parsers, before they see it.
//
// The parsers of github.com/hashicorp/hcl/v2 (native syntax, JSON syntax
// and templates) and the evaluation of what they build are recursive: a
// file of ~130 KB holding 65,000 nested brackets, or a few hundred
// thousand "!" in a row, overflows the goroutine stack, which is a fatal
// error that no recover can catch (upstream hashicorp/hcl#809). Every
// place in tflock that hands bytes to an HCL parser first calls [Native],
// [JSON] or [Template], which scan the bytes without recursion and return
// an error diagnostic naming the file and line where a limit is crossed.
//
// Two quantities are measured, each far above anything a real lock file,
// CLI configuration or module needs, and far below what crashes:
//
//   - the depth: brackets "(", "[" and "{", quoted strings and heredocs
//     inside template interpolations, the interpolations "${" and "%{"
//     themselves, and template "if" and "for" directives; at most
//     [MaxDepth];
//   - the recursion cost: the depth plus, at each level, the operators of
//     the expression being read ("!!!!x" and "1+1+1" build trees as deep as
//     they are long, and "a ? b : c ? d : e" nests too); at most [MaxCost].
//
// String literals and comments are skipped as the HCL lexer skips them, so
// brackets in them do not count; template sequences in strings do, since
// the parsers recurse on those. In JSON, every string is scanned as a
// template, as HCL's JSON syntax evaluates strings as templates.
//
// The package imports nothing but hcl itself (for diagnostics).
package hclguard

import (
	"fmt"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
)

// The limits. A real file nests a few levels deep and has a few dozen
// operators in its longest expression.
const (
	// MaxDepth is the deepest nesting of brackets, template strings,
	// interpolations and template directives accepted.
	MaxDepth = 1000
	// MaxCost bounds the depth plus the operators of the enclosing
	// expressions.
	MaxCost = 10000
)

// Summary is the summary of the diagnostic this package returns.
const Summary = "Nesting too deep"

// Native checks src, HCL native syntax (a .tf, .hcl or lock file), as
// hclsyntax.ParseConfig would read it. It returns nil, or one error
// diagnostic whose subject is the position in filename where a limit is
// crossed.
func Native(src []byte, filename string) hcl.Diagnostics {
	s := newScanner(src, filename, hcl.InitialPos)
	s.code(false)
	return s.result()
}

// Template checks src as hclsyntax.ParseTemplate would read it: a template
// whose first byte is at start in filename.
func Template(src []byte, filename string, start hcl.Pos) hcl.Diagnostics {
	s := newScanner(src, filename, start)
	s.push(kindHeredoc, "") // a template with no end marker
	s.template()
	return s.result()
}

// JSON checks src, HCL's JSON syntax (a .tf.json or .tfrc.json file), as
// the hcl json package would read and evaluate it.
func JSON(src []byte, filename string) hcl.Diagnostics {
	s := newScanner(src, filename, hcl.InitialPos)
	s.json()
	return s.result()
}

// Frame kinds.
const (
	kindFile    = iota // the file body: newlines end its items
	kindParen          // ( ... )
	kindBrack          // [ ... ]
	kindBrace          // { ... }: newlines end items, as in a block body
	kindInterp         // ${ ... } or %{ ... }: code ended by "}"
	kindQuoted         // "...": a template ended by a quote or a newline
	kindHeredoc        // a heredoc template, ended by its marker line
	kindJSON           // a JSON array or object
)

// frame is one open level.
type frame struct {
	kind   int
	marker string // the heredoc's end marker
	ops    int    // operators in the current item of this level
	child  int    // largest cost of a level opened in the current item
	best   int    // largest cost of a finished item
	dirs   int    // open template if/for directives (template frames)
}

// scanner measures src in one pass, with an explicit stack.
type scanner struct {
	src      []byte
	i        int
	pos      hcl.Pos // position of src[i]
	filename string
	stack    []frame
	depth    int // levels open, directives included
	cost     int // depth plus the ops of every open level
	maxCost  int // the largest cost checked
	diag     *hcl.Diagnostic
}

func newScanner(src []byte, filename string, start hcl.Pos) *scanner {
	s := &scanner{src: src, filename: filename, pos: start}
	s.stack = append(s.stack, frame{kind: kindFile})
	return s
}

func (s *scanner) result() hcl.Diagnostics {
	if s.diag == nil {
		return nil
	}
	return hcl.Diagnostics{s.diag}
}

// fail records the diagnostic at the current position.
func (s *scanner) fail(detail string) {
	if s.diag != nil {
		return
	}
	end := s.pos
	end.Column++
	end.Byte++
	s.diag = &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  Summary,
		Detail:   detail + " tflock refuses such input rather than risk a crash of the HCL parser.",
		Subject:  &hcl.Range{Filename: s.filename, Start: s.pos, End: end},
	}
}

func (s *scanner) checkDepth() {
	if s.depth > MaxDepth {
		s.fail(fmt.Sprintf("Brackets, strings and template sequences are nested more than %d levels deep here.", MaxDepth))
	}
}

func (s *scanner) checkCost(cost int) {
	s.maxCost = max(s.maxCost, cost)
	if cost > MaxCost {
		s.fail(fmt.Sprintf("The expressions here nest more than %d levels deep (brackets, template sequences and the operators of the enclosing expressions).", MaxCost))
	}
}

func (s *scanner) top() *frame { return &s.stack[len(s.stack)-1] }

// push opens a level at the current position.
func (s *scanner) push(kind int, marker string) {
	s.stack = append(s.stack, frame{kind: kind, marker: marker})
	s.depth++
	s.cost++
	s.checkDepth()
	s.checkCost(s.cost)
}

// op counts an operator in the current item.
func (s *scanner) op() {
	s.top().ops++
	s.cost++
	s.checkCost(s.cost)
}

// endItem ends the current item of the top level: an argument, a list
// element, an object attribute.
func (s *scanner) endItem() {
	f := s.top()
	// Operators after a nested level still enclose it: a left-deep chain
	// of binary operators evaluates its first operand at the bottom.
	s.checkCost(s.cost + f.child)
	f.best = max(f.best, f.ops+f.child)
	s.cost -= f.ops
	f.ops, f.child = 0, 0
}

// pop closes the top level; the bottom one (the file) never closes.
func (s *scanner) pop() {
	if len(s.stack) == 1 {
		return
	}
	s.endItem()
	f := s.top()
	c := 1 + max(f.best, f.dirs)
	s.depth -= 1 + f.dirs
	s.cost -= 1 + f.dirs
	s.stack = s.stack[:len(s.stack)-1]
	p := s.top()
	p.child = max(p.child, c+p.dirs)
}

// advance moves past n bytes, none of them a newline.
func (s *scanner) advance(n int) {
	s.i += n
	s.pos.Byte += n
	s.pos.Column += n
}

// newline moves past a newline at s.i ("\n" or "\r\n").
func (s *scanner) newline() {
	if s.src[s.i] == '\r' {
		s.i++
		s.pos.Byte++
	}
	s.i++
	s.pos.Byte++
	s.pos.Line++
	s.pos.Column = 1
}

func (s *scanner) at(prefix string) bool {
	return len(s.src)-s.i >= len(prefix) && string(s.src[s.i:s.i+len(prefix)]) == prefix
}

func (s *scanner) atNewline() bool {
	return s.src[s.i] == '\n' || s.at("\r\n")
}

// code scans native-syntax code until the end of src or, when interp is
// set, until the "}" that closes the interpolation at the top of the
// stack.
func (s *scanner) code(interp bool) {
	base := len(s.stack)
	for s.i < len(s.src) && s.diag == nil {
		c := s.src[s.i]
		switch {
		case s.atNewline():
			if k := s.top().kind; k == kindFile || k == kindBrace {
				s.endItem()
			}
			s.newline()
		case c == '#' || s.at("//"):
			for s.i < len(s.src) && !s.atNewline() {
				s.advance(1)
			}
		case s.at("/*"):
			s.advance(2)
			for s.i < len(s.src) && !s.at("*/") {
				if s.atNewline() {
					s.newline()
				} else {
					s.advance(1)
				}
			}
			if s.i < len(s.src) {
				s.advance(2)
			}
		case c == '"':
			s.push(kindQuoted, "")
			s.advance(1)
			s.template()
		case c == '<' && s.heredoc():
		case c == '(':
			s.push(kindParen, "")
			s.advance(1)
		case c == '[':
			// An index ("a[b]") nests what it indexes, as an operator does.
			s.op()
			s.push(kindBrack, "")
			s.advance(1)
		case c == '{':
			s.push(kindBrace, "")
			s.advance(1)
		case c == '}':
			// As the lexer does, "}" closes the nearest brace or
			// interpolation; unclosed parentheses and brackets inside it
			// are errors the parser reports.
			for len(s.stack) > 1 && (s.top().kind == kindParen || s.top().kind == kindBrack) && !(interp && len(s.stack) == base) {
				s.pop()
			}
			closesInterp := interp && len(s.stack) == base
			s.advance(1)
			s.pop()
			if closesInterp {
				return
			}
		case c == ')' || c == ']':
			if k := s.top().kind; (k == kindParen && c == ')' || k == kindBrack && c == ']') && !(interp && len(s.stack) == base) {
				s.pop()
			}
			s.advance(1)
		case c == ',':
			s.endItem()
			s.advance(1)
		case c == '!' || c == '-' || c == '+' || c == '*' || c == '/' || c == '%' ||
			c == '<' || c == '>' || c == '=' || c == '&' || c == '|' || c == '?':
			s.op()
			s.advance(1)
		default:
			s.advance(1)
		}
	}
}

// heredoc scans a heredoc if one begins at s.i ("<<MARKER" or
// "<<-MARKER" then a newline) and reports whether it did.
func (s *scanner) heredoc() bool {
	j := s.i
	if !s.at("<<") {
		return false
	}
	j += 2
	if j < len(s.src) && s.src[j] == '-' {
		j++
	}
	start := j
	for j < len(s.src) && (isLetter(s.src[j]) || j > start && (isDigit(s.src[j]) || s.src[j] == '-')) {
		j++
	}
	if j == start {
		return false
	}
	marker := string(s.src[start:j])
	if !(j < len(s.src) && s.src[j] == '\n' || j+1 < len(s.src) && s.src[j] == '\r' && s.src[j+1] == '\n') {
		return false
	}
	s.push(kindHeredoc, marker)
	s.advance(j - s.i)
	s.newline()
	if !s.endsHeredoc() {
		s.template()
	}
	return true
}

// endsHeredoc reports whether the line at s.i (the start of a line in a
// heredoc) is its end marker, and if so moves past the marker and closes
// the heredoc.
func (s *scanner) endsHeredoc() bool {
	f := s.top()
	if f.kind != kindHeredoc || f.marker == "" {
		return false
	}
	j := s.i
	for j < len(s.src) && (s.src[j] == ' ' || s.src[j] == '\t') {
		j++
	}
	if len(s.src)-j < len(f.marker) || string(s.src[j:j+len(f.marker)]) != f.marker {
		return false
	}
	k := j + len(f.marker)
	if k < len(s.src) && s.src[k] != '\n' && s.src[k] != '\r' {
		return false
	}
	s.advance(k - s.i)
	s.pop()
	return true
}

// template scans the template at the top of the stack (a quoted string or
// a heredoc) until it ends.
func (s *scanner) template() {
	quoted := s.top().kind == kindQuoted
	for s.i < len(s.src) && s.diag == nil {
		c := s.src[s.i]
		switch {
		case s.atNewline():
			if quoted {
				// A quoted template ends at the end of the line (the
				// lexer reports it unterminated).
				s.pop()
				return
			}
			s.newline()
			if s.endsHeredoc() {
				return
			}
		case quoted && c == '\\':
			s.advance(1)
			if s.i < len(s.src) && !s.atNewline() {
				_, n := utf8.DecodeRune(s.src[s.i:])
				s.advance(n)
			}
		case quoted && c == '"':
			s.advance(1)
			s.pop()
			return
		case s.at("$${") || s.at("%%{"):
			s.advance(3)
		case s.at("${"):
			s.push(kindInterp, "")
			s.advance(2)
			s.code(true)
		case s.at("%{"):
			s.directive()
			s.push(kindInterp, "")
			s.advance(2)
			s.code(true)
		default:
			s.advance(1)
		}
	}
}

// directive counts the template directive starting at s.i ("%{"): "if"
// and "for" open a level that "endif" and "endfor" close.
func (s *scanner) directive() {
	j := s.i + 2
	if j < len(s.src) && s.src[j] == '~' {
		j++
	}
	for j < len(s.src) && (s.src[j] == ' ' || s.src[j] == '\t' || s.src[j] == '\n' || s.src[j] == '\r') {
		j++
	}
	k := j
	for k < len(s.src) && isLetter(s.src[k]) {
		k++
	}
	f := s.top()
	switch string(s.src[j:k]) {
	case "if", "for":
		f.dirs++
		s.depth++
		s.cost++
		s.checkDepth()
		s.checkCost(s.cost)
	case "endif", "endfor":
		if f.dirs > 0 {
			f.best = max(f.best, f.dirs)
			f.dirs--
			s.depth--
			s.cost--
		}
	}
}

// json scans HCL's JSON syntax: arrays and objects nest, and every string
// is a template.
func (s *scanner) json() {
	for s.i < len(s.src) && s.diag == nil {
		c := s.src[s.i]
		switch {
		case s.atNewline():
			s.newline()
		case c == '[' || c == '{':
			s.push(kindJSON, "")
			s.advance(1)
		case c == ']' || c == '}':
			s.pop()
			s.advance(1)
		case c == ',':
			s.endItem()
			s.advance(1)
		case c == '"':
			s.jsonString()
		default:
			s.advance(1)
		}
	}
}

// jsonString decodes the JSON string at s.i and scans its value as a
// template nested at the current level.
func (s *scanner) jsonString() {
	start := s.pos
	s.advance(1)
	var val []byte
	for s.i < len(s.src) {
		c := s.src[s.i]
		if c == '"' {
			s.advance(1)
			break
		}
		if s.atNewline() {
			break // not valid JSON; the parser reports it
		}
		if c == '\\' && s.i+1 < len(s.src) {
			switch e := s.src[s.i+1]; e {
			case 'n', 't', 'r', 'b', 'f':
				val = append(val, ' ')
			case 'u':
				val = append(val, '?')
				s.advance(4)
			default:
				val = append(val, e)
			}
			s.advance(2)
			continue
		}
		val = append(val, c)
		s.advance(1)
	}
	if !containsTemplate(val) {
		return
	}
	// Scan the value with this scanner's stack, reporting at the string.
	sub := &scanner{src: val, filename: s.filename, pos: start, stack: s.stack, depth: s.depth, cost: s.cost}
	sub.push(kindHeredoc, "")
	sub.template()
	s.maxCost = max(s.maxCost, sub.maxCost)
	if sub.diag != nil {
		sub.diag.Subject.Start, sub.diag.Subject.End = start, s.pos
		s.diag = sub.diag
		return
	}
	for len(sub.stack) > len(s.stack) {
		sub.pop()
	}
	s.stack = sub.stack[:len(s.stack)]
	s.checkCost(s.cost + s.top().child)
}

func containsTemplate(b []byte) bool {
	for i := 0; i+1 < len(b); i++ {
		if (b[i] == '$' || b[i] == '%') && b[i+1] == '{' {
			return true
		}
	}
	return false
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
