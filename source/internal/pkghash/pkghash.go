// Package pkghash computes the package hashes the source packages report:
// h1: of a directory or of a zip's contents, and zh: of a zip file.
//
// It is a thin layer over the hash package (and, for in-memory files,
// golang.org/x/mod/sumdb/dirhash), kept in one place so that every source
// hashes the same way.
package pkghash

import (
	"io"

	"golang.org/x/mod/sumdb/dirhash"

	"github.com/tflock/tflock/hash"
)

// H1Dir returns the h1: hash of the files under dir.
func H1Dir(dir string) (hash.Hash, error) { return hash.H1Dir(dir) }

// H1Zip returns the h1: hash of the files inside the zip archive at path.
func H1Zip(path string) (hash.Hash, error) { return hash.H1Zip(path) }

// ZH returns the zh: hash (hex SHA-256) of the file at path.
func ZH(path string) (hash.Hash, error) { return hash.ZH(path) }

// H1Files returns the h1: hash of the given files (slash-separated names),
// read through open.
func H1Files(names []string, open func(string) (io.ReadCloser, error)) (hash.Hash, error) {
	s, err := dirhash.Hash1(names, open)
	if err != nil {
		return "", err
	}
	return hash.Hash(s), nil
}
