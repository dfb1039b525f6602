package registry_test

import (
	"strings"
	"testing"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source/registry"
)

func FuzzParseSums(f *testing.F) {
	f.Add([]byte("7d7e888fdd28abfe00894f9055209b9eec785153641de98e6852aa071008d4ee  terraform_0.14.0_darwin_amd64.zip\n"))
	f.Add([]byte("\n\nABCDEF  x\n"))
	f.Fuzz(func(t *testing.T, doc []byte) {
		sums, err := registry.ParseSums(doc)
		if err != nil {
			return
		}
		for name, h := range sums {
			if _, err := hash.ParseHash(string(h)); err != nil || h.Scheme() != hash.SchemeZH {
				t.Errorf("%s: invalid hash %q: %v", name, h, err)
			}
			if name == "" || strings.ContainsAny(name, " \t\n") {
				t.Errorf("invalid file name %q", name)
			}
		}
		if len(sums.Hashes()) > len(sums) {
			t.Errorf("more distinct hashes than files")
		}
	})
}

func FuzzEnvCredentials(f *testing.F) {
	f.Add("TF_TOKEN_registry_example__corp_com", "tok", "registry.example-corp.com")
	f.Add("TF_TOKEN_xn____caf__dma_example", "tok", "café.example")
	f.Add("TF_TOKEN___", "x", "-")
	f.Fuzz(func(t *testing.T, name, value, host string) {
		creds := registry.EnvCredentials([]string{name + "=" + value})
		tok, ok := creds.Token(host)
		if ok && tok != value {
			t.Errorf("Token(%q) = %q, want %q or nothing", host, tok, value)
		}
		// The variable named by TokenVariable is found again.
		v := registry.TokenVariable(host)
		if got, ok := registry.EnvCredentials([]string{v + "=x"}).Token(host); ok && got != "x" {
			t.Errorf("TokenVariable(%q) = %q gives %q", host, v, got)
		}
	})
}
