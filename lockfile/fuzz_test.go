package lockfile

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
)

// FuzzRoundTrip checks, for any input that parses: Parse(Bytes(f)) equals
// f, and Bytes is a fixed point, in strict and lenient mode; and that
// nothing panics, including Patch on the input.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte(`provider "registry.opentofu.org/hashicorp/null" { version = "1.0.0" }`))
	f.Add([]byte("module \"a\" {\n  source = \"git::https://h/a.git\"\n  ref = \"main\"\n}\nmodule \"b\" {\n  source = \"oci://h/b\"\n  tag = \"1.0.0\"\n}\n"))
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
				// An edit of every kind must land in the patched file.
				edited := lf.Clone()
				editEverything(edited)
				patched, err := Patch(src, "fuzz.hcl", edited)
				if err != nil {
					t.Fatalf("Patch after an edit: %v", err)
				}
				pf, err = opts.Parse(patched, "patched.hcl")
				if err != nil {
					t.Fatalf("edited patched output does not parse: %v\ninput:\n%s\noutput:\n%s", err, src, patched)
				}
				if !Equal(edited, pf) {
					t.Fatalf("Patch did not apply the edit: %v\ninput:\n%s\noutput:\n%s", Changes(edited, pf), src, patched)
				}
			}
		}
	})
}

// editEverything changes every lock of f in every way the preserving
// writer supports: versions, constraints (added or removed), hashes, pins,
// a removed lock of each kind and a new one.
func editEverything(f *File) {
	first := true
	for p := range f.Providers() {
		if first {
			f.RemoveProvider(p.Addr)
			first = false
			continue
		}
		p.Version = versions.MustParse("9.9.9")
		if p.Constraints == "" {
			p.Constraints = "~> 9.0"
		} else {
			p.Constraints = ""
		}
		f.AddProviderHashes(p.Addr, fuzzHash)
	}
	f.SetProvider(&ProviderLock{Addr: tfaddr.MustParseProviderSource("example.com/fuzz/new"), Version: versions.MustParse("1.0.0"), Hashes: []hash.Hash{fuzzHash}})
	first = true
	for m := range f.Modules() {
		if first {
			f.RemoveModule(m.Path)
			first = false
			continue
		}
		// A versioned module has no ref or tag; one that loses its
		// version gains one, as a call pinned by its source.
		if m.Version.IsZero() {
			m.Version = versions.MustParse("2.0.0")
			m.Ref, m.Tag = "", ""
		} else {
			m.Version = versions.Version{}
			switch {
			case strings.HasPrefix(m.Source, "oci://"):
				m.Tag = "edited"
			case strings.HasPrefix(m.Source, "git::"):
				m.Ref = "edited"
			}
		}
		if m.Constraints == "" && !m.Version.IsZero() {
			m.Constraints = ">= 1.0.0"
		} else {
			m.Constraints = ""
		}
		m.Source += "//sub"
		if m.Subdir == "" {
			m.Subdir = "modules/edited"
		} else {
			m.Subdir = ""
		}
		m.Commit, m.Digest = strings.Repeat("a", 40), ""
		f.AddModuleHashes(m.Path, fuzzHash)
	}
	f.SetModule(&ModuleLock{Path: "fuzz_new.nested", Source: "example.com/a/b/c", Digest: "sha256:" + strings.Repeat("0", 64)})
}

const fuzzHash = hash.Hash("h1:7MjN4eFisdTv4tlhXH5hL4QQd39Jy4baPhFxwAd/EFE=")

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
