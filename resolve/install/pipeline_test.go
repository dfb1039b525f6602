package install_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/registry"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// holdTransport holds back the version list of one provider until the
// download response of another has been asked for.
type holdTransport struct {
	base     http.RoundTripper
	hold     string        // path suffix of the request held back
	until    string        // path fragment of the request it waits for
	seen     chan struct{} // closed when that request is made
	once     sync.Once
	timedOut bool
}

func (t *holdTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.Contains(req.URL.Path, t.until) {
		t.once.Do(func() { close(t.seen) })
	}
	if strings.HasSuffix(req.URL.Path, t.hold) {
		select {
		case <-t.seen:
		case <-time.After(10 * time.Second):
			t.timedOut = true
		}
	}
	return t.base.RoundTrip(req)
}

// lockPipelined locks two providers for two platforms in providers-lock
// mode through a registry whose "slow" provider's version list is held
// back until the "fast" provider's download response is asked for.
// picked, if not nil, makes Options.Resolve.ProviderPicked for the
// registry.
func lockPipelined(t *testing.T, picked func(*registrytest.Server) func(context.Context, resolve.ProviderPick)) (*registrytest.Server, *holdTransport, *install.Result, []string) {
	t.Helper()
	plats := []string{"linux_amd64", "darwin_arm64"}
	fx := registrytest.Fixtures{Providers: []registrytest.Provider{
		{Addr: "registry.example.test/acme/fast", Versions: []registrytest.ProviderVersion{{Version: "1.0.0", Platforms: plats}}},
		{Addr: "registry.example.test/acme/slow", Versions: []registrytest.ProviderVersion{{Version: "2.0.0", Platforms: plats}}},
	}}
	srv := registrytest.New(t, fx, registrytest.Options{Packages: true})
	dir := t.TempDir()
	cfg := `terraform {
  required_providers {
    fast = { source = "registry.example.test/acme/fast" }
    slow = { source = "registry.example.test/acme/slow" }
  }
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	client := srv.Client()
	hold := &holdTransport{base: client.Transport, hold: "/acme/slow/versions", until: "/acme/fast/1.0.0/download/", seen: make(chan struct{})}
	client.Transport = hold
	c, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var platforms []source.Platform
	for _, p := range plats {
		pl, _ := source.ParsePlatform(p)
		platforms = append(platforms, pl)
	}
	ropts := resolve.Options{Lock: lockfile.New()}
	if picked != nil {
		ropts.ProviderPicked = picked(srv)
	}
	res, err := install.Init(context.Background(), install.Options{
		Dir: dir, Source: registry.NewSource(registry.Options{HTTPClient: client}), Cache: c,
		Resolve:       ropts,
		ProvidersLock: true, Platforms: platforms,
	})
	if err != nil {
		t.Fatal(err)
	}
	return srv, hold, res, plats
}

// In providers-lock mode, a provider's checksums are asked for as soon as
// its own version is known: the download response of one provider is
// requested while another provider's version list is still on its way, and
// still every document is asked for once.
func TestProvidersLockPipelined(t *testing.T) {
	srv, hold, res, plats := lockPipelined(t, nil)
	if hold.timedOut {
		t.Error("the fast provider's download response was not asked for while the slow provider was being listed")
	}
	for _, p := range res.Selection.Providers {
		if n := len(res.Lock.ProviderHashes(p.Addr)); n != 2*len(plats) {
			t.Errorf("%s: %d hashes locked, want %d", p.Addr, n, 2*len(plats))
		}
	}
	for _, path := range []string{
		"/v1/providers/acme/fast/versions", "/v1/providers/acme/slow/versions",
		"/v1/providers/acme/fast/1.0.0/download/linux/amd64", "/v1/providers/acme/slow/2.0.0/download/linux/amd64",
		"/files/providers/registry.example.test/acme/fast/1.0.0/terraform-provider-fast_1.0.0_SHA256SUMS",
		"/files/providers/registry.example.test/acme/fast/1.0.0/terraform-provider-fast_1.0.0_SHA256SUMS.sig",
		"/files/providers/registry.example.test/acme/slow/2.0.0/terraform-provider-slow_2.0.0_SHA256SUMS",
	} {
		if n := srv.RequestsTo(path); n != 1 {
			t.Errorf("%s asked for %d times, want once", path, n)
		}
	}
}

// A caller's Options.Resolve.ProviderPicked is called once with each
// provider's pick, the pick the Selection holds, before Init's own use of
// the hook in providers-lock mode (its download response not yet asked
// for), which still runs: the slow provider's listing still waits on the
// fast one's download response that Init's prefetch asks for, and every
// document is asked for once.
func TestProvidersLockCallerProviderPicked(t *testing.T) {
	var mu sync.Mutex
	picks := map[tfaddr.Provider]resolve.ProviderPick{}
	asked := map[tfaddr.Provider]int{} // the pick's download response, when it is reported
	srv, hold, res, _ := lockPipelined(t, func(srv *registrytest.Server) func(context.Context, resolve.ProviderPick) {
		return func(_ context.Context, p resolve.ProviderPick) {
			mu.Lock()
			defer mu.Unlock()
			if _, dup := picks[p.Addr]; dup {
				t.Errorf("%s reported twice", p.Addr)
			}
			picks[p.Addr] = p
			asked[p.Addr] = srv.RequestsTo("/v1/providers/acme/" + p.Addr.Type + "/" + p.Version.String() + "/download/linux/amd64")
		}
	})
	if hold.timedOut {
		t.Error("with the caller's hook, the fast provider's download response was not asked for while the slow provider was being listed")
	}
	if len(picks) != len(res.Selection.Providers) {
		t.Errorf("%d picks reported, want %d", len(picks), len(res.Selection.Providers))
	}
	for _, want := range res.Selection.Providers {
		got, ok := picks[want.Addr]
		if !ok || got.Version != want.Version || got.Reason != want.Reason {
			t.Errorf("%s: reported %+v, the Selection holds %+v", want.Addr, got, want)
		}
		if asked[want.Addr] != 0 {
			t.Errorf("%s: its download response was asked for before the caller's hook ran", want.Addr)
		}
		path := "/v1/providers/acme/" + want.Addr.Type + "/" + want.Version.String() + "/download/linux/amd64"
		if n := srv.RequestsTo(path); n != 1 {
			t.Errorf("%s asked for %d times, want once", path, n)
		}
	}
}
