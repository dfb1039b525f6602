// Package envtoken reads registry tokens from TF_TOKEN_ environment
// variables, with OpenTofu's host name encoding.
package envtoken

import (
	"strings"
	"unicode/utf8"

	svchost "github.com/hashicorp/terraform-svchost"
)

// Prefix starts every token variable's name. As in OpenTofu, it is
// matched case-sensitively.
const Prefix = "TF_TOKEN_"

// Collect returns the tokens of the TF_TOKEN_ variables in environ
// ("NAME=VALUE" entries), keyed by host name in its normalized (punycode,
// lower-case) form. In the part of a name after the prefix, "__" stands for
// "-" and "_" for "."; the host may be given as punycode or as Unicode.
// Names that do not decode to a valid host name are ignored. When several
// variables name the same host, the last one wins.
func Collect(environ []string) map[string]string {
	out := map[string]string{}
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, Prefix) {
			continue
		}
		if host, ok := DecodeHost(name[len(Prefix):]); ok {
			out[host] = value
		}
	}
	return out
}

// DecodeHost turns the part of a token variable's name after [Prefix]
// into a normalized host name.
func DecodeHost(enc string) (string, bool) {
	raw := strings.ReplaceAll(enc, "__", "-")
	raw = strings.ReplaceAll(raw, "_", ".")
	if raw == "" || !utf8.ValidString(raw) {
		return "", false
	}
	// ForDisplay first accepts hosts already in punycode form.
	h, err := svchost.ForComparison(svchost.ForDisplay(raw))
	if err != nil {
		return "", false
	}
	// A name that does not come back to itself (such as one holding
	// U+FFFD) could never be looked up again.
	if again, err := svchost.ForComparison(svchost.ForDisplay(h.String())); err != nil || again != h {
		return "", false
	}
	return h.String(), true
}
