package lockfile_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve/versions"
)

// TestSettersRefuse checks that the setters refuse, with a *LockError
// saying why, every value the parser would refuse once written, and leave
// the file as it was: the writers then never produce what Parse refuses.
func TestSettersRefuse(t *testing.T) {
	f := mustParse(t, sample)
	before := f.Bytes()
	refused := func(name string, err error, want string) {
		t.Helper()
		var le *lockfile.LockError
		if !errors.As(err, &le) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v; want a *LockError saying %q", name, err, want)
		}
		if got := f.Bytes(); string(got) != string(before) {
			t.Errorf("%s: the file changed:\n%s", name, got)
		}
		if _, err := lockfile.Parse(f.Bytes(), "after.hcl"); err != nil {
			t.Errorf("%s: the file no longer parses: %v", name, err)
		}
	}
	ok, err := f.AddProviderHashes(nullAddr, h1B, "zh:bad")
	if ok {
		t.Error(`AddProviderHashes(.., "zh:bad") reported a change`)
	}
	refused("AddProviderHashes zh:bad", err, `"zh:bad"`)
	_, err = f.AddProviderHashes(nullAddr, "nocolon")
	refused("AddProviderHashes nocolon", err, `"nocolon"`)
	_, err = f.AddModuleHashes("vpc", "h1:short")
	refused("AddModuleHashes h1:short", err, `"h1:short"`)

	bad := *f.Provider(nullAddr)
	bad.Constraints = "~> "
	refused("SetProvider constraints", f.SetProvider(&bad), "constraint")
	bad = *f.Provider(nullAddr)
	bad.Version = versions.Version{}
	refused("SetProvider no version", f.SetProvider(&bad), "version")

	for name, m := range map[string]lockfile.ModuleLock{
		"call path": {Path: "not a path", Source: "example.com/x"},
		"no source": {Path: "x"},
		"commit":    {Path: "x", Source: "git::https://example.com/x.git", Commit: "abc"},
		"digest":    {Path: "x", Source: "oci://example.com/x", Digest: "sha256:1"},
		"ref":       {Path: "x", Source: "git::https://example.com/x.git", Ref: "a..b"},
		"hash":      {Path: "x", Source: "example.com/x", Hashes: []hash.Hash{"zh:bad"}},
	} {
		refused("SetModule "+name, f.SetModule(&m), "")
	}

	// Valid values are taken.
	if ok, err := f.AddProviderHashes(nullAddr, h1B); !ok || err != nil {
		t.Fatalf("AddProviderHashes(h1B) = %v, %v", ok, err)
	}
	if err := f.SetModule(&lockfile.ModuleLock{Path: "x", Source: "example.com/x", Hashes: []hash.Hash{h1A}}); err != nil {
		t.Fatal(err)
	}
	if _, err := lockfile.Parse(f.Bytes(), "after.hcl"); err != nil {
		t.Fatal(err)
	}
}

// TestSettersKeepLenientHashes checks that a hash a lenient parse kept
// ("zh:" with a malformed value, which OpenTofu accepts) stays when its
// lock is set again or grows, while a new malformed hash is refused.
func TestSettersKeepLenientHashes(t *testing.T) {
	src := strings.Replace(sample, `"h1:7MjN4eFisdTv4tlhXH5hL4QQd39Jy4baPhFxwAd/EFE=",`, `"zh:kept",`, 1)
	f, err := lockfile.ParseOptions{Lenient: true}.Parse([]byte(src), "lenient.hcl")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := f.AddProviderHashes(nullAddr, h1A); !ok || err != nil {
		t.Fatalf("AddProviderHashes beside a kept hash = %v, %v", ok, err)
	}
	p := *f.Provider(nullAddr)
	p.Constraints = "~> 3.2"
	if err := f.SetProvider(&p); err != nil {
		t.Fatalf("SetProvider of a lock with a kept hash: %v", err)
	}
	if !slices.Contains(f.ProviderHashes(nullAddr), "zh:kept") {
		t.Fatalf("the kept hash is gone: %v", f.ProviderHashes(nullAddr))
	}
	if _, err := f.AddProviderHashes(nullAddr, "zh:new"); err == nil {
		t.Fatal(`AddProviderHashes("zh:new") accepted`)
	}
}
