package install_test

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/cache/ocitier"
	"github.com/tflock/tflock/source/oci"
	registrysrc "github.com/tflock/tflock/source/registry"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// BenchmarkRemoteTier: a runner with an empty local cache and the lock
// file installs the benchProviders providers of benchFixtures for this
// platform, from the origin registry (source=origin) or from a warm
// remote cache tier (source=tier, an OCI registry that an earlier runner
// filled), each server on a loopback address over TLS adding benchLatency
// to every request. The tier run must make no request to the origin.
// Compare the two with benchstat -col /source (see BENCHMARKS.md).
func BenchmarkRemoteTier(b *testing.B) {
	origin := registrytest.New(b, benchFixtures(), registrytest.Options{Hosts: []string{benchHost}})
	origin.SetLatency(benchLatency)
	var ociReg http.Handler = registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	if os.Getenv("BENCH_NO_LATENCY") != "" {
		origin.SetLatency(0)
	} else {
		ociReg = registrytest.WithLatency(ociReg, benchLatency)
	}
	tierSrv := httptest.NewTLSServer(ociReg)
	b.Cleanup(tierSrv.Close)
	location := "oci://" + strings.TrimPrefix(tierSrv.URL, "https://") + "/fleet"
	newTier := func() cache.Remote {
		t, err := ocitier.New(location, ocitier.Options{OCI: oci.Options{HTTPClient: tierSrv.Client()}})
		if err != nil {
			b.Fatal(err)
		}
		return t
	}
	dir := benchConfig(b)

	// The first runner: from the origin, written through to the tier.
	lock, _ := installOnce(b, origin, newTier(), dir, nil)

	for _, tc := range []struct {
		name string
		tier bool
	}{{"source=origin", false}, {"source=tier", true}} {
		b.Run(tc.name, func(b *testing.B) {
			reqs := 0
			for b.Loop() {
				b.StopTimer()
				if err := os.RemoveAll(filepath.Join(dir, ".terraform")); err != nil {
					b.Fatal(err)
				}
				var remote cache.Remote
				if tc.tier {
					remote = newTier()
				}
				b.StartTimer()
				_, reqs = installOnce(b, origin, remote, dir, lock)
			}
			b.ReportMetric(float64(reqs), "origin-requests/op")
			if tc.tier && reqs != 0 {
				b.Fatalf("the tier run made %d requests to the origin", reqs)
			}
		})
	}
}

// installOnce runs Init with an empty local cache (and the remote tier,
// when given) and returns the lock it made and the number of requests the
// origin registry served.
func installOnce(b *testing.B, origin *registrytest.Server, remote cache.Remote, dir string, lock *lockfile.File) (*lockfile.File, int) {
	b.Helper()
	b.StopTimer()
	c, err := cache.Open(b.TempDir(), cache.Options{Remote: remote})
	if err != nil {
		b.Fatal(err)
	}
	if lock == nil {
		lock = lockfile.New()
	}
	client := origin.Client()
	counted := &countingTransport{base: client.Transport}
	client.Transport = counted
	b.StartTimer()
	res, err := install.Init(context.Background(), install.Options{
		Dir: dir, Source: registrysrc.NewSource(registrysrc.Options{HTTPClient: client}), Cache: c, Resolve: resolve.Options{Lock: lock},
	})
	if err != nil {
		b.Fatal(err)
	}
	client.CloseIdleConnections()
	return res.Lock, int(counted.n.Load())
}
