package registry_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/internal/killtest"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/registry"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// TestKilledStreamedFillIsSwept kills (SIGKILL) a process whose cache is
// extracting a package that is still downloading (handed over as a
// source.PendingArchive): half of the zip has arrived, the network then
// stalls. The sequence a user meets (killtest.KilledFill): the killed
// run's work directory (the partial download and the files extracted so
// far) stays while it could be alive, the next cache.Open sweeps it,
// nothing was published, and the next fill downloads the package again
// and stores the tree its h1: names.
func TestKilledStreamedFillIsSwept(t *testing.T) {
	if dir := killtest.ChildDir(); dir != "" {
		killedStreamChild(t, dir)
		return
	}
	c := killtest.KilledFill(t, "TestKilledStreamedFillIsSwept")
	srv, src, pkg, info, file := streamWorldOf(t, killFixtures, registrytest.Options{})
	e, hit, err := c.Fill(context.Background(), pkg, nil, fillFrom(src, pkg))
	if err != nil || hit || e.H1 != info.H1 {
		t.Fatalf("fill after the kill: hit=%v h1=%s err=%v; want %s", hit, e.H1, err, info.H1)
	}
	if got, err := hash.H1Dir(e.Dir); err != nil || got != info.H1 {
		t.Errorf("the stored tree hashes to %s, %v; want %s", got, err, info.H1)
	}
	if n := srv.RequestsTo(file); n != 2 {
		t.Errorf("%d requests for the package after the kill, want 2 (the download and its end)", n)
	}
	if left, _ := os.ReadDir(filepath.Join(c.Dir(), "tmp")); len(left) != 0 {
		t.Errorf("tmp/ after a completed fill holds %d entries", len(left))
	}
}

// killFixtures is bigFixtures with a package large enough that its first
// half holds more than one chunk of what the cache reads at a time.
var killFixtures = registrytest.Fixtures{Providers: []registrytest.Provider{{
	Addr:     "acme/big",
	Versions: []registrytest.ProviderVersion{{Version: "1.0.0", Platforms: []string{"linux_amd64"}, Size: 12 << 20, Binary: true}},
}}}

// killedStreamChild fills the large package into the cache in dir through
// a connection that delivers half of the zip's download and then stalls;
// once the cache has extracted something from that half it signals the
// parent, which kills it.
func killedStreamChild(t *testing.T, dir string) {
	srv, _, pkg, info, file := streamWorldOf(t, killFixtures, registrytest.Options{})
	c, err := cache.Open(dir, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var half atomic.Bool
	stall := func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err != nil || r.URL.Path != file || r.Header.Get("Range") != "" {
				return resp, err
			}
			resp.Body = &stallingBody{r: io.LimitReader(resp.Body, info.Size/2), closer: resp.Body, half: &half}
			return resp, nil
		})
	}
	src, _ := newSource(srv, func(o *registry.Options) {
		client := *srv.Client()
		client.Transport = stall(client.Transport)
		o.HTTPClient = &client
	})
	go func() {
		// Ready once half the zip has arrived and the cache has begun
		// to extract it (its staging directory holds a file).
		for {
			if half.Load() {
				if m, _ := filepath.Glob(filepath.Join(dir, "tmp", "fill-*", ".content.tmp-*", "*")); len(m) > 0 {
					_ = killtest.Ready()
					return
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	_, _, err = c.Fill(context.Background(), pkg, nil, fillFrom(src, pkg))
	t.Fatalf("fill returned: %v", err)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// stallingBody delivers r, then blocks forever (a network that stalls).
type stallingBody struct {
	r      io.Reader
	closer io.Closer
	half   *atomic.Bool
}

func (b *stallingBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		b.half.Store(true)
		select {} // killed here
	}
	return n, err
}

func (b *stallingBody) Close() error { return b.closer.Close() }
