package source_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/sourcetest"
)

// counting wraps a source and counts Versions calls per package family.
type counting struct {
	source.Source
	calls atomic.Int64
	gate  chan struct{} // when non-nil, Versions waits for it
}

func (c *counting) Versions(ctx context.Context, pkg source.Package) ([]source.Available, error) {
	c.calls.Add(1)
	if c.gate != nil {
		select {
		case <-c.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return c.Source.Versions(ctx, pkg)
}

func TestMemoizeConformance(t *testing.T) {
	_, remote := localRemote()
	sourcetest.Run(t, source.Memoize(remote), sourcetest.Cases{
		Known:           []source.Package{pkg(nullAddr, "3.2.0", linuxAMD64), pkg(randAddr, "3.6.0", linuxAMD64)},
		MissingVersion:  pkg(nullAddr, "9.0.0", linuxAMD64),
		MissingPlatform: pkg(randAddr, "3.6.0", darwinARM),
	})
}

func TestMemoizeOneCallPerPackage(t *testing.T) {
	_, remote := localRemote()
	c := &counting{Source: remote, gate: make(chan struct{})}
	m := source.Memoize(c)
	ctx := context.Background()
	var wg sync.WaitGroup
	const n = 20
	results := make([]int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			list, err := m.Versions(ctx, pkg(nullAddr, "3.2.0", linuxAMD64)) // version and platform are ignored
			if err != nil {
				t.Error(err)
			}
			results[i] = len(list)
		}()
	}
	time.Sleep(20 * time.Millisecond) // let the callers pile up behind the first
	close(c.gate)
	wg.Wait()
	if got := c.calls.Load(); got != 1 {
		t.Errorf("%d calls to the inner source, want 1", got)
	}
	for _, r := range results {
		if r != 2 {
			t.Fatalf("a caller got %d versions, want 2", r)
		}
	}
	// Another family is another call; errors are remembered.
	for range 3 {
		if _, err := m.Versions(ctx, source.ModulePackage{Source: "nowhere/x/y"}); !errors.Is(err, source.ErrNotFound) {
			t.Fatalf("got %v", err)
		}
	}
	if got := c.calls.Load(); got != 2 {
		t.Errorf("%d calls, want 2", got)
	}
	// A caller's copy is its own.
	a, _ := m.Versions(ctx, source.ProviderPackage{Addr: nullAddr})
	a[0].Platforms[0] = source.Platform{OS: "changed", Arch: "x"}
	b, _ := m.Versions(ctx, source.ProviderPackage{Addr: nullAddr})
	if b[0].Platforms[0].OS == "changed" {
		t.Error("the memoized answer was modified through a caller's copy")
	}
}

func TestMemoizeDoesNotRememberCancellation(t *testing.T) {
	_, remote := localRemote()
	c := &counting{Source: remote, gate: make(chan struct{})}
	m := source.Memoize(c)
	// The inner call is under way when its caller gives up.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := m.Versions(ctx, source.ProviderPackage{Addr: nullAddr}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v", err)
	}
	close(c.gate)
	if _, err := m.Versions(context.Background(), source.ProviderPackage{Addr: nullAddr}); err != nil {
		t.Fatalf("after a cancelled call: %v", err)
	}
	if got := c.calls.Load(); got != 2 {
		t.Errorf("%d calls, want 2 (the cancelled one is not remembered)", got)
	}
}

func TestMemoizeWaiterCancelled(t *testing.T) {
	_, remote := localRemote()
	c := &counting{Source: remote, gate: make(chan struct{})}
	m := source.Memoize(c)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := m.Versions(context.Background(), source.ProviderPackage{Addr: nullAddr}); err != nil {
			t.Error(err)
		}
	}()
	time.Sleep(10 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := m.Versions(ctx, source.ProviderPackage{Addr: nullAddr}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiting caller: got %v, want its own deadline", err)
	}
	close(c.gate)
	<-done
}

func TestMemoizeChecksumCapability(t *testing.T) {
	_, remote := localRemote()
	if _, ok := source.Memoize(remote).(source.ChecksumReporter); !ok {
		t.Error("memoized Static lost its ChecksumReporter capability")
	}
	plain := source.Join(remote, remote)
	if _, ok := source.Memoize(plain).(source.ChecksumReporter); ok {
		t.Error("memoized plain source claims to report checksums")
	}
	cr := source.Memoize(remote).(source.ChecksumReporter)
	a, err := cr.Checksums(context.Background(), pkg(nullAddr, "3.2.0", linuxAMD64))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := cr.Checksums(context.Background(), pkg(nullAddr, "3.2.0", linuxAMD64))
	if len(a) != 2 || len(b) != 2 || a[0].Hash != b[0].Hash {
		t.Errorf("checksums %v then %v", a, b)
	}
	var _ hash.Record = a[0]
}

// TestMemoizePanicReleasesWaiters: a source that panics must not leave
// the callers waiting for its answer blocked forever, and its panic is
// not remembered as an answer.
func TestMemoizePanicReleasesWaiters(t *testing.T) {
	started := make(chan struct{})
	release := make(chan struct{})
	var calls atomic.Int64
	src := source.Join(source.ListerFunc(func(ctx context.Context, pkg source.Package) ([]source.Available, error) {
		if calls.Add(1) == 1 {
			close(started)
			<-release
			panic("broken source")
		}
		return nil, nil
	}), source.FetcherFunc(func(context.Context, source.Package, string) (*source.Fetched, error) { return nil, nil }))
	m := source.Memoize(src)
	pkg := source.ModulePackage{Source: "example.com/a/b/c"}

	panicked := make(chan any, 1)
	go func() {
		defer func() { panicked <- recover() }()
		_, _ = m.Versions(context.Background(), pkg)
	}()
	<-started
	waiter := make(chan error, 1)
	go func() {
		_, err := m.Versions(context.Background(), pkg)
		waiter <- err
	}()
	time.Sleep(20 * time.Millisecond) // let the waiter join the call in flight
	close(release)
	if p := <-panicked; p != "broken source" {
		t.Errorf("the panic was %v, want it passed on to the caller that made the call", p)
	}
	select {
	case <-waiter:
	case <-time.After(5 * time.Second):
		t.Fatal("a waiter was left blocked after the source panicked")
	}
	// The panic is forgotten: the next caller asks again.
	if _, err := m.Versions(context.Background(), pkg); err != nil || calls.Load() < 2 {
		t.Errorf("after the panic: err %v, %d calls; want a new call", err, calls.Load())
	}
}

// TestMemoizeForLifetime: an answer is remembered for the lifetime after
// it came, then asked again; Memoize (no lifetime) never forgets. The
// clock is the test's, not the wall clock.
func TestMemoizeForLifetime(t *testing.T) {
	var mu sync.Mutex
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	defer source.SetClock(func() time.Time { mu.Lock(); defer mu.Unlock(); return clock })()
	advance := func(d time.Duration) { mu.Lock(); clock = clock.Add(d); mu.Unlock() }

	_, remote := localRemote()
	c := &counting{Source: remote}
	forever := &counting{Source: remote}
	m, mf := source.MemoizeFor(c, time.Minute), source.Memoize(forever)
	ctx := context.Background()
	ask := func() {
		t.Helper()
		for _, s := range []source.Source{m, mf} {
			if _, err := s.Versions(ctx, pkg(nullAddr, "3.2.0", linuxAMD64)); err != nil {
				t.Fatal(err)
			}
		}
	}
	ask()
	advance(59 * time.Second)
	ask()
	if n := c.calls.Load(); n != 1 {
		t.Fatalf("%d calls within the lifetime, want 1", n)
	}
	advance(2 * time.Second)
	ask()
	ask()
	if n := c.calls.Load(); n != 2 {
		t.Fatalf("%d calls after the lifetime, want 2 (asked again once)", n)
	}
	if n := forever.calls.Load(); n != 1 {
		t.Fatalf("Memoize asked %d times, want once: it never forgets", n)
	}
	if _, ok := source.MemoizeFor(remote, time.Minute).(source.ChecksumReporter); !ok {
		t.Error("MemoizeFor of a ChecksumReporter is not one")
	}
}
