package source

import (
	"errors"
	"fmt"

	"github.com/tflock/tflock/source/internal/display"
)

// Sentinel errors. Sources wrap them (usually inside an [*Error]); callers
// branch with errors.Is.
var (
	// ErrNotFound: the source does not know the package at all.
	ErrNotFound = errors.New("package not found")
	// ErrVersionNotFound: the package exists but not at the asked version.
	ErrVersionNotFound = errors.New("version not found")
	// ErrPlatformNotSupported: the provider version has no build for the
	// asked platform.
	ErrPlatformNotSupported = errors.New("platform not supported")
	// ErrUnauthorized: the origin refused the credentials, or asked for some.
	ErrUnauthorized = errors.New("unauthorized")
	// ErrChecksumMismatch: what was downloaded does not match the checksum
	// the origin (or the lock file) vouches for.
	ErrChecksumMismatch = errors.New("checksum mismatch")
)

// Error gives a source error its context: which source, which package.
// Match its cause with errors.Is and errors.As through Unwrap. Its text
// never holds a credential; the Package field keeps the address as given.
type Error struct {
	Source  string  // the source, for display (a host name, a URL without credentials, a directory)
	Package Package // the package asked about; may be nil
	Err     error
}

// Error returns "SOURCE: PACKAGE: CAUSE", leaving out unset parts, with
// the credentials of every URL in it (the package's, or one the cause
// quotes) replaced by "REDACTED".
func (e *Error) Error() string {
	var msg string
	switch {
	case e.Package != nil && e.Source != "":
		msg = fmt.Sprintf("%s: %s: %v", e.Source, e.Package.ForDisplay(), e.Err)
	case e.Package != nil:
		msg = fmt.Sprintf("%s: %v", e.Package.ForDisplay(), e.Err)
	case e.Source != "":
		msg = fmt.Sprintf("%s: %v", e.Source, e.Err)
	default:
		msg = fmt.Sprint(e.Err)
	}
	return display.Redact(msg)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }
