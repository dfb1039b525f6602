package lockfile

import (
	"bytes"
	"slices"
	"testing"
)

// FuzzRoundTrip checks, for any input that parses: Parse(Bytes(f)) equals
// f, and Bytes is a fixed point, in strict and lenient mode; and that
// nothing panics, including Patch on the input.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte(`provider "registry.opentofu.org/hashicorp/null" { version = "1.0.0" }`))
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, opts := range []ParseOptions{{}, {Lenient: true}} {
			lf, err := opts.Parse(src, "fuzz.hcl")
			if err != nil {
				if _, ok := err.(*ParseError); !ok {
					t.Fatalf("error %T is not a *ParseError", err)
				}
				_ = err.Error()
				continue
			}
			out := lf.Bytes()
			again, err := opts.Parse(out, "out.hcl")
			if err != nil {
				t.Fatalf("canonical output does not parse: %v\ninput:\n%s\noutput:\n%s", err, src, out)
			}
			if !sameFile(lf, again) {
				t.Fatalf("Parse(Bytes(f)) != f: %v\noutput:\n%s", Changes(lf, again), out)
			}
			if out2 := again.Bytes(); !bytes.Equal(out, out2) {
				t.Fatalf("Bytes is not a fixed point:\n%s\n---\n%s", out, out2)
			}
			patched, err := Patch(src, "fuzz.hcl", lf)
			if err != nil {
				t.Fatalf("Patch of parsed input: %v", err)
			}
			if !opts.Lenient {
				pf, err := opts.Parse(patched, "patched.hcl")
				if err != nil {
					t.Fatalf("patched output does not parse: %v\n%s", err, patched)
				}
				if !Equal(lf, pf) {
					t.Fatalf("Patch changed the model: %v", Changes(lf, pf))
				}
			}
		}
	})
}

// sameFile compares everything the writer writes.
func sameFile(a, b *File) bool {
	if !Equal(a, b) || a.header != b.header || !slices.Equal(a.unknown, b.unknown) {
		return false
	}
	for k, p := range a.providers {
		if !slices.Equal(p.Unknown, b.providers[k].Unknown) {
			return false
		}
	}
	for k, m := range a.modules {
		if !slices.Equal(m.Unknown, b.modules[k].Unknown) {
			return false
		}
	}
	return true
}
