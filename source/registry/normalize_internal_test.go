package registry

import "testing"

// NormalizeHost skips IDNA processing for plain names: the result must be
// what the full path (svchost, and punycode accepted) gives, for plain
// names valid and invalid alike.
func TestNormalizeHostFastPath(t *testing.T) {
	slow := func(h string) string {
		n, err := forComparison(h)
		if err != nil {
			return h
		}
		return n
	}
	for _, h := range []string{
		"registry.opentofu.org", "registry.terraform.io", "a", "a.b.c", "a-b.example",
		"127.0.0.1", "example.com:443", "example.com:8443", "Registry.OpenTofu.org",
		"xn--caf-dma.example", "sub.xn--bcher-kva.example", "café.example",
		"a..b", ".a", "a.", "-a.example", "a-.example", "1.2.3.4.5", "under_score.example",
		"", "exa mple.com", "https://example.com",
	} {
		if got, want := NormalizeHost(h), slow(h); got != want {
			t.Errorf("NormalizeHost(%q) = %q, want %q", h, got, want)
		}
	}
}
