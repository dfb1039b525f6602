package hash

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors, matched with [errors.Is]. The errors returned by this
// package wrap them in a [*PackageError] naming the archive or directory and,
// where it applies, the entry.
var (
	// ErrUnsafePath reports an archive entry name that could escape the
	// extraction directory or cannot be a file's name everywhere (absolute,
	// "..", backslashes, drive letters, control characters): the refusals
	// of [CleanName], the one name rule of every extractor.
	ErrUnsafePath = errors.New("unsafe path")
	// ErrDuplicate reports two entries with the same name, or a name used both
	// as a file and as a directory.
	ErrDuplicate = errors.New("duplicate name")
	// ErrFormat reports a malformed, truncated or inconsistent archive,
	// including a declared size or CRC-32 that does not match the contents.
	ErrFormat = errors.New("malformed archive")
	// ErrUnsupported reports an entry this package does not handle: an
	// encrypted entry, a compression method other than store and deflate, a
	// device, pipe or socket in an archive, or a file in a directory that
	// is neither regular nor a symbolic link to a regular file.
	ErrUnsupported = errors.New("unsupported entry")
	// ErrLimit reports an archive beyond a limit in [Options]: total
	// uncompressed size, compression ratio or number of files (a zip bomb).
	// It is also source.ErrTooLarge, the sentinel of every source's limits.
	ErrLimit = errors.New("package exceeds the size limits")
	// ErrSymlinkOutside reports a symbolic link in a directory that points
	// outside it.
	ErrSymlinkOutside = errors.New("symbolic link points outside the package")
	// ErrNoComputableHash reports recorded hashes none of which has a scheme
	// that can be computed from the package at hand (for example only "zh:"
	// hashes for a directory).
	ErrNoComputableHash = errors.New("no recorded hash can be computed for this package")
)

// PackageError reports a failure to hash a package: the archive or
// directory, the entry inside it (if any), and the cause, which wraps one of
// the sentinel errors or an I/O error.
type PackageError struct {
	Path  string // the archive or directory as given by the caller
	Entry string // the entry name inside it, or "" for the whole package
	Err   error  // the cause
}

// Error names the package (and the entry inside it, if any) and the cause.
func (e *PackageError) Error() string {
	if e.Entry != "" {
		return fmt.Sprintf("%s: %q: %v", e.Path, e.Entry, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Path, e.Err)
}

// Unwrap returns the cause.
func (e *PackageError) Unwrap() error { return e.Err }

// MismatchError reports a package none of whose computed hashes is among the
// recorded ones.
type MismatchError struct {
	// Path is the package as the caller named it: a zip or directory path,
	// or a package address.
	Path string
	// Got lists the hashes computed from the package, of the schemes in Want.
	Got []Hash
	// Want lists the recorded hashes that could be checked.
	Want []Hash
}

// Error names the package, the hashes computed from it and the ones the lock file records.
func (e *MismatchError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: checksum mismatch: computed %s; the lock file records %s",
		e.Path, joinHashes(e.Got), joinHashes(e.Want))
	return b.String()
}

func joinHashes(hs []Hash) string {
	if len(hs) == 0 {
		return "nothing"
	}
	s := make([]string, len(hs))
	for i, h := range hs {
		s[i] = string(h)
	}
	return strings.Join(s, ", ")
}
