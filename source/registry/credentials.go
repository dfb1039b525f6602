package registry

import (
	"os"
	"strings"

	svchost "github.com/hashicorp/terraform-svchost"
	"golang.org/x/net/idna"
)

// Credentials supply the bearer token for a registry host. Implementations
// must never log or print tokens. The host is normalized as
// [NormalizeHost] does.
type Credentials interface {
	// Token returns the token for host and whether there is one.
	Token(host string) (token string, ok bool)
}

// NormalizeHost returns the comparable form of a host name: lower case,
// international names in punycode, a default https port removed. It returns
// the input unchanged if it is not a valid host name.
func NormalizeHost(host string) string {
	h, err := forComparison(host)
	if err != nil {
		return host
	}
	return h
}

// forComparison is svchost.ForComparison, also accepting names given in
// punycode ("xn--caf-dma.example"), which svchost refuses.
func forComparison(host string) (string, error) {
	h, err := svchost.ForComparison(host)
	if err == nil {
		return string(h), nil
	}
	if !strings.Contains(strings.ToLower(host), "xn--") {
		return "", err
	}
	u, uerr := idna.ToUnicode(host)
	if uerr != nil {
		return "", err
	}
	h, err = svchost.ForComparison(u)
	return string(h), err
}

// Tokens are static credentials by host, such as the token attributes of the
// CLI configuration's credentials blocks. Keys are host names in any
// spelling that [NormalizeHost] accepts.
type Tokens map[string]string

// Token implements [Credentials].
func (t Tokens) Token(host string) (string, bool) {
	want := NormalizeHost(host)
	for h, tok := range t {
		if NormalizeHost(h) == want && tok != "" {
			return tok, true
		}
	}
	return "", false
}

// Chain returns credentials that ask each of cs in turn and use the first
// token found.
func Chain(cs ...Credentials) Credentials { return chain(cs) }

type chain []Credentials

func (c chain) Token(host string) (string, bool) {
	for _, cr := range c {
		if cr == nil {
			continue
		}
		if t, ok := cr.Token(host); ok {
			return t, true
		}
	}
	return "", false
}

// EnvCredentials returns the credentials given by TF_TOKEN_<host>
// environment variables in environ ("NAME=value" entries; nil means
// os.Environ()). As in OpenTofu and Terraform, the host is encoded in the
// variable name with each "." written as "_" and each "-" as "__", and an
// international name in its punycode form; the name part is matched
// case-insensitively. A punycode label may keep its "--" ("TF_TOKEN_xn--caf-dma_example")
// or encode it ("TF_TOKEN_xn____caf__dma_example"). For example TF_TOKEN_registry_example__corp_com holds
// the token for registry.example-corp.com.
//
// Environment tokens take precedence over CLI configuration credentials:
// put EnvCredentials first in a [Chain].
func EnvCredentials(environ []string) Credentials {
	if environ == nil {
		environ = os.Environ()
	}
	t := make(Tokens)
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || len(name) <= len("TF_TOKEN_") || !strings.EqualFold(name[:len("TF_TOKEN_")], "TF_TOKEN_") {
			continue
		}
		host, ok := decodeTokenVarHost(name[len("TF_TOKEN_"):])
		if !ok || value == "" {
			continue
		}
		t[host] = value
	}
	return t
}

// decodeTokenVarHost turns the part of a TF_TOKEN_ variable name after the
// prefix back into a host name: "__" is "-", "_" is ".".
func decodeTokenVarHost(enc string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(enc); i++ {
		switch {
		case enc[i] == '_' && i+1 < len(enc) && enc[i+1] == '_':
			b.WriteByte('-')
			i++
		case enc[i] == '_':
			b.WriteByte('.')
		default:
			b.WriteByte(enc[i])
		}
	}
	h, err := forComparison(b.String())
	if err != nil {
		return "", false
	}
	return h, true
}

// TokenVariable returns the name of the environment variable that holds the
// token for host: "TF_TOKEN_" followed by the punycode host with "-" written
// as "__" and "." as "_".
func TokenVariable(host string) string {
	h := NormalizeHost(host)
	h = strings.ReplaceAll(h, "-", "__")
	h = strings.ReplaceAll(h, ".", "_")
	return "TF_TOKEN_" + h
}
