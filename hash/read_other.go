//go:build !unix

package hash

import "os"

// hashPath returns the SHA-256 of the file at p.
func (fh *fileHasher) hashPath(p string) ([32]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return [32]byte{}, err
	}
	defer f.Close()
	return fh.hashReader(f)
}
