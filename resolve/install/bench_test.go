package install_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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
func benchWorld(b *testing.B, opts registrytest.Options) (*registrytest.Server, string) {
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
	srv := registrytest.New(b, fx, opts)
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(cfg.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return srv, dir
}

// serialTransport lets one request at a time through: the next waits until
// the previous response's body is closed (or its round trip failed).
type serialTransport struct {
	base http.RoundTripper
	slot chan struct{}
}

func (t *serialTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	select {
	case t.slot <- struct{}{}:
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		<-t.slot
		return nil, err
	}
	resp.Body = &releaseBody{ReadCloser: resp.Body, release: func() { <-t.slot }}
	return resp, nil
}

type releaseBody struct {
	io.ReadCloser
	once    sync.Once
	release func()
}

func (b *releaseBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.release)
	return err
}

// lockOnce locks every provider of dir for the four platforms, from a new
// registry client and an empty cache, and returns the requests made. With
// serial set, Init runs with Concurrency 1 and the client sends one request
// at a time (the SHA256SUMS document and its signature, which the registry
// source asks for together, are then asked for one after the other too).
func lockOnce(b *testing.B, srv *registrytest.Server, dir string, serial bool) int {
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
	// The registry's own client settings (HTTP/2, or up to 64 idle
	// HTTP/1.1 connections per host), trusting the test certificate.
	client := srv.Client()
	concurrency := 0 // Init's default
	if serial {
		client.Transport = &serialTransport{base: client.Transport, slot: make(chan struct{}, 1)}
		concurrency = 1
	}
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
// registry that adds 20 ms to every request, with Init's default
// concurrency. It reports, besides ns/op:
//
//   - chain-ms: the longest chain of requests that depend on each other's
//     answers, times the latency. With the packages field: discovery →
//     versions → download metadata → SHA256SUMS and its signature (asked
//     for together): 4. Without it, Init asks one platform's checksums
//     first and downloads the platforms whose h1: is not reported
//     afterwards: discovery → versions → metadata → SHA256SUMS and
//     signature → each platform's metadata → its zip: 6;
//   - x-chain: ns/op divided by chain-ms (target at most 1.5);
//   - sequential-ms: the same requests made one after another (Concurrency
//     1 and a client that sends one request at a time), measured once;
//   - x-sequential: sequential-ms divided by ns/op;
//   - requests/op;
//   - cpu-ms/op: the CPU time the process used per run (client and the
//     in-process registry together; unix only), which depends less on
//     the other work the machine is doing than ns/op.
func BenchmarkProvidersLock(b *testing.B) {
	for _, tc := range []struct {
		name  string
		opts  registrytest.Options
		chain int
	}{
		{"downloads", registrytest.Options{}, 6},
		{"packages-field", registrytest.Options{Packages: true}, 4},
		{"packages-field-http1", registrytest.Options{Packages: true, HTTP1: true}, 4},
	} {
		b.Run(tc.name, func(b *testing.B) {
			srv, dir := benchWorld(b, tc.opts)
			srv.SetLatency(benchLatency)
			if os.Getenv("BENCH_NO_LATENCY") != "" {
				srv.SetLatency(0)
			}
			start := time.Now()
			seqReqs := lockOnce(b, srv, dir, true)
			seq := time.Since(start)
			b.ResetTimer()
			cpu0, cpuOK := processCPU()
			reqs := 0
			for b.Loop() {
				reqs = lockOnce(b, srv, dir, false)
			}
			b.StopTimer()
			if cpu1, ok := processCPU(); ok && cpuOK {
				b.ReportMetric(float64((cpu1-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
			}
			if reqs != seqReqs {
				b.Fatalf("%d requests, but %d one after another", reqs, seqReqs)
			}
			per := b.Elapsed() / time.Duration(b.N)
			chain := time.Duration(tc.chain) * benchLatency
			b.ReportMetric(float64(chain.Milliseconds()), "chain-ms")
			b.ReportMetric(float64(per)/float64(chain), "x-chain")
			b.ReportMetric(float64(seq.Milliseconds()), "sequential-ms")
			b.ReportMetric(float64(seq)/float64(per), "x-sequential")
			b.ReportMetric(float64(reqs), "requests/op")
		})
	}
}
