package address

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

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
	// ("terraform.io/builtin/terraform"); it is never installed or locked.
	ProviderBuiltin ProviderKind = "builtin"
	// ProviderLegacy is a pre-0.13 address in the "-" namespace
	// ("-/aws"), which must be mapped to a real namespace before it can
	// be installed.
	ProviderLegacy ProviderKind = "legacy"
)

// Provider is a parsed provider source address.
type Provider struct {
	Addr tfaddr.Provider
	// DefaultHost is the host an address without one would get, used by
	// ForDisplay to leave the host out.
	DefaultHost svchost.Hostname
}

// ParseProviderSource parses a provider source address ("hashicorp/aws",
// "HOST/NAMESPACE/TYPE") with the default [Options].
func ParseProviderSource(raw string) (Provider, error) {
	return ParseProviderSourceWith(raw, Options{})
}

// ParseProviderSourceWith parses a provider source address. An address
// without a host gets [Options.DefaultRegistryHost]. A single name without
// a namespace ("aws") is rejected: OpenTofu only accepts it as the implied
// local name of a provider, never as a source.
func ParseProviderSourceWith(raw string, opts Options) (Provider, error) {
	host, err := opts.defaultHost()
	if err != nil {
		return Provider{}, &ParseError{Kind: "provider", Input: raw, Err: err}
	}
	if !utf8.ValidString(raw) {
		return Provider{}, &ParseError{Kind: "provider", Input: raw, Err: errors.New("the address is not valid UTF-8")}
	}
	// Parse "DEFAULTHOST/NS/TYPE" as "NS/TYPE", so that the library's
	// own default host plays no part (its legacy-namespace rule names it).
	given, explicitHost := raw, false
	if parts := strings.Split(raw, "/"); len(parts) == 3 {
		explicitHost = true
		if h, err := svchost.ForComparison(parts[0]); err == nil && h == host {
			given, explicitHost = parts[1]+"/"+parts[2], false
		}
	}
	p, err := tfaddr.ParseProviderSource(given)
	if err != nil {
		var pe *tfaddr.ParserError
		if errors.As(err, &pe) {
			err = errors.New(pe.Summary + ": " + pe.Detail)
		}
		return Provider{}, &ParseError{Kind: "provider", Input: raw, Err: err}
	}
	if p.Namespace == tfaddr.UnknownProviderNamespace {
		return Provider{}, &ParseError{Kind: "provider", Input: raw,
			Err: errors.New(`a provider source address must have a namespace, such as "hashicorp/` + p.Type + `"`)}
	}
	if !explicitHost {
		p.Hostname = host
	}
	if _, ok := hostForDisplay(p.Hostname); !ok {
		return Provider{}, &ParseError{Kind: "provider", Input: raw, Err: fmt.Errorf("invalid provider source hostname %q", p.Hostname)}
	}
	if p.Namespace == tfaddr.LegacyProviderNamespace && p.Hostname != host {
		return Provider{}, &ParseError{Kind: "provider", Input: raw,
			Err: errors.New(`Invalid provider namespace: The legacy provider namespace "-" can be used only with hostname ` + host.ForDisplay() + ".")}
	}
	// The parts must be canonical: parsing them again gives them back.
	if again, err := tfaddr.ParseProviderSource(p.Namespace + "/" + p.Type); err != nil || again.Namespace != p.Namespace || again.Type != p.Type {
		return Provider{}, &ParseError{Kind: "provider", Input: raw, Err: fmt.Errorf("invalid provider namespace or type %q", p.Namespace+"/"+p.Type)}
	}
	return Provider{Addr: p, DefaultHost: host}, nil
}

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
	case p.Addr.IsBuiltIn():
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
	return displayHost(p.Addr.Hostname) + "/" + p.Addr.Namespace + "/" + p.Addr.Type
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
