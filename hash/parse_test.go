package hash

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"testing"
)

func TestParseHash(t *testing.T) {
	tests := map[string]struct {
		scheme Scheme
		ok     bool
	}{
		// From HASH-VECTORS.tsv (x/mod dirhash and OpenTofu's tests).
		"h1:qjsREM4DqEWECD43FcPqddZ9oxCG+IaMTxvWPciS05g=":                     {SchemeH1, true},
		"zh:299dd806df78cb0537e5c111019eaca6e6b7797e1b63cb37cc6a76f91c6c0782": {SchemeZH, true},
		"h9:anything-goes.here": {"h9:", true},
		"h1:...":                {"", false},
		"h1:qjsREM4DqEWECD43FcPqddZ9oxCG+IaMTxvWPciS05g":                      {"", false},
		"zh:299DD806DF78CB0537E5C111019EACA6E6B7797E1B63CB37CC6A76F91C6C0782": {"", false},
		"zh:299dd806df78cb0537e5c111019eaca6e6b7797e1b63cb37cc6a76f91c6c07":   {"", false},
		"299dd806df78cb0537e5c111019eaca6e6b7797e1b63cb37cc6a76f91c6c0782":    {"", false},
		"H1:qjsREM4DqEWECD43FcPqddZ9oxCG+IaMTxvWPciS05g=":                     {"", false},
		"x1:":    {"", false},
		":abc":   {"", false},
		"x1:a b": {"", false},
		"":       {"", false},
	}
	for in, tt := range tests {
		h, err := ParseHash(in)
		if (err == nil) != tt.ok {
			t.Errorf("ParseHash(%q) error %v; want ok %v", in, err, tt.ok)
			continue
		}
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Input != in {
				t.Errorf("ParseHash(%q) error %#v; want a *ParseError naming the input", in, err)
			}
			continue
		}
		if h.Scheme() != tt.scheme || string(h) != in {
			t.Errorf("ParseHash(%q) = %q, scheme %q", in, h, h.Scheme())
		}
	}
	sum := sha256.Sum256([]byte("x"))
	if got, want := NewHash(SchemeZH, sum), "zh:"+hex.EncodeToString(sum[:]); string(got) != want {
		t.Errorf("NewHash(zh) = %s; want %s", got, want)
	}
	if got, want := NewHash(SchemeH1, sum), "h1:"+base64.StdEncoding.EncodeToString(sum[:]); string(got) != want {
		t.Errorf("NewHash(h1) = %s; want %s", got, want)
	}
}

// FuzzParseHash checks that ParseHash never panics, that the accessors are
// total, and that an accepted hash round-trips through its text form.
func FuzzParseHash(f *testing.F) {
	f.Add("h1:qjsREM4DqEWECD43FcPqddZ9oxCG+IaMTxvWPciS05g=")
	f.Add("zh:299dd806df78cb0537e5c111019eaca6e6b7797e1b63cb37cc6a76f91c6c0782")
	f.Add("h9:x")
	f.Fuzz(func(t *testing.T, s string) {
		raw := Hash(s)
		_, _ = raw.Scheme(), raw.Value()
		h, err := ParseHash(s)
		if err != nil {
			return
		}
		if string(h) != s || string(h.Scheme())+h.Value() != s {
			t.Fatalf("ParseHash(%q) = %q (%q + %q)", s, h, h.Scheme(), h.Value())
		}
		text, _ := h.MarshalText()
		var back Hash
		if err := back.UnmarshalText(text); err != nil || back != h {
			t.Fatalf("round trip of %q: %q, %v", s, back, err)
		}
		switch h.Scheme() {
		case SchemeH1:
			b, _ := base64.StdEncoding.DecodeString(h.Value())
			if NewHash(SchemeH1, [32]byte(b)) != h {
				t.Fatalf("NewHash(h1) of the decoded %q differs", s)
			}
		case SchemeZH:
			b, _ := hex.DecodeString(h.Value())
			if NewHash(SchemeZH, [32]byte(b)) != h {
				t.Fatalf("NewHash(zh) of the decoded %q differs", s)
			}
		}
	})
}

// TestHashText checks the text marshalling through encoding/json: a Hash
// is written as its lock-file string, and reading one validates it.
func TestHashText(t *testing.T) {
	type rec struct{ Hash Hash }
	h := MustParseHash("h1:qjsREM4DqEWECD43FcPqddZ9oxCG+IaMTxvWPciS05g=")
	b, err := json.Marshal(rec{h})
	if err != nil || string(b) != `{"Hash":"`+string(h)+`"}` {
		t.Fatalf("json.Marshal = %s, %v", b, err)
	}
	var back rec
	if err := json.Unmarshal(b, &back); err != nil || back.Hash != h {
		t.Errorf("json.Unmarshal = %v, %v; want %v", back.Hash, err, h)
	}
	var pe *ParseError
	if err := json.Unmarshal([]byte(`{"Hash":"zh:ABC"}`), &back); !errors.As(err, &pe) || pe.Input != "zh:ABC" {
		t.Errorf("json.Unmarshal of a malformed zh: error %v; want a *ParseError naming it", err)
	}
}
