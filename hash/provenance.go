package hash

import (
	"slices"
)

// Provenance records how a hash came to be trusted, as OpenTofu (1.10 and
// later) tracks it per hash (its "hash dispositions"): the signing keys,
// whether the origin registry reported the hash, and whether it was verified
// locally, combined across checks by taking the union. Provenance also says
// which mirrors reported the hash and for which platforms, which OpenTofu
// does not keep. Several checks of the same hash are combined with
// [Provenance.Merge] or [Set.Add]. The zero value means "nothing known".
type Provenance struct {
	// SignedBy lists the OpenPGP key IDs (upper-case hex) whose signature
	// over a SHA256SUMS document listed this hash (OpenTofu's
	// SignedByGPGKeyIDs).
	SignedBy []string
	// Registries lists the hosts of the provider's origin registries that
	// reported the hash (for example in a download response's shasum
	// field); non-empty is OpenTofu's ReportedByRegistry. A mirror is never
	// listed here.
	Registries []string
	// Mirrors lists the mirrors (network mirror URLs, OCI repositories)
	// that reported the hash. OpenTofu keeps no such fact: it records a
	// hash that only a mirror reported once it has verified it locally.
	Mirrors []string
	// TrustedMirrors lists those of Mirrors whose hashes are trusted as an
	// origin's own, as a network mirror's with trust_all_hashes (OpenTofu
	// keeps no such fact either).
	TrustedMirrors []string
	// VerifiedLocally is true when this program computed the hash itself
	// from the package contents (OpenTofu's VerifiedLocally).
	VerifiedLocally bool
	// Platforms lists the platforms ("linux_amd64") whose package the hash
	// belongs to, where known.
	Platforms []string
	// SigningExempt is true when the origin registry that reported the
	// hash is on a host whose providers need no signature (OpenTofu's
	// default registry, unless OPENTOFU_ENFORCE_GPG_VALIDATION=true: the
	// negation of OpenTofu's ShouldEnforceGPGValidationForProvider). As
	// OpenTofu does, a lock file then records every hash that registry
	// reports, signed or not.
	SigningExempt bool
}

// Merge returns the union of p and o. Lists are sorted and de-duplicated.
func (p Provenance) Merge(o Provenance) Provenance {
	return Provenance{
		SignedBy:        union(p.SignedBy, o.SignedBy),
		Registries:      union(p.Registries, o.Registries),
		Mirrors:         union(p.Mirrors, o.Mirrors),
		TrustedMirrors:  union(p.TrustedMirrors, o.TrustedMirrors),
		VerifiedLocally: p.VerifiedLocally || o.VerifiedLocally,
		Platforms:       union(p.Platforms, o.Platforms),
		SigningExempt:   p.SigningExempt || o.SigningExempt,
	}
}

// IsZero reports whether nothing is known about the hash's origin.
func (p Provenance) IsZero() bool {
	return len(p.SignedBy) == 0 && len(p.Registries) == 0 && len(p.Mirrors) == 0 && len(p.TrustedMirrors) == 0 && !p.VerifiedLocally && len(p.Platforms) == 0 && !p.SigningExempt
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
	// Hash is the checksum.
	Hash Hash
	// Provenance is who vouched for Hash; the zero value for none known.
	Provenance Provenance
}

// Set is a set of hashes with the provenance of each, as a lock-file
// writer accumulates them across checks. The zero value is not usable; make
// one with make(Set) or [NewSet].
type Set map[Hash]Provenance

// NewSet returns a set of the given hashes, with no provenance.
func NewSet(hs ...Hash) Set {
	s := make(Set, len(hs))
	for _, h := range hs {
		s.Add(h, Provenance{})
	}
	return s
}

// Add adds h to the set, merging p into the provenance already recorded.
func (s Set) Add(h Hash, p Provenance) {
	s[h] = s[h].Merge(p)
}

// Merge adds every hash of o to s, merging provenances.
func (s Set) Merge(o Set) {
	for h, p := range o {
		s.Add(h, p)
	}
}

// Hashes returns the hashes of the set, sorted as a lock file lists them.
func (s Set) Hashes() []Hash {
	out := make([]Hash, 0, len(s))
	for h := range s {
		out = append(out, h)
	}
	slices.Sort(out)
	return out
}

// Records returns the hashes of the set with their provenance, sorted by
// hash.
func (s Set) Records() []Record {
	out := make([]Record, 0, len(s))
	for _, h := range s.Hashes() {
		out = append(out, Record{Hash: h, Provenance: s[h]})
	}
	return out
}
