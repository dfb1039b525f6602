package hash

import (
	"runtime"
	"strings"
)

// Default limits used when the corresponding [Options] field is zero. The
// size and file-count defaults are also the defaults of every source
// (source.DefaultMaxBytes and source.DefaultMaxEntries are these), stated
// here because package source imports this one: one set of limits for both
// archive readers.
const (
	// DefaultMaxSize is the default limit on the total uncompressed size of
	// an archive's files: 4 GiB, several times the largest provider package
	// known (about 650 MB unpacked).
	DefaultMaxSize = 4 << 30
	// DefaultMaxRatio is the default limit on an entry's ratio of
	// uncompressed to compressed size. Executables compress about 3:1 and
	// text about 5–10:1; deflate cannot exceed about 1032:1.
	DefaultMaxRatio = 200
	// DefaultMaxFiles is the default limit on the number of entries in an
	// archive (files, directories, links) or files in a directory: 50,000,
	// many times the largest module package known (a few thousand files).
	DefaultMaxFiles = 50000
	// ratioFloor is the uncompressed size under which an entry's
	// compression ratio is not checked: a small file of repetitive text can
	// legitimately compress far better than DefaultMaxRatio.
	ratioFloor = 1 << 20
)

// Options configures hashing. The zero value is ready to use: it hashes
// provider packages with the default limits on all cores.
type Options struct {
	// Module makes the hash that of a module package: files under
	// version-control metadata, as [IsVCSMetadata] defines it (a directory
	// or file named ".git", ".hg", ".svn" or ".bzr" at any depth), are left
	// out. Default false, the provider rule: every file counts.
	Module bool
	// MaxSize limits the total uncompressed size of an archive's files, in
	// bytes. If 0, DefaultMaxSize (4 GiB) is used; if negative, no limit.
	MaxSize int64
	// MaxRatio limits each archive entry's ratio of uncompressed to
	// compressed size, for entries larger than 1 MiB uncompressed. If 0,
	// DefaultMaxRatio (200) is used; if negative, no limit.
	MaxRatio int
	// MaxFiles limits the number of entries in an archive or files in a
	// directory. If 0, DefaultMaxFiles (50,000) is used; if negative, no
	// limit.
	MaxFiles int
	// Concurrency is the number of goroutines that inflate and hash entries
	// or files. If less than or equal to 0, runtime.GOMAXPROCS(0) is used.
	Concurrency int
}

func (o Options) maxSize() int64 {
	switch {
	case o.MaxSize == 0:
		return DefaultMaxSize
	case o.MaxSize < 0:
		return 1<<63 - 1
	}
	return o.MaxSize
}

func (o Options) maxRatio() int64 {
	switch {
	case o.MaxRatio == 0:
		return DefaultMaxRatio
	case o.MaxRatio < 0:
		return 1<<63 - 1
	}
	return int64(o.MaxRatio)
}

func (o Options) maxFiles() int {
	switch {
	case o.MaxFiles == 0:
		return DefaultMaxFiles
	case o.MaxFiles < 0:
		return int(^uint(0) >> 1)
	}
	return o.MaxFiles
}

func (o Options) workers() int {
	if o.Concurrency > 0 {
		return o.Concurrency
	}
	return runtime.GOMAXPROCS(0)
}

// vcsNames are the names of version-control metadata: git's directory (or,
// in a submodule or worktree, file), Mercurial's, Subversion's and Bazaar's.
var vcsNames = [...]string{".git", ".hg", ".svn", ".bzr"}

// IsVCSMetadata reports whether the slash-separated relative path name lies
// under version-control metadata: whether one of its elements is ".git",
// ".hg", ".svn" or ".bzr". Letter case does not matter, nor do trailing dots
// and spaces, because a case-insensitive file system (macOS, Windows) or
// Windows' name rules make ".GIT" or ".git." the same directory as ".git".
//
// This is the one rule for what a module package excludes: the h1: of a
// module package ([Options.Module]) leaves such files out, and every source
// that installs a module package leaves them out of the installed tree, so
// that what is installed is exactly what the hash covers. A publisher's
// ".git/config" could otherwise run code (core.fsmonitor) when the user runs
// git in the module's directory. Provider packages exclude nothing.
func IsVCSMetadata(name string) bool {
	for {
		elem, rest, found := strings.Cut(name, "/")
		if isVCSName(elem) {
			return true
		}
		if !found {
			return false
		}
		name = rest
	}
}

// isVCSName reports whether one path element names VCS metadata.
func isVCSName(elem string) bool {
	elem = strings.TrimRight(elem, ". ")
	for _, n := range vcsNames {
		if strings.EqualFold(elem, n) {
			return true
		}
	}
	return false
}
