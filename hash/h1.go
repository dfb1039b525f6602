package hash

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
)

// fileSum is one line of an h1 summary.
type fileSum struct {
	name string
	sum  [32]byte
}

// summarize returns the h1 hash of files, as dirhash.Hash1 defines it. It
// sorts files in place.
func summarize(files []fileSum) (Hash, error) {
	slices.SortFunc(files, func(a, b fileSum) int { return strings.Compare(a.name, b.name) })
	h := sha256.New()
	line := make([]byte, 0, 256)
	for i := range files {
		if strings.Contains(files[i].name, "\n") {
			return "", errors.New("file names with newlines cannot be hashed")
		}
		line = line[:0]
		line = hex.AppendEncode(line, files[i].sum[:])
		line = append(line, ' ', ' ')
		line = append(line, files[i].name...)
		line = append(line, '\n')
		h.Write(line)
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return NewHash(SchemeH1, sum), nil
}

// CleanName is the one rule for an archive entry's name, whichever reader
// extracts the archive: it validates name and returns it as a clean
// slash-separated path relative to the package root, or "" for the root
// itself ("./"). Names that are empty, absolute (a leading "/" or a drive
// letter), hold a ".." element, a backslash, a NUL byte or another control
// character (which no common file system takes everywhere, and a newline
// no h1: summary can hold) are refused with an error wrapping
// [ErrUnsafePath]; "." elements, empty elements and a trailing "/" are
// cleaned away, as the extractors OpenTofu uses clean them, so that the
// name hashed is the name of the file installed.
func CleanName(name string) (string, error) {
	switch {
	case name == "":
		return "", fmt.Errorf("%w: empty name", ErrUnsafePath)
	case strings.HasPrefix(name, "/") || len(name) >= 2 && name[1] == ':':
		return "", fmt.Errorf("%w: absolute path", ErrUnsafePath)
	case strings.ContainsRune(name, '\\'):
		return "", fmt.Errorf("%w: the name contains a backslash", ErrUnsafePath)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c == 0x7f {
			return "", fmt.Errorf("%w: the name contains the control character %q", ErrUnsafePath, c)
		}
	}
	for elem := range strings.SplitSeq(name, "/") {
		if elem == ".." {
			return "", fmt.Errorf("%w: the path leaves the package directory", ErrUnsafePath)
		}
	}
	if c := path.Clean(name); c != "." {
		return c, nil
	}
	return "", nil
}
