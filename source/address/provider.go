package address

import (
	"github.com/tflock/tflock/internal/provaddr"

	tfaddr "github.com/hashicorp/terraform-registry-address"
	svchost "github.com/hashicorp/terraform-svchost"
)

// ProviderKind classifies a provider address.
type ProviderKind string

// The kinds of provider address.
const (
	// ProviderRegular is an ordinary provider installed from a registry or
	// a mirror: "HOST/NAMESPACE/TYPE".
	ProviderRegular ProviderKind = "provider"
	// ProviderBuiltin is a provider compiled into OpenTofu
	// ("terraform.io/builtin/terraform"; OpenTofu reads the namespace
	// "builtin" on terraform.io and opentofu.org as built-in, whatever the
	// type); it is never installed or locked.
	ProviderBuiltin ProviderKind = "builtin"
	// ProviderLegacy is a pre-0.13 address in the "-" namespace
	// ("-/aws"), which must be mapped to a real namespace before it can
	// be installed.
	ProviderLegacy ProviderKind = "legacy"
)

// Provider is a parsed provider source address.
type Provider struct {
	// Addr is the address parsed: host, namespace and type.
	Addr tfaddr.Provider
	// DefaultHost is the host an address without one would get, used by
	// ForDisplay to leave the host out.
	DefaultHost svchost.Hostname
}

// ParseProviderSource parses a provider source address ("aws",
// "hashicorp/aws", "HOST/NAMESPACE/TYPE") with the default [Options].
func ParseProviderSource(raw string) (Provider, error) {
	return ParseProviderSourceWith(raw, Options{})
}

// ParseProviderSourceWith parses a provider source address as OpenTofu
// reads the "source" of a required_providers entry. An address without a
// host gets [Options.DefaultRegistryHost]; a bare type name ("aws") is in
// the "hashicorp" namespace. The legacy namespace ("-/aws") is accepted on
// the default host only and gives a [ProviderLegacy] address. The rules are
// those of the one provider-address parser all of tflock uses (the lock file
// decoder, the configuration reader, the CLI configuration), so they agree
// on every string. Errors are [*ParseError] and match [ErrInvalidProvider].
func ParseProviderSourceWith(raw string, opts Options) (Provider, error) {
	host, err := opts.defaultHost()
	if err != nil {
		return Provider{}, &ParseError{Kind: "provider", Input: raw, Err: err}
	}
	p, err := provaddr.ParseOnHost(raw, host)
	if err != nil {
		return Provider{}, &ParseError{Kind: "provider", Input: raw, Err: err}
	}
	return Provider{Addr: p, DefaultHost: host}, nil
}

// ErrInvalidProvider is matched (errors.Is) by every error of
// [ParseProviderSource] for an address that is not valid.
var ErrInvalidProvider = provaddr.ErrInvalid

// MustParseProviderSource is like [ParseProviderSource] but panics on
// error. It is for addresses written in program text.
func MustParseProviderSource(raw string) Provider {
	p, err := ParseProviderSource(raw)
	if err != nil {
		panic(err)
	}
	return p
}

// Kind classifies the address.
func (p Provider) Kind() ProviderKind {
	switch {
	case provaddr.IsBuiltIn(p.Addr):
		return ProviderBuiltin
	case p.Addr.Namespace == tfaddr.LegacyProviderNamespace:
		return ProviderLegacy
	}
	return ProviderRegular
}

// String returns the fully-qualified "HOST/NAMESPACE/TYPE", or "" for the
// zero value.
func (p Provider) String() string {
	if p.Addr.IsZero() {
		return ""
	}
	return provaddr.String(p.Addr)
}

// ForDisplay returns "NAMESPACE/TYPE" for a provider on the default host,
// String otherwise.
func (p Provider) ForDisplay() string {
	if p.Addr.IsZero() {
		return ""
	}
	if p.DefaultHost != "" && p.Addr.Hostname == p.DefaultHost {
		return p.Addr.Namespace + "/" + p.Addr.Type
	}
	return p.String()
}
