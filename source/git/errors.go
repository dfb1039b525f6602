package git

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tflock/tflock/source/address"
)

// ErrGitNotFound is wrapped by the error returned when the git executable
// cannot be found or run.
var ErrGitNotFound = errors.New("git executable not found")

// ErrRefWithVersion is returned by [Validate] for a git source that has a
// "ref" argument and a version constraint too.
var ErrRefWithVersion = errors.New(`a git module source with a "ref" argument cannot have a version constraint`)

// ErrDepthNeedsRef is wrapped by the error Fetch returns for an address
// with a "depth" argument whose "ref" is a commit ID: as in OpenTofu, a
// shallow clone needs a branch or tag name.
var ErrDepthNeedsRef = errors.New(`the "depth" argument needs "ref" to be a branch or tag name, not a commit ID`)

// MovedTagError reports that a tag now points at another commit than the
// one the lock file recorded. It is never raised for a branch.
type MovedTagError struct {
	Source string // the package address, without credentials
	Ref    string // the tag, as the version or the ref names it
	Locked string // the commit in the lock file
	Now    string // the commit the ref points to now
}

// Error names the package and the tag, the commits locked and found now, and what to do.
func (e *MovedTagError) Error() string {
	return address.Redact(fmt.Sprintf("%s: %q now points to commit %s, but the lock file records commit %s: the tag was moved; if that is expected, upgrade the module to record the new commit", e.Source, e.Ref, e.Now, e.Locked))
}

// ErrAmbiguousRef is wrapped by an [*AmbiguousRefError].
var ErrAmbiguousRef = errors.New("the ref names both a tag and a branch")

// AmbiguousRefError reports that a ref (or the tag of a version) names
// both a tag and a branch of the repository that point to different
// commits. OpenTofu installs the tag, or the branch when the source has a
// "depth" argument (it runs "git clone --depth N --branch REF", which
// prefers the branch), and a server can add a branch named like a tag at
// any time: tflock installs, locks and writes neither. It wraps
// [ErrAmbiguousRef].
type AmbiguousRefError struct {
	Source string // the package address, without credentials
	Ref    string // the ref or tag, as the source or the version names it
	Tag    string // the commit the tag points to
	Branch string // the commit the branch points to
}

// Error names the package, the ref and the two commits, and how to resolve the ambiguity.
func (e *AmbiguousRefError) Error() string {
	return address.Redact(fmt.Sprintf("%s: %q names both a tag (commit %s) and a branch (commit %s): OpenTofu installs the tag, or the branch when the source has a \"depth\" argument, so tflock installs neither; delete or rename one of them in the repository, or name the commit (\"ref=COMMIT\", without \"depth\")", e.Source, e.Ref, e.Tag, e.Branch))
}

// Unwrap returns [ErrAmbiguousRef].
func (e *AmbiguousRefError) Unwrap() error { return ErrAmbiguousRef }

// NoMatchingTagError reports that no tag of a repository is a version
// allowed by a constraint. Tags lists every tag seen, semver or not.
type NoMatchingTagError struct {
	Source      string   // the package address, without credentials
	Constraints string   // the constraint, as written canonically
	Tags        []string // the tags seen, sorted
}

// Error names the package and the constraint, and lists the tags seen ("none" for none).
func (e *NoMatchingTagError) Error() string {
	tags := "none"
	if len(e.Tags) > 0 {
		tags = strings.Join(e.Tags, ", ")
	}
	return address.Redact(fmt.Sprintf("%s: no tag matches the version constraint %q; tags seen: %s", e.Source, e.Constraints, tags))
}

// CommandError is a git command that failed. Args and Stderr have their
// credentials removed (replaced by "REDACTED"), and so has its text.
type CommandError struct {
	Args   []string // the command's arguments, after "git"
	Stderr string   // what the command wrote to its standard error, credentials removed
	Err    error    // the cause (usually an *exec.ExitError or a context error)
}

// Error is "git ARGS: " and the command's standard error (or the cause, when it wrote
// nothing).
func (e *CommandError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = e.Err.Error()
	}
	return address.Redact(fmt.Sprintf("git %s: %s", strings.Join(e.Args, " "), msg))
}

// Unwrap returns the cause (usually an *exec.ExitError or a context error).
func (e *CommandError) Unwrap() error { return e.Err }
