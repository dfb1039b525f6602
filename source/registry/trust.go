package registry

import (
	"bytes"
	"context"

	"github.com/ProtonMail/go-crypto/openpgp"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/internal/display"
)

// Trust is Terraform's classification of the key that signed a provider
// release.
type Trust int

// The classifications.
const (
	// TrustNone: the release was accepted without a signature (see
	// [PolicyOpenTofu]).
	TrustNone Trust = iota
	// TrustCommunity: signed by a key the registry lists, which is neither
	// official nor vouched for by a partner key.
	TrustCommunity
	// TrustPartner: signed by a key that carries a trust signature by one
	// of [Options.PartnerKeys].
	TrustPartner
	// TrustOfficial: signed by one of [Options.OfficialKeys].
	TrustOfficial
)

// String returns "unsigned", "community", "partner" or "official".
func (t Trust) String() string {
	switch t {
	case TrustCommunity:
		return "community"
	case TrustPartner:
		return "partner"
	case TrustOfficial:
		return "official"
	}
	return "unsigned"
}

// Signer says who signed a provider release's SHA256SUMS.
type Signer struct {
	// KeyID is the upper-case hex ID of the primary key that signed, or ""
	// when the release was accepted unsigned.
	KeyID string
	// Trust is the key's classification.
	Trust Trust
}

// classify applies Terraform's rules to a signature that verified with
// signingKey.
func (s *Source) classify(doc, sig []byte, signingKey, trustSignature string) Trust {
	for _, k := range s.o.OfficialKeys {
		ring, err := readKeyRing(k)
		if err != nil {
			continue
		}
		if _, err := checkDetached(ring, doc, sig); err == nil {
			return TrustOfficial
		}
	}
	if trustSignature != "" {
		for _, k := range s.o.PartnerKeys {
			ring, err := readKeyRing(k)
			if err != nil {
				continue
			}
			if _, err := checkDetached(ring, []byte(signingKey), []byte(trustSignature)); err == nil {
				return TrustPartner
			}
		}
	}
	return TrustCommunity
}

func checkDetached(ring openpgp.EntityList, doc, sig []byte) (*openpgp.Entity, error) {
	if bytes.HasPrefix(bytes.TrimSpace(sig), []byte("-----BEGIN")) {
		return openpgp.CheckArmoredDetachedSignature(ring, bytes.NewReader(doc), bytes.NewReader(sig), nil)
	}
	return openpgp.CheckDetachedSignature(ring, bytes.NewReader(doc), bytes.NewReader(sig), nil)
}

// SignedBy reports who signed the SHA256SUMS of a provider release (pkg
// needs a version; its platform selects the download metadata asked for,
// as in [Source.Checksums]). The verified document is cached, so after a
// Fetch or Checksums of the same release this costs one metadata request.
func (s *Source) SignedBy(ctx context.Context, pkg source.ProviderPackage) (Signer, error) {
	addr, err := s.ResolveProvider(ctx, pkg.Addr)
	if err != nil {
		return Signer{}, err
	}
	pkg.Addr = addr
	host := display.Host(addr.Hostname)
	plat := pkg.Platform
	if plat.IsZero() {
		plat = source.CurrentPlatform
	}
	m, err := s.downloadMeta(ctx, addr, pkg.Version, plat)
	if err != nil {
		return Signer{}, s.errorFor(pkg, host, err)
	}
	rel, err := s.release(ctx, addr, pkg.Version, m)
	if err != nil {
		return Signer{}, s.errorFor(pkg, host, err)
	}
	return rel.signer, nil
}
