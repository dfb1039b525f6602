package source

import (
	"fmt"
	"strings"
	"unicode/utf8"

	tfaddr "github.com/hashicorp/terraform-registry-address"
	svchost "github.com/hashicorp/terraform-svchost"

	"github.com/tflock/tflock/internal/provaddr"
)

// DefaultProviderHost is the registry host that a two-part provider pattern
// ("hashicorp/aws") refers to, as in OpenTofu's provider_installation blocks.
//
// Deprecated: use [address.DefaultRegistryHost], the one name of this
// host.
const DefaultProviderHost = provaddr.DefaultRegistryHost

// Wildcard is the pattern segment that matches any value.
const Wildcard = "*"

// Pattern selects packages for a [Selector]: either provider addresses, as
// the include and exclude arguments of OpenTofu's provider_installation
// blocks spell them ("registry.opentofu.org/hashicorp/*", "*/*/*",
// "hashicorp/aws"), or module source addresses given as a glob. Make one with
// [ParseProviderPattern] or [ParseModulePattern]. A provider pattern never
// matches a module package, and a module pattern never matches a provider
// package.
//
// Pattern is a comparable value.
type Pattern struct {
	module    bool
	host      string // normalized, or Wildcard
	namespace string // normalized, or Wildcard
	typ       string // normalized, or Wildcard
	glob      string // module patterns
}

// ParseProviderPattern parses a provider matching pattern of two
// ("NAMESPACE/TYPE", on [address.DefaultRegistryHost]) or three ("HOST/NAMESPACE/TYPE")
// slash-separated segments. Any segment may be the wildcard "*", with
// OpenTofu's restrictions: the host may be a wildcard only when namespace and
// type are too, and the namespace only when the type is too. Host names are
// normalized for comparison and namespace and type are case-insensitive.
func ParseProviderPattern(s string) (Pattern, error) {
	if !utf8.ValidString(s) {
		return Pattern{}, fmt.Errorf("invalid provider matching pattern %q: not valid UTF-8", s)
	}
	parts := strings.Split(s, "/")
	if len(parts) < 2 || len(parts) > 3 {
		return Pattern{}, fmt.Errorf("invalid provider matching pattern %q: must have either two or three slash-separated segments", s)
	}
	p := Pattern{host: provaddr.DefaultRegistryHost}
	if len(parts) == 3 {
		if parts[0] == Wildcard {
			p.host = Wildcard
		} else {
			h, err := svchost.ForComparison(parts[0])
			if err != nil {
				return Pattern{}, fmt.Errorf("invalid hostname in provider matching pattern %q: %v", s, err)
			}
			p.host = h.String()
		}
		parts = parts[1:]
	}
	var err error
	if p.namespace, err = patternPart(parts[0], provaddr.ParsePart); err != nil {
		return Pattern{}, fmt.Errorf("invalid registry namespace %q in provider matching pattern %q: must either be the wildcard * or a literal namespace", parts[0], s)
	}
	if p.typ, err = patternPart(parts[1], provaddr.ParsePart); err != nil {
		return Pattern{}, fmt.Errorf("invalid provider type %q in provider matching pattern %q: must either be the wildcard * or a provider type name", parts[1], s)
	}
	if p.host == Wildcard && (p.namespace != Wildcard || p.typ != Wildcard) {
		return Pattern{}, fmt.Errorf("invalid provider matching pattern %q: hostname can be a wildcard only if both namespace and provider type are also wildcards", s)
	}
	if p.namespace == Wildcard && p.typ != Wildcard {
		return Pattern{}, fmt.Errorf("invalid provider matching pattern %q: namespace can be a wildcard only if the provider type is also a wildcard", s)
	}
	return p, nil
}

func patternPart(s string, parse func(string) (string, error)) (string, error) {
	if s == Wildcard {
		return s, nil
	}
	if s == tfaddr.LegacyProviderNamespace {
		return s, nil
	}
	return parse(s)
}

// MustParseProviderPattern is like [ParseProviderPattern] but panics on
// error. It is for patterns written in program text.
func MustParseProviderPattern(s string) Pattern {
	p, err := ParseProviderPattern(s)
	if err != nil {
		panic(err)
	}
	return p
}

// ProviderPattern returns the pattern that matches exactly one provider.
func ProviderPattern(addr tfaddr.Provider) Pattern {
	return Pattern{host: addr.Hostname.String(), namespace: addr.Namespace, typ: addr.Type}
}

// ParseModulePattern parses a module source pattern: a glob over the
// canonical module source address ([ModulePackage.Source]) in which "*"
// matches any run of characters, slashes included, and every other
// character matches itself. For example "registry.opentofu.org/acme/*"
// matches every module of the acme namespace on that registry, and
// "git::https://git.example.com/*" every module from that git server.
func ParseModulePattern(s string) (Pattern, error) {
	if s == "" {
		return Pattern{}, fmt.Errorf("invalid module matching pattern: must not be empty")
	}
	return Pattern{module: true, glob: s}, nil
}

// String returns the pattern in the form it was parsed from, with the
// provider host spelled out.
func (p Pattern) String() string {
	if p.module {
		return p.glob
	}
	if p.host == "" {
		return ""
	}
	return p.host + "/" + p.namespace + "/" + p.typ
}

// Match reports whether pkg is matched by p.
func (p Pattern) Match(pkg Package) bool {
	switch pkg := pkg.(type) {
	case ProviderPackage:
		return !p.module && p.host != "" && p.matchProvider(pkg.Addr)
	case ModulePackage:
		return p.module && globMatch(p.glob, pkg.Source)
	}
	return false
}

func (p Pattern) matchProvider(addr tfaddr.Provider) bool {
	return (p.host == Wildcard || p.host == addr.Hostname.String()) &&
		(p.namespace == Wildcard || p.namespace == addr.Namespace) &&
		(p.typ == Wildcard || p.typ == addr.Type)
}

// globMatch matches s against a glob in which '*' matches any run of bytes.
func globMatch(glob, s string) bool {
	// Iterative wildcard matching with backtracking to the last star:
	// linear in len(glob)*len(s) at worst, never exponential.
	gi, si := 0, 0
	star, mark := -1, 0
	for si < len(s) {
		switch {
		case gi < len(glob) && glob[gi] == '*':
			star, mark = gi, si
			gi++
		case gi < len(glob) && glob[gi] == s[si]:
			gi++
			si++
		case star >= 0:
			gi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for gi < len(glob) && glob[gi] == '*' {
		gi++
	}
	return gi == len(glob)
}

// kind reports whether p concerns modules.
func (p Pattern) isModule() bool { return p.module }
