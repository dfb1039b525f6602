package registry

import (
	"slices"

	"github.com/tflock/tflock/hash"
)

func sortHashes(hs []hash.Hash) { slices.Sort(hs) }
