package lockfile

import (
	"path/filepath"
	"strings"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
)

// TestPlainProviderAgreesWithTheParser checks that the judgment made
// without a parse (plainProvider) never accepts a lock the parser refuses:
// for every lock here, plain implies that the written lock parses back,
// strictly and leniently (checkLock), and the plain ones are plain.
func TestPlainProviderAgreesWithTheParser(t *testing.T) {
	addr := tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/null")
	h1 := hash.MustParseHash("h1:EjvDuY+uETiIQBlaCEFAKd1r4ueOwxisK1nyZ3Qd9PU=")
	zh := hash.MustParseHash("zh:2aa3aafc4d21d979145f65137a463d23ece880fb224b9e68ff4b02fde5b26850")
	v := versions.MustParse("3.2.0")
	cases := []struct {
		name  string
		lock  ProviderLock
		plain bool
	}{
		{"plain", ProviderLock{Addr: addr, Version: v, Constraints: "~> 3.0", Hashes: []hash.Hash{h1, zh}}, true},
		{"no hashes, no constraints", ProviderLock{Addr: addr, Version: v}, true},
		{"constraints not normalized", ProviderLock{Addr: addr, Version: v, Constraints: "~>3.0,>= 3.1"}, true},
		{"zero version", ProviderLock{Addr: addr, Hashes: []hash.Hash{h1}}, false},
		{"bad constraints", ProviderLock{Addr: addr, Version: v, Constraints: "~> banana"}, false},
		{"quoted constraints", ProviderLock{Addr: addr, Version: v, Constraints: "\"${x}\""}, false},
		{"malformed zh", ProviderLock{Addr: addr, Version: v, Hashes: []hash.Hash{"zh:bad"}}, false},
		{"upper-case zh", ProviderLock{Addr: addr, Version: v, Hashes: []hash.Hash{"zh:2AA3AAFC4D21D979145F65137A463D23ECE880FB224B9E68FF4B02FDE5B26850"}}, false},
		{"other scheme", ProviderLock{Addr: addr, Version: v, Hashes: []hash.Hash{"x1:abc"}}, false},
		{"quote in a hash", ProviderLock{Addr: addr, Version: v, Hashes: []hash.Hash{"h1:\"${x}\""}}, false},
		{"built-in provider", ProviderLock{Addr: tfaddr.MustParseProviderSource("terraform.io/builtin/terraform"), Version: v}, false},
		{"unknown item", ProviderLock{Addr: addr, Version: v, Unknown: []Unknown{{Name: "extra", Text: "extra = 1\n"}}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lock := c.lock
			plain := plainProvider(&lock)
			if plain != c.plain {
				t.Errorf("plainProvider = %v, want %v", plain, c.plain)
			}
			err := checkLock(lock.Addr.String(), func(f *File, strict bool) {
				l := lock.clone()
				l.Hashes = normalizeHashes(l.Hashes)
				f.providers[l.Addr] = l
			})
			if plain && err != nil {
				t.Errorf("plain, but the parser refuses it: %v", err)
			}
		})
	}
}

// TestWriteFilePlainOrParsed checks that WriteFile, which does not parse
// back a plain file, still refuses a file whose provider lock was made
// invalid through its pointer, or whose two locks now share an address.
func TestWriteFilePlainOrParsed(t *testing.T) {
	a := tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/null")
	b := tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/random")
	v := versions.MustParse("3.2.0")
	dir := t.TempDir()
	for _, c := range []struct {
		name   string
		spoil  func(f *File)
		refuse bool
	}{
		{"plain", func(*File) {}, false},
		{"version made zero", func(f *File) { f.Provider(a).Version = versions.Version{} }, true},
		{"two locks of one address", func(f *File) { f.Provider(b).Addr = a }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := New()
			for _, addr := range []tfaddr.Provider{a, b} {
				if err := f.SetProvider(&ProviderLock{Addr: addr, Version: v}); err != nil {
					t.Fatal(err)
				}
			}
			c.spoil(f)
			err := WriteFile(filepath.Join(dir, "lock.hcl"), f)
			if (err != nil) != c.refuse {
				t.Fatalf("WriteFile = %v; want refused %v", err, c.refuse)
			}
		})
	}
}

// TestVerdictsRemembered: a verdict is judged once, the same answer is
// given after, and a full set is emptied rather than grown.
func TestVerdictsRemembered(t *testing.T) {
	var v verdicts[int]
	calls := 0
	odd := func(k int) bool { calls++; return k%2 == 1 }
	for range 3 {
		if !v.judge(1, odd) || v.judge(2, odd) {
			t.Fatal("wrong verdict")
		}
	}
	if calls != 2 {
		t.Fatalf("judged %d times, want 2", calls)
	}
	for k := range maxVerdicts + 10 {
		if got := v.judge(k, odd); got != (k%2 == 1) {
			t.Fatalf("verdict on %d: %v", k, got)
		}
	}
	if len(v.m) > maxVerdicts {
		t.Fatalf("%d verdicts kept, at most %d", len(v.m), maxVerdicts)
	}
	// A remembered verdict does not hide a bad hash, version or address.
	for range 2 {
		if plainHash("zh:bad") || !plainHash(hash.Hash("zh:"+strings.Repeat("0", 64))) {
			t.Fatal("wrong hash verdict")
		}
		if !plainProvider(&ProviderLock{Addr: tfaddr.MustParseProviderSource("hashicorp/null"), Version: versions.MustParse("1.0.0")}) {
			t.Fatal("plain lock judged not plain")
		}
		if plainProvider(&ProviderLock{Addr: tfaddr.MustParseProviderSource("hashicorp/null"), Version: versions.MustParse("1.0.0"), Hashes: []hash.Hash{"zh:bad"}}) {
			t.Fatal("a bad hash judged plain")
		}
	}
}
