package hash

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
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

// checkName reports whether name is a clean, relative, slash-separated path
// that is safe to create under a directory on any common operating system.
func checkName(name string) error {
	if name == "" || name[0] == '/' || strings.ContainsAny(name, "\\\x00") {
		return ErrUnsafePath
	}
	if len(name) >= 2 && name[1] == ':' {
		return ErrUnsafePath // drive letter
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return ErrUnsafePath
		}
	}
	for elem := range strings.SplitSeq(name, "/") {
		if elem == "" || elem == "." || elem == ".." {
			return ErrUnsafePath
		}
	}
	return nil
}
