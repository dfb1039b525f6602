// Package display formats host names and provider addresses exactly as
// terraform-svchost's Hostname.ForDisplay and terraform-registry-address's
// Provider.String and Provider.ForDisplay do, but without their IDNA
// processing for the plain ASCII names nearly every registry host has:
// that processing is the largest cost of building the keys and messages
// a lock run makes for each provider.
package display

import (
	"strings"

	tfaddr "github.com/hashicorp/terraform-registry-address"
	svchost "github.com/hashicorp/terraform-svchost"
)

// Host returns h.ForDisplay().
func Host(h svchost.Hostname) string {
	if plain(string(h)) {
		return string(h)
	}
	return h.ForDisplay()
}

// Provider returns p.String(): HOST/NAMESPACE/TYPE. Like it, it panics for
// the zero address.
func Provider(p tfaddr.Provider) string {
	if p.IsZero() {
		return p.String()
	}
	return Host(p.Hostname) + "/" + p.Namespace + "/" + p.Type
}

// ProviderShort returns p.ForDisplay(): NAMESPACE/TYPE for the default
// registry host, HOST/NAMESPACE/TYPE otherwise.
func ProviderShort(p tfaddr.Provider) string {
	if !p.IsZero() && p.Hostname == tfaddr.DefaultProviderRegistryHost {
		return p.Namespace + "/" + p.Type
	}
	return Provider(p)
}

// PlainName reports whether s is made of lower-case ASCII letters, digits,
// dots and hyphens only, with no label in punycode ("xn--"): a host name
// (without a port) that IDNA processing leaves as it is, or refuses.
func PlainName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '-') {
			return false
		}
	}
	return !strings.HasPrefix(s, "xn--") && !strings.Contains(s, ".xn--")
}

// plain reports whether the normalized host name s displays as itself: a
// PlainName with an optional port.
func plain(s string) bool {
	name, port, hasPort := strings.Cut(s, ":")
	if !PlainName(name) {
		return false
	}
	if hasPort {
		if port == "" {
			return false
		}
		for i := 0; i < len(port); i++ {
			if port[i] < '0' || port[i] > '9' {
				return false
			}
		}
	}
	return true
}
