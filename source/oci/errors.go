package oci

import (
	"errors"
	"fmt"

	"github.com/tflock/tflock/source"
)

// Sentinel errors of this package. They are wrapped, usually inside an
// [*ArtifactError] or a [*source.Error]; match them with errors.Is.
var (
	// ErrManifestTooLarge: a manifest is larger than the 4 MiB limit.
	ErrManifestTooLarge = errors.New("manifest exceeds the 4 MiB size limit")
	// ErrArchiveTooLarge: a package archive, or what it extracts to, is
	// beyond [Options.Limits]. It is [source.ErrTooLarge], the sentinel
	// every source wraps for this.
	ErrArchiveTooLarge = source.ErrTooLarge
	// ErrUnsafeArchive: a package archive holds an entry that would be
	// written outside the target directory, or a kind of entry (a symbolic
	// link, a device) that is never extracted.
	ErrUnsafeArchive = errors.New("unsafe entry in package archive")
	// ErrInvalidArtifact: the artifact a tag or digest refers to is not of
	// the shape OpenTofu defines for the package asked about.
	ErrInvalidArtifact = errors.New("invalid OpenTofu OCI artifact")
)

// ArtifactError reports an artifact in a repository that is not what the
// package needs: a container image, a module where a provider is expected,
// an image manifest where an index is required, a manifest with no or
// several zip layers. It wraps [ErrInvalidArtifact].
type ArtifactError struct {
	Repository string // "host/repository"
	Reference  string // the tag or digest that was resolved
	Reason     string // what is wrong, as a phrase
}

// Error is "REPOSITORY:REFERENCE: REASON".
func (e *ArtifactError) Error() string {
	return fmt.Sprintf("%s:%s: %s", e.Repository, e.Reference, e.Reason)
}

// Unwrap returns [ErrInvalidArtifact].
func (e *ArtifactError) Unwrap() error { return ErrInvalidArtifact }

// MovedTagError reports that a tag no longer refers to the digest that the
// lock file recorded for it: someone re-pushed or moved the tag. The
// package is not fetched.
type MovedTagError struct {
	Repository string // "host/repository"
	Tag        string // the tag that moved
	Locked     string // the digest the lock file recorded
	Current    string // the digest the tag refers to now
}

// Error names the tag and the repository, the digests found now and locked, and what to do.
func (e *MovedTagError) Error() string {
	return fmt.Sprintf("tag %q of %s now refers to %s, but the lock file records %s: the tag was moved; if the change is expected, upgrade the module to record the new digest", e.Tag, e.Repository, e.Current, e.Locked)
}

// ArchiveError reports a package archive that cannot be extracted safely.
// It wraps [ErrUnsafeArchive] or [ErrArchiveTooLarge].
type ArchiveError struct {
	Entry string // the offending entry name; empty when about the whole archive
	Err   error  // the cause: wraps ErrUnsafeArchive or ErrArchiveTooLarge
}

// Error is the cause, followed by the quoted entry name when there is one.
func (e *ArchiveError) Error() string {
	if e.Entry == "" {
		return e.Err.Error()
	}
	return fmt.Sprintf("%v: %q", e.Err, e.Entry)
}

// Unwrap returns the cause.
func (e *ArchiveError) Unwrap() error { return e.Err }
