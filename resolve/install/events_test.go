package install_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
)

// recorder keeps every event.
type recorder struct {
	mu sync.Mutex
	ev []source.Event
}

func (r *recorder) Event(e source.Event) {
	r.mu.Lock()
	r.ev = append(r.ev, e)
	r.mu.Unlock()
}

func (r *recorder) take() []source.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	ev := r.ev
	r.ev = nil
	return ev
}

func kinds(ev []source.Event) map[source.EventKind]int {
	n := map[source.EventKind]int{}
	for _, e := range ev {
		n[e.Kind]++
	}
	return n
}

// TestWorldEvents checks the events of a first init against real servers
// (each kind the package documents, bytes progress from the sources and
// one lock change per change) and of a re-init (cache hits, no lookups, no
// downloads, no lock change).
func TestWorldEvents(t *testing.T) {
	if err := installtest.HaveGit(); err != nil {
		t.Skip(err)
	}
	rec := &recorder{}
	w, err := installtest.Start(context.Background(), installtest.Options{Events: rec})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": worldConfig})
	c, err := cache.Open(t.TempDir(), cache.Options{Events: rec})
	if err != nil {
		t.Fatal(err)
	}
	res := initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: c, Events: rec})
	ev := rec.take()
	n := kinds(ev)
	for _, k := range []source.EventKind{source.EventResolving, source.EventVersionChosen, source.EventFetchStarted, source.EventFetchProgress, source.EventFetchDone, source.EventVerified, source.EventLockChanged} {
		if n[k] == 0 {
			t.Errorf("first init: no %q event (%v)", k, n)
		}
	}
	// Bytes progress of a provider download, from the registry source:
	// the last report of the package is its whole size.
	info, ok := w.Registry.ProviderPackage("registry.example.test/acme/cloud", "1.1.0", source.CurrentPlatform.String())
	if !ok {
		t.Fatal("no fixture for acme/cloud 1.1.0")
	}
	var last *source.Event
	for i, e := range ev {
		if p, ok := e.Package.(source.ProviderPackage); ok && e.Kind == source.EventFetchProgress && p.Addr.Type == "cloud" {
			last = &ev[i]
		}
	}
	if last == nil || last.Bytes != info.Size || last.Total != info.Size {
		t.Errorf("last progress of acme/cloud = %+v, want %d of %d bytes", last, info.Size, info.Size)
	}
	// One lock change event per change, naming the package.
	var changed []string
	for _, e := range ev {
		if e.Kind == source.EventLockChanged {
			if e.Package == nil {
				t.Errorf("lock change %q has no package", e.Detail)
				continue
			}
			changed = append(changed, e.Detail)
		}
	}
	if len(changed) != len(res.Changes) {
		t.Errorf("%d lock change events, want %d: %v", len(changed), len(res.Changes), changed)
	}
	for i, c := range res.Changes {
		if i < len(changed) && !slices.Contains(changed, c.String()) {
			t.Errorf("no lock change event for %q", c.String())
		}
	}

	// Re-init: every package kept as installed, nothing looked up or
	// downloaded, the lock unchanged; then, with the install gone, every
	// package from the cache.
	for _, fresh := range []bool{false, true} {
		if fresh {
			if err := os.RemoveAll(filepath.Join(dir, ".terraform")); err != nil {
				t.Fatal(err)
			}
		}
		before := w.Requests()
		res := initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: c, Events: rec})
		n = kinds(rec.take())
		if fresh && n[source.EventCacheHit] == 0 {
			t.Errorf("re-init without an install: no cache hit events (%v)", n)
		}
		mods := 0
		for range res.Lock.Modules() {
			mods++
		}
		if !fresh && (n[source.EventVerified] != len(res.Providers)+mods || n[source.EventCacheHit] != 0) {
			t.Errorf("re-init with the install: %d verified, %d cache hits, want one verified per package and no cache hit (%v)", n[source.EventVerified], n[source.EventCacheHit], n)
		}
		for _, k := range []source.EventKind{source.EventResolving, source.EventFetchStarted, source.EventFetchProgress, source.EventLockChanged} {
			if n[k] != 0 {
				t.Errorf("re-init (fresh %v): %d %q events, want none", fresh, n[k], k)
			}
		}
		if got := w.Requests() - before; got != 0 {
			t.Errorf("re-init (fresh %v) made %d requests, want 0", fresh, got)
		}
	}
}

// TestInitFailureMidInstall makes the install step itself fail, after
// everything was resolved and fetched (the plugin cache directory is a
// file): the previous install directory and lock file stay as they were.
func TestInitFailureMidInstall(t *testing.T) {
	dir := newConfig(t)
	c := openCache(t)
	initAndWrite(t, install.Options{Dir: dir, Source: staticFixtures(), Cache: c})
	before := snapshot(t, dir)

	blocker := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(blocker, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := install.Init(context.Background(), install.Options{Dir: dir, Source: staticFixtures(), Cache: c, Resolve: resolve.Options{Upgrade: true}, PluginCacheDir: blocker})
	if err == nil {
		t.Fatal("Init with a plugin cache that is a file succeeded")
	}
	if !strings.Contains(err.Error(), "install: plugin cache") {
		t.Errorf("error %q: want a failure of the install step", err)
	}
	if after := snapshot(t, dir); after != before {
		t.Errorf("a failed install changed the directory:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// TestCacheEventsReachInitEvents: the package cache's hits reach
// Options.Events of the run that caused them, with its unit, though the
// shared cache was opened without a handler (one run, one event stream).
func TestCacheEventsReachInitEvents(t *testing.T) {
	shared, err := cache.Open(t.TempDir(), cache.Options{}) // no Events
	if err != nil {
		t.Fatal(err)
	}
	// One source for both runs: a module the cache remembers fetching
	// without a lock's h1: is served only to runs of its source
	// (cache.Cache.ForSource).
	src := staticFixtures()
	first := newConfig(t)
	initAndWrite(t, install.Options{Dir: first, Source: src, Cache: shared})

	second := newConfig(t)
	rec := &recorder{}
	ctx := source.WithUnit(context.Background(), "unit-b")
	if _, err := install.Init(ctx, install.Options{Dir: second, Source: src, Cache: shared, Events: rec}); err != nil {
		t.Fatal(err)
	}
	ev := rec.take()
	hits := 0
	for _, e := range ev {
		if e.Kind == source.EventCacheHit {
			hits++
			if e.Unit != "unit-b" {
				t.Errorf("cache hit %+v: unit %q, want unit-b", e, e.Unit)
			}
		}
	}
	if hits == 0 {
		t.Fatalf("no cache hit in the run's events (%v)", kinds(ev))
	}
	// Each package once: as many hits as packages verified.
	if n := kinds(ev); n[source.EventCacheHit] != n[source.EventVerified] {
		t.Errorf("%d cache hits for %d verified packages; want one each (%v)", n[source.EventCacheHit], n[source.EventVerified], n)
	}
}
