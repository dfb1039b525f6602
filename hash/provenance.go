package hash

import (
	"slices"
)

// Provenance records how a hash came to be trusted, as OpenTofu (1.10 and
// later) tracks it. Several checks of the same hash are combined with
// [Provenance.Merge]. The zero value means "nothing known".
type Provenance struct {
	// SignedBy lists the OpenPGP key IDs (upper-case hex) whose signature
	// over a SHA256SUMS document listed this hash.
	SignedBy []string
	// Registries lists the hosts of registries that reported the hash
	// (for example in a download response's shasum or packages field).
	Registries []string
	// Mirrors lists the mirrors (network mirror URLs, OCI repositories)
	// that reported the hash.
	Mirrors []string
	// VerifiedLocally is true when this program computed the hash itself
	// from the package contents.
	VerifiedLocally bool
	// Platforms lists the platforms ("linux_amd64") whose package the hash
	// belongs to, where known.
	Platforms []string
}

// Merge returns the union of p and o. Lists are sorted and de-duplicated.
func (p Provenance) Merge(o Provenance) Provenance {
	return Provenance{
		SignedBy:        union(p.SignedBy, o.SignedBy),
		Registries:      union(p.Registries, o.Registries),
		Mirrors:         union(p.Mirrors, o.Mirrors),
		VerifiedLocally: p.VerifiedLocally || o.VerifiedLocally,
		Platforms:       union(p.Platforms, o.Platforms),
	}
}

// IsZero reports whether nothing is known about the hash's origin.
func (p Provenance) IsZero() bool {
	return len(p.SignedBy) == 0 && len(p.Registries) == 0 && len(p.Mirrors) == 0 && !p.VerifiedLocally && len(p.Platforms) == 0
}

func union(a, b []string) []string {
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	out := make([]string, 0, len(a)+len(b))
	out = append(out, a...)
	out = append(out, b...)
	slices.Sort(out)
	return slices.Compact(out)
}

// Record is a hash with its provenance.
type Record struct {
	Hash       Hash
	Provenance Provenance
}
