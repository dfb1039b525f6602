// Package provaddr is tflock's one parser of provider source addresses and
// the home of its one default registry host. It reads an address the way
// OpenTofu 1.12 reads the "source" of a required_providers entry (its
// addrs.ParseProviderSourceString over the OpenTofu registry-address
// library), so that the configuration reader, the lock file decoder, the
// CLI configuration, the mirrors and the public source/address package
// agree on every string.
//
// It is internal so that the lockfile package, which must not import the
// sources, can use it; other packages reach it through
// source/address.ParseProviderSource.
package provaddr

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	tfaddr "github.com/hashicorp/terraform-registry-address"
	svchost "github.com/hashicorp/terraform-svchost"
)

// DefaultRegistryHost is OpenTofu's registry host: the host of a provider
// or module registry address that names none. Every other spelling of it
// in tflock is an alias of this constant.
const DefaultRegistryHost = "registry.opentofu.org"

// TerraformRegistryHost is Terraform's registry host: the host of a
// provider address without one when a lock file is written as Terraform
// writes it.
const TerraformRegistryHost = "registry.terraform.io"

// DefaultNamespace is the namespace OpenTofu gives a source address that
// is a bare type name ("aws" means "hashicorp/aws").
const DefaultNamespace = "hashicorp"

// OpenTofuBuiltInHost is the host, besides terraform.io
// (tfaddr.BuiltInProviderHost), of OpenTofu's built-in provider addresses:
// OpenTofu 1.12's registry-address library reserves it for its own
// built-in providers.
const OpenTofuBuiltInHost = "opentofu.org"

// IsBuiltIn reports whether p is the address of a built-in provider, one
// the tool itself provides and no source installs or locks, as OpenTofu
// 1.12 reads it (its registry-address library's Provider.IsBuiltIn): the
// namespace "builtin" on the host terraform.io or opentofu.org, whatever
// the type (OpenTofu then checks the type against the built-in providers
// it has). The hashicorp library's IsBuiltIn knows terraform.io only; it is
// called nowhere else (onedecision_test.go).
func IsBuiltIn(p tfaddr.Provider) bool {
	return p.Namespace == tfaddr.BuiltInProviderNamespace &&
		(p.Hostname == tfaddr.BuiltInProviderHost || p.Hostname == svchost.Hostname(OpenTofuBuiltInHost))
}

// Error reports an invalid provider source address, in OpenTofu's words:
// Summary is its diagnostic summary ("Invalid provider namespace") and
// Detail its explanation.
type Error struct {
	Input   string
	Summary string
	Detail  string
}

// Error implements error.
func (e *Error) Error() string { return e.Summary + ": " + e.Detail }

// ErrInvalid is matched by every *Error with errors.Is.
var ErrInvalid = errors.New("invalid provider source address")

// Is reports whether target is [ErrInvalid].
func (e *Error) Is(target error) bool { return target == ErrInvalid }

const formatDetail = `The "source" attribute must be in the format "[hostname/][namespace/]name"`

// ParseNotLegacy is [Parse], refusing a legacy address ("-/aws") as
// OpenTofu refuses one where it installs providers (the configuration's
// required_providers, a state's provider configuration addresses, the
// reattach variable): the caller must give a namespace.
func ParseNotLegacy(s, defaultHost string) (tfaddr.Provider, error) {
	p, err := Parse(s, defaultHost)
	if err != nil {
		return tfaddr.Provider{}, err
	}
	if p.Namespace == tfaddr.LegacyProviderNamespace {
		return tfaddr.Provider{}, fmt.Errorf("legacy provider address %q: give a namespace, such as \"hashicorp/%s\"", s, p.Type)
	}
	return p, nil
}

// Parse parses a provider source address of one, two or three
// slash-separated parts ("aws", "hashicorp/aws", "HOST/NAMESPACE/TYPE"),
// as OpenTofu does:
//
//   - a missing host is defaultHost ([DefaultRegistryHost] when empty);
//   - a missing namespace is [DefaultNamespace];
//   - the namespace and type are normalised by [ParsePart] (lower case,
//     letters, digits and single inner dashes only: "my_org" is invalid);
//   - the host is normalised as a service host name and may carry a port
//     ("localhost:8080");
//   - the legacy namespace "-" is accepted only on defaultHost and gives an
//     address whose Namespace is [tfaddr.LegacyProviderNamespace]: the
//     caller decides whether it can use one;
//   - a namespace-qualified type may not start with "terraform-" or
//     "opentofu-" (a bare type name is not checked, as in OpenTofu).
//
// Errors are [*Error].
func Parse(s, defaultHost string) (tfaddr.Provider, error) {
	host := svchost.Hostname(DefaultRegistryHost)
	if defaultHost != "" {
		h, err := svchost.ForComparison(defaultHost)
		if err != nil {
			return tfaddr.Provider{}, &Error{Input: s, Summary: "Invalid default registry host", Detail: fmt.Sprintf("The default registry host %q is not a valid host name: %s.", defaultHost, err)}
		}
		host = h
	}
	return ParseOnHost(s, host)
}

// ParseOnHost is [Parse] with a default host checked and normalised
// already (by svchost.ForComparison), for a caller that has done so.
func ParseOnHost(s string, host svchost.Hostname) (tfaddr.Provider, error) {
	invalid := func(summary, detail string) (tfaddr.Provider, error) {
		return tfaddr.Provider{}, &Error{Input: s, Summary: summary, Detail: detail}
	}
	if !utf8.ValidString(s) {
		return invalid("Invalid provider source string", "The source address is not valid UTF-8.")
	}
	parts := strings.Split(s, "/")
	if len(parts) > 3 {
		return invalid("Invalid provider source string", formatDetail)
	}
	for _, p := range parts {
		if p == "" {
			return invalid("Invalid provider source string", formatDetail)
		}
	}
	typ, err := ParsePart(parts[len(parts)-1])
	if err != nil {
		return invalid("Invalid provider type", fmt.Sprintf("Invalid provider type %q in source %q: %s.", parts[len(parts)-1], s, err))
	}
	addr := tfaddr.Provider{Hostname: host, Namespace: DefaultNamespace, Type: typ}
	if len(parts) == 1 {
		return addr, nil
	}
	if ns := parts[len(parts)-2]; ns == tfaddr.LegacyProviderNamespace {
		addr.Namespace = ns
	} else if addr.Namespace, err = ParsePart(ns); err != nil {
		return invalid("Invalid provider namespace", fmt.Sprintf("Invalid provider namespace %q in source %q: %s.", ns, s, err))
	}
	if len(parts) == 3 {
		h, err := svchost.ForComparison(parts[0])
		if err == nil {
			_, err = forDisplay(h)
		}
		if err != nil {
			return invalid("Invalid provider source hostname", fmt.Sprintf("Invalid provider source hostname %q in source %q: %s.", parts[0], s, err))
		}
		addr.Hostname = h
	}
	if addr.Namespace == tfaddr.LegacyProviderNamespace && addr.Hostname != host {
		return invalid("Invalid provider namespace", fmt.Sprintf(`The legacy provider namespace "-" can be used only with hostname %s.`, host.ForDisplay()))
	}
	for _, rule := range redundantPrefixes {
		if !strings.HasPrefix(addr.Type, rule.prefix) {
			continue
		}
		if rest, ok := strings.CutPrefix(addr.Type, rule.prefix+"provider-"); ok {
			if _, err := ParsePart(rest); err == nil {
				suggested := addr
				suggested.Type = rest
				return invalid("Invalid provider type", fmt.Sprintf("Provider source %q has a type with the prefix %q, which isn't valid. Although that prefix is often used in the names of version control repositories for %s providers, provider source strings should not include it.\n\nDid you mean %q?", display(addr, host), rule.prefix+"provider-", rule.product, display(suggested, host)))
			}
		}
		return invalid("Invalid provider type", fmt.Sprintf("Provider source %q has a type with the prefix %q, which isn't allowed because it would be redundant to name a%s %s provider with that prefix. If you are the author of this provider, rename it to not include the prefix.", String(addr), rule.prefix, rule.article, rule.product))
	}
	return addr, nil
}

// redundantPrefixes are the type prefixes OpenTofu refuses: they repeat the
// product's name, and "PREFIXprovider-" is a repository or executable name
// given by mistake.
var redundantPrefixes = []struct{ prefix, product, article string }{
	{"terraform-", "Terraform", ""},
	{"opentofu-", "OpenTofu", "n"},
}

// ParsePart normalises a provider namespace or type as OpenTofu does: the
// rules of one label of an internationalised domain name (case folded,
// letters, digits and dashes, no leading, trailing or doubled dash, no
// dots, no punycode). Namespaces follow the same rule as types: OpenTofu
// does not accept the underscores Terraform's newer address library allows
// in a namespace.
func ParsePart(given string) (string, error) {
	return tfaddr.ParseProviderPart(given)
}

// String returns "HOST/NAMESPACE/TYPE" with the host in its display form,
// or "" for the zero address or a host that cannot be displayed.
func String(p tfaddr.Provider) string {
	if p.IsZero() {
		return ""
	}
	h, err := forDisplay(p.Hostname)
	if err != nil {
		return ""
	}
	return h + "/" + p.Namespace + "/" + p.Type
}

// display is String without the host when it is defaultHost.
func display(p tfaddr.Provider, defaultHost svchost.Hostname) string {
	if p.Hostname == defaultHost {
		return p.Namespace + "/" + p.Type
	}
	return String(p)
}

// forDisplay is svchost's ForDisplay without its panic on a host name that
// cannot be converted back.
func forDisplay(h svchost.Hostname) (s string, err error) {
	defer func() {
		if recover() != nil {
			s, err = "", fmt.Errorf("%q cannot be displayed", string(h))
		}
	}()
	return h.ForDisplay(), nil
}
