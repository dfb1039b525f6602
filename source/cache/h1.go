package cache

import (
	"github.com/tflock/tflock/hash"
	"golang.org/x/mod/sumdb/dirhash"
)

// h1Dir is the h1: of a package directory; modules leave VCS metadata out.
func h1Dir(dir string, module bool) (hash.Hash, error) {
	_ = module // TODO(lead): switch to the hash package's H1Dir / module mode once it lands
	s, err := dirhash.HashDir(dir, "", dirhash.Hash1)
	if err != nil {
		return "", err
	}
	return hash.ParseHash(s)
}
