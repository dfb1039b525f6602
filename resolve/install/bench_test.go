package install_test

import (
	"bufio"
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/registry"
	"github.com/tflock/tflock/source/registry/registrytest"
)

const (
	benchProvidersDefault = 50
	benchLatency          = 20 * time.Millisecond
	// benchHost is OpenTofu's default registry, whose packages field a
	// lock records as it is (tofu records it too): on another host its
	// h1: are not signed, and each platform is downloaded to be hashed.
	benchHost = "registry.opentofu.org"
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

// benchFixtures are benchProviders providers, each with versions 1.0.0 and
// 1.1.0 built for the four benchPlatforms.
func benchFixtures() registrytest.Fixtures {
	var fx registrytest.Fixtures
	for i := range benchProviders {
		fx.Providers = append(fx.Providers, registrytest.Provider{
			Addr:     fmt.Sprintf("%s/bench/p%02d", benchHost, i),
			Versions: []registrytest.ProviderVersion{{Version: "1.0.0", Platforms: benchPlatforms}, {Version: "1.1.0", Platforms: benchPlatforms}},
		})
	}
	return fx
}

// benchConfig writes a configuration requiring every provider of
// benchFixtures and returns its directory.
func benchConfig(tb testing.TB) string {
	tb.Helper()
	var cfg strings.Builder
	cfg.WriteString("terraform {\n  required_providers {\n")
	for i := range benchProviders {
		name := fmt.Sprintf("p%02d", i)
		fmt.Fprintf(&cfg, "    %s = { source = \"%s/bench/%s\", version = \"~> 1.0\" }\n", name, benchHost, name)
	}
	cfg.WriteString("  }\n}\n")
	dir := tb.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(cfg.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// benchRegistry is the registry a benchmark talks to: in this process
// (*registrytest.Server) or in another one (*registryProcess).
type benchRegistry interface {
	Client() *http.Client
}

// registryProcessEnv, set in the environment of this test binary, makes
// TestBenchRegistryProcess serve the benchmark registry (with the
// registrytest options named by the value) instead of skipping.
const registryProcessEnv = "TFLOCK_BENCH_REGISTRY_PROCESS"

// TestBenchRegistryProcess is not a test: it is the registry process of
// BenchmarkProvidersLock's "-process" variants, started by
// startRegistryProcess. It prints the server's address and certificate,
// then serves until its standard input ends.
func TestBenchRegistryProcess(t *testing.T) {
	mode := os.Getenv(registryProcessEnv)
	if mode == "" {
		t.Skip("runs only as the registry process of BenchmarkProvidersLock")
	}
	opts := registrytest.Options{Hosts: []string{benchHost}, Packages: strings.Contains(mode, "packages"), HTTP1: strings.Contains(mode, "http1")}
	srv := registrytest.New(t, benchFixtures(), opts)
	srv.SetLatency(benchLatency)
	if os.Getenv("BENCH_NO_LATENCY") != "" {
		srv.SetLatency(0)
	}
	fmt.Printf("registry %s %s\n", strings.TrimPrefix(srv.URL, "https://"), base64.StdEncoding.EncodeToString(srv.Certificate().Raw))
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// registryProcess is the benchmark registry served by another process
// (this test binary running TestBenchRegistryProcess), so that the server
// shares the machine's cores with the client but not its Go scheduler,
// as a real registry shares neither.
type registryProcess struct {
	addr  string
	cert  *x509.Certificate
	http1 bool
}

// startRegistryProcess starts the registry process for mode (the
// registrytest options: "packages", "http1") and stops it when tb ends.
func startRegistryProcess(tb testing.TB, mode string) *registryProcess {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestBenchRegistryProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), registryProcessEnv+"="+mode)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		in.Close()
		_ = cmd.Wait()
	})
	p := &registryProcess{http1: strings.Contains(mode, "http1")}
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		f := strings.Fields(lines.Text())
		if len(f) != 3 || f[0] != "registry" {
			continue
		}
		der, err := base64.StdEncoding.DecodeString(f[2])
		if err != nil {
			tb.Fatal(err)
		}
		if p.cert, err = x509.ParseCertificate(der); err != nil {
			tb.Fatal(err)
		}
		p.addr = f[1]
		// Keep reading, so that the process never blocks on a full pipe.
		go func() { _, _ = io.Copy(io.Discard, out) }()
		return p
	}
	tb.Fatalf("the registry process did not start: %v", lines.Err())
	return nil
}

func (p *registryProcess) Client() *http.Client {
	return registrytest.ClientFor(p.addr, p.cert, p.http1)
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
// registry client and the empty cache in cacheDir, and returns the requests made. With
// serial set, Init runs with Concurrency 1 and the client sends one request
// at a time (the SHA256SUMS document and its signature, which the registry
// source asks for together, are then asked for one after the other too).
func lockOnce(b *testing.B, srv benchRegistry, dir, cacheDir string, serial bool) int {
	b.Helper()
	var plats []source.Platform
	for _, p := range benchPlatforms {
		pl, _ := source.ParsePlatform(p)
		plats = append(plats, pl)
	}
	c, err := cache.Open(cacheDir, cache.Options{})
	if err != nil {
		b.Fatal(err)
	}
	// The registry's own client settings (HTTP/2, or up to 64 idle
	// HTTP/1.1 connections per host), trusting the test certificate.
	client := srv.Client()
	counted := &countingTransport{base: client.Transport}
	client.Transport = counted
	concurrency := 0 // Init's default
	if serial {
		client.Transport = &serialTransport{base: client.Transport, slot: make(chan struct{}, 1)}
		concurrency = 1
	}
	src := registry.NewSource(registry.Options{HTTPClient: client})
	res, err := install.Init(context.Background(), install.Options{
		Dir: dir, Source: src, Cache: c, Resolve: resolve.Options{Lock: lockfile.New(), Concurrency: concurrency},
		ProvidersLock: true, Platforms: plats,
	})
	if err != nil {
		b.Fatal(err)
	}
	// As when the process ends: the server does not keep a connection per
	// run open.
	client.CloseIdleConnections()
	if n := len(res.Lock.ProviderHashes(res.Selection.Providers[0].Addr)); n != 2*len(plats) {
		b.Fatalf("%d hashes locked for one provider, want %d (h1: and zh: of each platform)", n, 2*len(plats))
	}
	return int(counted.n.Load())
}

// countingTransport counts the requests made through it.
type countingTransport struct {
	base http.RoundTripper
	n    atomic.Int64
}

func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.n.Add(1)
	return t.base.RoundTrip(req)
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
		{"packages-field-process", registrytest.Options{Packages: true}, 4},
		{"downloads-process", registrytest.Options{}, 6},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var srv benchRegistry
			dir := benchConfig(b)
			if mode, ok := strings.CutSuffix(tc.name, "-process"); ok {
				// "packages-field" or "downloads": the registry runs in
				// another process.
				srv = startRegistryProcess(b, mode)
			} else {
				tc.opts.Hosts = []string{benchHost}
				s := registrytest.New(b, benchFixtures(), tc.opts)
				s.SetLatency(benchLatency)
				if os.Getenv("BENCH_NO_LATENCY") != "" {
					s.SetLatency(0)
				}
				srv = s
			}
			// BENCH_NO_SEQUENTIAL=1 skips the measurement one request
			// after another (4 s), for quick comparisons.
			measureSeq := os.Getenv("BENCH_NO_SEQUENTIAL") == ""
			var seq time.Duration
			seqReqs := -1
			if measureSeq {
				start := time.Now()
				seqReqs = lockOnce(b, srv, dir, b.TempDir(), true)
				seq = time.Since(start)
			}
			b.ResetTimer()
			cpu0, cpuOK := processCPU()
			reqs := 0
			for b.Loop() {
				// A new, empty cache for each run. Making its directory is
				// the benchmark's business, not the run's: on this
				// machine's /tmp one mkdir costs more than a millisecond.
				b.StopTimer()
				cacheDir := b.TempDir()
				b.StartTimer()
				reqs = lockOnce(b, srv, dir, cacheDir, false)
			}
			b.StopTimer()
			if cpu1, ok := processCPU(); ok && cpuOK {
				b.ReportMetric(float64((cpu1-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
			}
			if measureSeq && reqs != seqReqs {
				b.Fatalf("%d requests, but %d one after another", reqs, seqReqs)
			}
			per := b.Elapsed() / time.Duration(b.N)
			chain := time.Duration(tc.chain) * benchLatency
			b.ReportMetric(float64(chain.Milliseconds()), "chain-ms")
			b.ReportMetric(float64(per)/float64(chain), "x-chain")
			if measureSeq {
				b.ReportMetric(float64(seq.Milliseconds()), "sequential-ms")
				b.ReportMetric(float64(seq)/float64(per), "x-sequential")
			}
			b.ReportMetric(float64(reqs), "requests/op")
		})
	}
}

// BenchmarkProvidersLockRawHTTP makes the requests of the packages-field
// runs of BenchmarkProvidersLock (service discovery; then, for each
// provider at once, its version list, the download response of 1.1.0 for
// the first platform, and SHA256SUMS with its signature together) with a
// bare HTTP client that reads each answer and does nothing else: no
// configuration to read, no JSON beyond the two URLs it needs, no
// signature check. It is the floor that the machine, the HTTP stack and
// the in-process registry set for those requests, against which the
// library's own cost in BenchmarkProvidersLock can be told apart. It
// reports x-chain like BenchmarkProvidersLock, with the registry in this
// process (packages-field) or in another one (packages-field-process).
func BenchmarkProvidersLockRawHTTP(b *testing.B) {
	b.Run("packages-field", func(b *testing.B) {
		srv := registrytest.New(b, benchFixtures(), registrytest.Options{Hosts: []string{benchHost}, Packages: true})
		srv.SetLatency(benchLatency)
		if os.Getenv("BENCH_NO_LATENCY") != "" {
			srv.SetLatency(0)
		}
		rawRequests(b, srv)
	})
	b.Run("packages-field-process", func(b *testing.B) {
		rawRequests(b, startRegistryProcess(b, "packages-field"))
	})
}

// rawRequests is BenchmarkProvidersLockRawHTTP's loop against srv.
func rawRequests(b *testing.B, srv benchRegistry) {
	base := "https://" + benchHost
	get := func(c *http.Client, u string) []byte {
		resp, err := c.Get(u)
		if err != nil {
			b.Error(err)
			return nil
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Errorf("GET %s: %s, %v", u, resp.Status, err)
		}
		return body
	}
	for b.Loop() {
		c := srv.Client()
		get(c, base+"/.well-known/terraform.json")
		var wg sync.WaitGroup
		for i := range benchProviders {
			wg.Go(func() {
				p := fmt.Sprintf("%s/v1/providers/bench/p%02d/", base, i)
				get(c, p+"versions")
				var dl struct {
					Sums string `json:"shasums_url"`
					Sig  string `json:"shasums_signature_url"`
				}
				if err := json.Unmarshal(get(c, p+"1.1.0/download/"+strings.Replace(benchPlatforms[0], "_", "/", 1)), &dl); err != nil {
					b.Error(err)
					return
				}
				var sig sync.WaitGroup
				sig.Go(func() { get(c, base+dl.Sig) })
				get(c, base+dl.Sums)
				sig.Wait()
			})
		}
		wg.Wait()
		c.CloseIdleConnections()
	}
	chain := 4 * benchLatency
	b.ReportMetric(float64(chain.Milliseconds()), "chain-ms")
	b.ReportMetric(float64(b.Elapsed()/time.Duration(b.N))/float64(chain), "x-chain")
}
