package install_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/registry"
	"github.com/tflock/tflock/source/registry/registrytest"
)

const (
	benchProvidersDefault = 50
	benchLatency          = 20 * time.Millisecond
)

// benchProviders is the number of providers locked; BENCH_PROVIDERS
// overrides it (1 measures the chain of one provider on its own).
var benchProviders = func() int {
	if n, err := strconv.Atoi(os.Getenv("BENCH_PROVIDERS")); err == nil && n > 0 {
		return n
	}
	return benchProvidersDefault
}()

var benchPlatforms = []string{"linux_amd64", "linux_arm64", "darwin_arm64", "windows_amd64"}

// benchWorld is a registry with benchProviders providers built for the
// four benchPlatforms, and a configuration requiring all of them.
func benchWorld(b *testing.B, packages bool) (*registrytest.Server, string) {
	b.Helper()
	var fx registrytest.Fixtures
	var cfg strings.Builder
	cfg.WriteString("terraform {\n  required_providers {\n")
	for i := range benchProviders {
		name := fmt.Sprintf("p%02d", i)
		fx.Providers = append(fx.Providers, registrytest.Provider{
			Addr:     "registry.example.test/bench/" + name,
			Versions: []registrytest.ProviderVersion{{Version: "1.0.0", Platforms: benchPlatforms}, {Version: "1.1.0", Platforms: benchPlatforms}},
		})
		fmt.Fprintf(&cfg, "    %s = { source = \"registry.example.test/bench/%s\", version = \"~> 1.0\" }\n", name, name)
	}
	cfg.WriteString("  }\n}\n")
	srv := registrytest.New(b, fx, registrytest.Options{Packages: packages})
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(cfg.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return srv, dir
}

// lockOnce locks every provider of dir for the four platforms, from a new
// registry client and an empty cache, and returns the requests made.
func lockOnce(b *testing.B, srv *registrytest.Server, dir string, concurrency int) int {
	b.Helper()
	var plats []source.Platform
	for _, p := range benchPlatforms {
		pl, _ := source.ParsePlatform(p)
		plats = append(plats, pl)
	}
	c, err := cache.Open(b.TempDir(), cache.Options{})
	if err != nil {
		b.Fatal(err)
	}
	before := srv.Requests()
	// A client that keeps a connection per concurrent request, as a
	// long-lived client would, instead of two.
	client := srv.Client()
	tr := client.Transport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = concurrency
	client.Transport = tr
	src := registry.NewSource(registry.Options{HTTPClient: client})
	res, err := install.Init(context.Background(), install.Options{
		Dir: dir, Source: src, Cache: c, Lock: lockfile.New(),
		ProvidersLock: true, Platforms: plats, Concurrency: concurrency,
	})
	if err != nil {
		b.Fatal(err)
	}
	if n := len(res.Lock.ProviderHashes(res.Selection.Providers[0].Addr)); n != 2*len(plats) {
		b.Fatalf("%d hashes locked for one provider, want %d (h1: and zh: of each platform)", n, 2*len(plats))
	}
	return srv.Requests() - before
}

// BenchmarkProvidersLock locks 50 providers for 4 platforms against a
// registry that adds 20 ms to every request. It reports, besides ns/op:
//
//   - chain-ms: the longest chain of dependent requests, times the latency:
//     discovery, versions, download metadata, SHA256SUMS, its signature,
//     and (without the packages field) the zip;
//   - x-chain: the run's time divided by chain-ms (target at most 1.5);
//   - sequential-ms: the same requests made one after another (measured
//     once, with Concurrency 1);
//   - requests/op.
func BenchmarkProvidersLock(b *testing.B) {
	for _, tc := range []struct {
		name     string
		packages bool
		chain    int
	}{
		{"downloads", false, 6},
		{"packages-field", true, 5},
	} {
		b.Run(tc.name, func(b *testing.B) {
			srv, dir := benchWorld(b, tc.packages)
			srv.SetLatency(benchLatency)
			if os.Getenv("BENCH_NO_LATENCY") != "" {
				srv.SetLatency(0)
			}
			start := time.Now()
			seqReqs := lockOnce(b, srv, dir, 1)
			seq := time.Since(start)
			b.ResetTimer()
			reqs := 0
			for b.Loop() {
				reqs = lockOnce(b, srv, dir, 256)
			}
			b.StopTimer()
			per := b.Elapsed() / time.Duration(b.N)
			chain := time.Duration(tc.chain) * benchLatency
			b.ReportMetric(float64(chain.Milliseconds()), "chain-ms")
			b.ReportMetric(float64(per)/float64(chain), "x-chain")
			b.ReportMetric(float64(seq.Milliseconds()), "sequential-ms")
			b.ReportMetric(float64(seqReqs), "sequential-requests")
			b.ReportMetric(float64(reqs), "requests/op")
		})
	}
}
