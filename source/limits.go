package source

import "github.com/tflock/tflock/hash"

// Default limits, used where a [Limits] field is zero. Every source applies
// them through its Options' Limits field. They are the hash package's
// defaults, so that both archive readers (the extractor the sources share
// and the cache's one-pass reader, hash.Options.InstallReader) apply one
// set of limits.
const (
	// DefaultMaxBytes is the default of [Limits.MaxBytes]: 4 GiB, several
	// times the largest provider package known (about 650 MB unpacked). It
	// is [hash.DefaultMaxSize].
	DefaultMaxBytes int64 = hash.DefaultMaxSize
	// DefaultMaxEntries is the default of [Limits.MaxEntries]: 50,000
	// entries, many times the largest module package known (a few
	// thousand files). It is [hash.DefaultMaxFiles].
	DefaultMaxEntries = hash.DefaultMaxFiles
)

// ErrTooLarge is wrapped by the error for a package that exceeds the
// [Limits]: an archive larger than MaxBytes, one that declares or expands to
// more than MaxBytes, or one with more than MaxEntries entries. It is
// [hash.ErrLimit], so that one sentinel matches whichever archive reader
// refused the package.
var ErrTooLarge = hash.ErrLimit

// Limits bound what one package may cost on disk. Every source that
// downloads or extracts an archive (registry, network and filesystem
// mirrors, OCI) takes them as one Options field, and the one extractor the
// sources share enforces them: a zip archive is refused before anything is
// written when its central directory declares more entries or more bytes
// than the limits, and the bytes actually written are counted too (a header
// may lie); a tar.gz archive is counted as it is read and refused at the
// first entry past a limit, what was written being removed. The zero value
// applies the defaults stated on each field.
type Limits struct {
	// MaxBytes limits the size of a package archive as downloaded and the
	// total size of the files it extracts to. Zero or negative means
	// DefaultMaxBytes (4 GiB).
	MaxBytes int64
	// MaxEntries limits the number of entries (files, directories, links)
	// in one package archive. Zero or negative means DefaultMaxEntries
	// (50,000).
	MaxEntries int
}

// WithDefaults returns l with every zero or negative field set to its
// default.
func (l Limits) WithDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = DefaultMaxEntries
	}
	return l
}
