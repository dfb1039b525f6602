package cache

import (
	"context"

	"github.com/tflock/tflock/hash"
)

// h1Dir is the h1: of a package directory; modules leave VCS metadata out.
func h1Dir(dir string, module bool) (hash.Hash, error) {
	return hash.Options{Module: module}.H1Dir(context.Background(), dir)
}
