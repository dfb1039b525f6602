package cache

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrUnsafePath is wrapped by the error [Open] and [Cache.Fill] return
// when one of the cache's own directories (objects, index, locks, stat,
// tmp) or lock files is not what the cache made: a symbolic link, or
// another kind of file. The cache follows no link out of its directory.
var ErrUnsafePath = errors.New("not a file the cache made")

// UnsafePathError is the error for a path of the cache that is not what
// the cache made. It wraps [ErrUnsafePath].
type UnsafePathError struct {
	// Path is the path found.
	Path string
	// Mode is what it is (its type bits: fs.ModeSymlink for a link).
	Mode fs.FileMode
	// Want is what the cache expected there: "directory" or "regular file".
	Want string
}

// Error names the path, what it is and what the cache expected, and what to do.
func (e *UnsafePathError) Error() string {
	var what string
	switch {
	case e.Mode&fs.ModeSymlink != 0:
		what = "a symbolic link"
	case e.Mode.IsDir():
		what = "a directory"
	case e.Mode.IsRegular():
		what = "a regular file"
	default:
		what = "a special file (" + e.Mode.Type().String() + ")"
	}
	return fmt.Sprintf("cache: %s is %s, not a %s: the cache follows no link out of its directory; remove it, or use another cache directory", e.Path, what, e.Want)
}

// Unwrap returns [ErrUnsafePath].
func (e *UnsafePathError) Unwrap() error { return ErrUnsafePath }

// ownDirs are the cache's own subdirectories.
var ownDirs = []string{"objects", "index", "locks", "stat", "tmp"}

// checkOwn returns an *UnsafePathError when p exists and is not, without
// following a link, a directory (dir) or a regular file (!dir).
func checkOwn(p string, dir bool) error {
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("cache: %w", err)
	case dir && !fi.IsDir():
		return &UnsafePathError{Path: p, Mode: fi.Mode(), Want: "directory"}
	case !dir && !fi.Mode().IsRegular():
		return &UnsafePathError{Path: p, Mode: fi.Mode(), Want: "regular file"}
	}
	return nil
}

// checkDirs checks those of the cache's own subdirectories that exist.
func (c *Cache) checkDirs() error {
	for _, sub := range ownDirs {
		if err := checkOwn(filepath.Join(c.dir, sub), true); err != nil {
			return err
		}
	}
	return nil
}

// maxRecord bounds what the cache reads of one of its records (index/,
// stat/): a record is small, and a file that is not one is not read whole.
const maxRecord = 64 << 20

// readRecord reads the record file p: a regular file (not followed if a
// link), at most maxRecord bytes.
func readRecord(p string) ([]byte, error) {
	if err := checkOwn(p, false); err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxRecord))
}
