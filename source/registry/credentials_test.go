package registry_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tflock/tflock/source/registry"
)

func TestEnvCredentials(t *testing.T) {
	env := []string{
		"TF_TOKEN_registry_example__corp_com=dash",
		"TF_TOKEN_APP_EXAMPLE_COM=case",
		"tf_token_lower_example_com=ignored: the prefix is case-sensitive",
		"TF_TOKEN_xn--caf-dma_example=idn",
		"TF_TOKEN_xn____caf__dmb_example=idn2",
		"TF_TOKEN_=empty-host",
		"TF_TOKEN_empty_value=",
		"PATH=/bin",
		"TF_TOKEN_localhost:8443=port",
	}
	creds := registry.EnvCredentials(env)
	for host, want := range map[string]string{
		"registry.example-corp.com": "dash",
		"app.example.com":           "case",
		"APP.example.com":           "case",
		"café.example":              "idn",
		"xn--caf-dma.example":       "idn",
		"localhost:8443":            "port",
		// "xn--caf-dmb" is no valid punycode label: OpenTofu's
		// svchost.ForComparison refuses it, so the variable is ignored.
		"xn--caf-dmb.example":       "",
		"registry.example.corp.com": "",
		"lower.example.com":         "",
	} {
		got, ok := creds.Token(host)
		if got != want || ok != (want != "") {
			t.Errorf("Token(%q) = %q, %v; want %q", host, got, ok, want)
		}
	}
	// An empty value is kept, as in OpenTofu: the host has an empty token.
	if got, ok := creds.Token("empty.value"); got != "" || !ok {
		t.Errorf("Token(empty.value) = %q, %v; want \"\", true", got, ok)
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		if s := fmt.Sprintf(verb, creds); strings.Contains(s, "dash") || strings.Contains(s, "idn") {
			t.Errorf("%s of EnvCredentials shows a token: %s", verb, s)
		}
	}
}

// TestEnvCredentialsEmptyHides checks OpenTofu's precedence: an empty
// TF_TOKEN_ variable still hides the CLI configuration's token, and no
// Authorization header is built from it.
func TestEnvCredentialsEmptyHides(t *testing.T) {
	c := registry.Chain(registry.EnvCredentials([]string{"TF_TOKEN_h_example="}), registry.Tokens{"h.example": "config"})
	if got, ok := c.Token("h.example"); got != "" || !ok {
		t.Errorf("Token(h.example) = %q, %v; want the empty environment token", got, ok)
	}
}

func TestTokenVariable(t *testing.T) {
	for host, want := range map[string]string{
		"registry.example-corp.com": "TF_TOKEN_registry_example__corp_com",
		"café.example":              "TF_TOKEN_xn____caf__dma_example",
		"App.Example.com":           "TF_TOKEN_app_example_com",
	} {
		if got := registry.TokenVariable(host); got != want {
			t.Errorf("TokenVariable(%q) = %q, want %q", host, got, want)
		}
	}
}

func TestChainPrecedence(t *testing.T) {
	c := registry.Chain(registry.EnvCredentials([]string{"TF_TOKEN_h_example=env"}), registry.Tokens{"h.example": "config", "other.example": "config2"})
	if got, _ := c.Token("h.example"); got != "env" {
		t.Errorf("h.example: %q, want the environment's token", got)
	}
	if got, _ := c.Token("other.example"); got != "config2" {
		t.Errorf("other.example: %q, want the config's token", got)
	}
}
