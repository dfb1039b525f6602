package address

import (
	"errors"
	"fmt"
)

// ErrUnknownSourceType is wrapped by the error for a module source that is
// neither local, nor a registry address, nor recognised by any go-getter
// detector: usually a relative path written without "./".
var ErrUnknownSourceType = errors.New("OpenTofu cannot detect a supported external module source type")

// ParseError reports a source address that could not be parsed. Input has
// its credentials removed (see [Redact]).
type ParseError struct {
	Kind  string // "module" or "provider"
	Input string // the address as given, redacted
	Err   error  // the reason
}

// Error names the kind of address, quotes the (redacted) input and gives the reason.
func (e *ParseError) Error() string {
	return fmt.Sprintf("invalid %s source %q: %v", e.Kind, e.Input, e.Err)
}

// Unwrap returns the reason.
func (e *ParseError) Unwrap() error { return e.Err }

func moduleError(raw string, err error) error {
	return &ParseError{Kind: "module", Input: Redact(raw), Err: redactError{err}}
}

// redactError redacts the text of an error that may quote the input,
// keeping it unwrappable.
type redactError struct{ err error }

func (r redactError) Error() string { return Redact(r.err.Error()) }
func (r redactError) Unwrap() error { return r.err }
