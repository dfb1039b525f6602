package display

import (
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"
	svchost "github.com/hashicorp/terraform-svchost"
)

// The results must be those of the libraries' own methods, for plain and
// internationalized names alike.
func TestMatchesLibraries(t *testing.T) {
	for _, given := range []string{
		"registry.opentofu.org", "registry.terraform.io", "example.com:8443",
		"localhost", "café.example", "ÉCOLE.example", "bücher.example:443",
		"a-b.c-d.example", "127.0.0.1:5000",
		"EXAMPLE.com",
	} {
		h, err := svchost.ForComparison(given)
		if err != nil {
			t.Fatalf("%s: %v", given, err)
		}
		if got, want := Host(h), h.ForDisplay(); got != want {
			t.Errorf("Host(%q) = %q, want %q", h, got, want)
		}
		p := tfaddr.NewProvider(h, "hashicorp", "aws")
		if got, want := Provider(p), p.String(); got != want {
			t.Errorf("Provider(%v) = %q, want %q", p, got, want)
		}
		if got, want := ProviderShort(p), p.ForDisplay(); got != want {
			t.Errorf("ProviderShort(%v) = %q, want %q", p, got, want)
		}
	}
	def := tfaddr.NewProvider(tfaddr.DefaultProviderRegistryHost, "hashicorp", "aws")
	if got, want := ProviderShort(def), def.ForDisplay(); got != want {
		t.Errorf("ProviderShort(%v) = %q, want %q", def, got, want)
	}
}

func BenchmarkHost(b *testing.B) {
	h, _ := svchost.ForComparison("registry.opentofu.org")
	b.Run("ForDisplay", func(b *testing.B) {
		for b.Loop() {
			_ = h.ForDisplay()
		}
	})
	b.Run("display.Host", func(b *testing.B) {
		for b.Loop() {
			_ = Host(h)
		}
	})
}
