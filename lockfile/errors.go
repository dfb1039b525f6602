package lockfile

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// ParseError reports a lock file that could not be parsed. It is returned
// only when there is at least one error diagnostic, so a nil *ParseError is
// never wrapped in a non-nil error.
type ParseError struct {
	// Filename is the name the source was parsed under.
	Filename string
	// Diagnostics holds every diagnostic of the parse, errors and warnings,
	// in source order. Each has a Summary, a Detail and a Subject.
	Diagnostics hcl.Diagnostics
}

// Error returns the first error diagnostic with its position, and how many
// more errors there are.
func (e *ParseError) Error() string {
	var first *hcl.Diagnostic
	n := 0
	for _, d := range e.Diagnostics {
		if d.Severity == hcl.DiagError {
			if first == nil {
				first = d
			}
			n++
		}
	}
	if first == nil {
		return fmt.Sprintf("%s: invalid lock file", e.Filename)
	}
	var b strings.Builder
	if first.Subject != nil {
		fmt.Fprintf(&b, "%s:%d,%d: ", first.Subject.Filename, first.Subject.Start.Line, first.Subject.Start.Column)
	} else {
		fmt.Fprintf(&b, "%s: ", e.Filename)
	}
	b.WriteString(first.Summary)
	if first.Detail != "" {
		b.WriteString("; ")
		b.WriteString(first.Detail)
	}
	if n > 1 {
		fmt.Fprintf(&b, " (and %d more error", n-1)
		if n > 2 {
			b.WriteString("s")
		}
		b.WriteString(")")
	}
	return b.String()
}
