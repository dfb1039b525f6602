package cache

import (
	"slices"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
)

// vouched returns e with its Origin (what the fetch's source vouched for,
// or what the index kept of it) and the Provenance of the package's own
// hashes, own (those the fill computed and checked, or those the index
// record lists: information, never served as e.Hashes): the origin records
// of those hashes merged (signing keys, registries, mirrors, platforms),
// and verified locally, which the cache always has done (it computed the
// hashes from the files it stores or hashed).
func (e Entry) vouched(origin []hash.Record, own []hash.Hash) Entry {
	e.Origin = slices.Clone(origin)
	p := hash.Provenance{VerifiedLocally: true}
	for _, rec := range origin {
		if slices.Contains(own, rec.Hash) {
			p = p.Merge(rec.Provenance)
		}
	}
	e.Provenance = p
	return e
}

// fetched returns e as a fill or Hash just made it: vouched for by f's
// origin records, with f's warnings.
func (e Entry) fetched(f *source.Fetched) Entry {
	e = e.vouched(f.Origin, e.Hashes)
	e.Warnings = slices.Clone(f.Warnings)
	return e
}

// hit returns e as served again (a hit): no fill's warnings.
func (e Entry) hit() Entry {
	e.Warnings = nil
	return e
}

// originRecord is one origin record as the index stores it.
type originRecord struct {
	Hash           hash.Hash `json:"hash"`
	SignedBy       []string  `json:"signed_by,omitempty"`
	Registries     []string  `json:"registries,omitempty"`
	Mirrors        []string  `json:"mirrors,omitempty"`
	TrustedMirrors []string  `json:"trusted_mirrors,omitempty"`
	Platforms      []string  `json:"platforms,omitempty"`
	SigningExempt  bool      `json:"signing_exempt,omitempty"`
}

// indexOrigin is the index form of origin. Whether a hash was verified
// locally is not kept: an entry's own hashes always are, the others never.
func indexOrigin(origin []hash.Record) []originRecord {
	if len(origin) == 0 {
		return nil
	}
	out := make([]originRecord, 0, len(origin))
	for _, r := range origin {
		p := r.Provenance
		out = append(out, originRecord{Hash: r.Hash, SignedBy: p.SignedBy, Registries: p.Registries, Mirrors: p.Mirrors, TrustedMirrors: p.TrustedMirrors, Platforms: p.Platforms, SigningExempt: p.SigningExempt})
	}
	return out
}

// origin returns the origin records the index kept, leaving out any whose
// hash does not parse. An index written before they were kept has none.
func (r indexRecord) origin() []hash.Record {
	var out []hash.Record
	for _, o := range r.Origin {
		if _, err := hash.ParseHash(string(o.Hash)); err != nil {
			continue
		}
		out = append(out, hash.Record{Hash: o.Hash, Provenance: hash.Provenance{SignedBy: o.SignedBy, Registries: o.Registries, Mirrors: o.Mirrors, TrustedMirrors: o.TrustedMirrors, Platforms: o.Platforms, SigningExempt: o.SigningExempt}})
	}
	return out
}
