package registry

import (
	"fmt"
	"os"
	"strings"

	svchost "github.com/hashicorp/terraform-svchost"
	"golang.org/x/net/idna"

	"github.com/tflock/tflock/source/internal/display"
	"github.com/tflock/tflock/source/internal/envtoken"
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
	if display.PlainName(host) {
		// Already in its comparable form (or one svchost refuses, which
		// is returned as given too), without the cost of IDNA.
		return host
	}
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
// os.Environ()), decoded exactly as OpenTofu does: the "TF_TOKEN_" prefix
// is matched case-sensitively; in the rest of the name "__" stands for "-"
// and "_" for "."; the host may be given in punycode (its "--" kept, as in
// "TF_TOKEN_xn--caf-dma_example", or encoded, as in
// "TF_TOKEN_xn____caf__dma_example") or as Unicode; names that decode to no
// valid host are ignored; when several variables name one host the last
// wins. For example TF_TOKEN_registry_example__corp_com holds the token for
// registry.example-corp.com.
//
// A variable with an empty value is kept, as in OpenTofu: it gives the
// host an empty token, which hides the host's other credentials in a
// [Chain], and no Authorization header is sent for it.
//
// Environment tokens take precedence over CLI configuration credentials:
// put EnvCredentials first in a [Chain].
func EnvCredentials(environ []string) Credentials {
	if environ == nil {
		environ = os.Environ()
	}
	return envCredentials(envtoken.Collect(environ))
}

// envCredentials are tokens keyed by normalized host, empty ones included.
type envCredentials map[string]string

func (e envCredentials) Token(host string) (string, bool) {
	t, ok := e[NormalizeHost(host)]
	return t, ok
}

// String does not show the tokens.
func (e envCredentials) String() string { return fmt.Sprintf("EnvCredentials(%d hosts)", len(e)) }

// GoString does not show the tokens.
func (e envCredentials) GoString() string { return e.String() }

// TokenVariable returns the name of the environment variable that holds the
// token for host: "TF_TOKEN_" followed by the punycode host with "-" written
// as "__" and "." as "_".
func TokenVariable(host string) string {
	h := NormalizeHost(host)
	h = strings.ReplaceAll(h, "-", "__")
	h = strings.ReplaceAll(h, ".", "_")
	return "TF_TOKEN_" + h
}
