package versions

import (
	"errors"
	"strconv"
)

// Sentinel errors, for errors.Is.
var (
	// ErrInvalidVersion is matched by every *VersionError.
	ErrInvalidVersion = errors.New("invalid version")
	// ErrInvalidConstraint is matched by every *ConstraintError.
	ErrInvalidConstraint = errors.New("invalid version constraint")
)

// VersionError reports a version string that cannot be parsed.
type VersionError struct {
	Input   string  // the string given
	Dialect Dialect // Provider for Parse, Module for ParseModuleVersion
	Reason  string  // what is wrong, in words
}

// Error returns a message naming the version and the problem.
func (e *VersionError) Error() string {
	return "invalid version " + quote(e.Input) + ": " + e.Reason
}

// Is makes errors.Is(err, ErrInvalidVersion) true.
func (e *VersionError) Is(target error) bool { return target == ErrInvalidVersion }

// ConstraintError reports a version constraint string that cannot be
// parsed. Its message is the one OpenTofu shows for the same input: for the
// provider dialect the text of apparentlymart/go-versions (for example
// `invalid specification "v1.0.0": a "v" prefix should not be used when
// specifying versions`), for the module dialect that of hashicorp/go-version
// (`malformed constraint: 1.0 || 2.0`).
type ConstraintError struct {
	Input   string  // the whole constraint string given
	Dialect Dialect // which grammar rejected it
	Msg     string  // the message, as described above
}

// Error returns Msg.
func (e *ConstraintError) Error() string { return e.Msg }

// Is makes errors.Is(err, ErrInvalidConstraint) true.
func (e *ConstraintError) Is(target error) bool { return target == ErrInvalidConstraint }

func quote(s string) string { return strconv.Quote(s) }
