package hash

import (
	"runtime"
)

// Default limits used when the corresponding [Options] field is zero.
const (
	// DefaultMaxSize is the default limit on the total uncompressed size of
	// an archive's files: 8 GiB, several times the largest provider package
	// known (about 650 MB unpacked).
	DefaultMaxSize = 8 << 30
	// DefaultMaxRatio is the default limit on an entry's ratio of
	// uncompressed to compressed size. Executables compress about 3:1 and
	// text about 5–10:1; deflate cannot exceed about 1032:1.
	DefaultMaxRatio = 200
	// DefaultMaxFiles is the default limit on the number of files in an
	// archive or directory.
	DefaultMaxFiles = 1 << 17
	// ratioFloor is the uncompressed size under which an entry's
	// compression ratio is not checked: a small file of repetitive text can
	// legitimately compress far better than DefaultMaxRatio.
	ratioFloor = 1 << 20
)

// Options configures hashing. The zero value is ready to use: it hashes
// provider packages with the default limits on all cores.
type Options struct {
	// Module makes the hash that of a module package: files under a
	// directory or file named ".git", ".hg", ".svn" or ".bzr" (at any depth)
	// are left out. Default false: every file counts.
	Module bool
	// MaxSize limits the total uncompressed size of an archive's files, in
	// bytes. If 0, DefaultMaxSize (8 GiB) is used; if negative, no limit.
	MaxSize int64
	// MaxRatio limits each archive entry's ratio of uncompressed to
	// compressed size, for entries larger than 1 MiB uncompressed. If 0,
	// DefaultMaxRatio (200) is used; if negative, no limit.
	MaxRatio int
	// MaxFiles limits the number of files in an archive or directory. If 0,
	// DefaultMaxFiles (131072) is used; if negative, no limit.
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

// vcsDirs are the version-control metadata names left out of module hashes.
var vcsDirs = map[string]bool{".git": true, ".hg": true, ".svn": true, ".bzr": true}

// skipModule reports whether the slash-separated name lies under VCS metadata.
func skipModule(name string) bool {
	for {
		elem, rest, found := cut(name)
		if vcsDirs[elem] {
			return true
		}
		if !found {
			return false
		}
		name = rest
	}
}

func cut(s string) (before, after string, found bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}
