package envtoken

import (
	"maps"
	"testing"
)

func TestCollect(t *testing.T) {
	// The encodings are those OpenTofu documents for TF_TOKEN_ variables:
	// "." as "_", "-" as "__", and "café.fr" as "xn--caf-dma.fr" with
	// either spelling of its hyphens.
	got := Collect([]string{
		"TF_TOKEN_registry_example__corp_com=a",
		"TF_TOKEN_xn____caf__dma_fr=b",
		"TF_TOKEN_Mixed_Example_COM=c",
		"tf_token_lower_example_com=ignored: the prefix is case-sensitive",
		"TF_TOKEN_=ignored: no host",
		"TF_TOKEN_bad!host=ignored",
		"PATH=/bin",
		"NOEQUALS",
	})
	want := map[string]string{
		"registry.example-corp.com": "a",
		"xn--caf-dma.fr":            "b",
		"mixed.example.com":         "c",
	}
	if !maps.Equal(got, want) {
		t.Errorf("Collect = %v, want %v", got, want)
	}
	if got := Collect([]string{"TF_TOKEN_xn--caf-dma_fr=d"}); got["xn--caf-dma.fr"] != "d" {
		t.Errorf("punycode with literal hyphens: %v", got)
	}
}

func FuzzDecodeHost(f *testing.F) {
	for _, s := range []string{"registry_example__corp_com", "xn____caf__dma_fr", "", "_", "__", "a___b", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, enc string) {
		h, ok := DecodeHost(enc)
		if !ok {
			return
		}
		// A decoded host is normalized: it decodes to itself when written
		// with dots and hyphens (the encoding is ambiguous for hosts with
		// empty labels, so the underscore form is not checked).
		if again, ok := DecodeHost(h); !ok || again != h {
			t.Errorf("DecodeHost(%q) = %q, which decodes to %q, %v", enc, h, again, ok)
		}
	})
}
