package source

import (
	"errors"
	"fmt"
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
// Match its cause with errors.Is and errors.As through Unwrap.
type Error struct {
	Source  string  // the source, for display (a host name, a URL without credentials, a directory)
	Package Package // the package asked about; may be nil
	Err     error
}

func (e *Error) Error() string {
	switch {
	case e.Package != nil && e.Source != "":
		return fmt.Sprintf("%s: %s: %v", e.Source, e.Package.ForDisplay(), e.Err)
	case e.Package != nil:
		return fmt.Sprintf("%s: %v", e.Package.ForDisplay(), e.Err)
	case e.Source != "":
		return fmt.Sprintf("%s: %v", e.Source, e.Err)
	}
	return e.Err.Error()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }
