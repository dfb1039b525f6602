package oci

import (
	"fmt"

	"github.com/tflock/tflock/hash"
)

// hashDir returns the h1: hash of the files under dir.
func hashDir(dir string) (hash.Hash, error) {
	h, err := hash.H1Dir(dir)
	if err != nil {
		return "", fmt.Errorf("hashing %s: %w", dir, err)
	}
	return h, nil
}
