package registry_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/tflock/tflock/source/registry/registrytest"
)

// BenchmarkFetchProvider fetches a 1 MiB provider package from a registry
// answering every request after 20 ms, with a fresh Source each time
// (discovery, download metadata, SHA256SUMS, signature, zip).
func BenchmarkFetchProvider(b *testing.B) {
	srv := registrytest.New(b, registrytest.Fixtures{Providers: []registrytest.Provider{
		{Addr: "hashicorp/big", Versions: []registrytest.ProviderVersion{{Version: "1.0.0", Size: 1 << 20}}},
	}}, registrytest.Options{Latency: 20 * time.Millisecond})
	pkg := providerPkg(b, "registry.example.test/hashicorp/big", "1.0.0", "linux_amd64")
	base := b.TempDir()
	b.SetBytes(1 << 20)
	for i := 0; b.Loop(); i++ {
		src, _ := newSource(srv, nil)
		if _, err := src.Fetch(context.Background(), pkg, filepath.Join(base, fmt.Sprint(i))); err != nil {
			b.Fatal(err)
		}
	}
}
