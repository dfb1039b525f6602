package flight

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// inFlight starts a call of key in g whose fn blocks until release is
// closed, then returns what answer returns; it returns once the call has
// started, and a channel with the first caller's result.
func inFlight[V any](t *testing.T, g *Group[string, V], ctx context.Context, key string, calls *atomic.Int32, release <-chan struct{}, answer func(ctx context.Context) (V, error)) <-chan result[V] {
	t.Helper()
	started := make(chan struct{})
	out := make(chan result[V], 1)
	go func() {
		v, err := g.Do(ctx, key, func() (V, error) {
			calls.Add(1)
			close(started)
			<-release
			return answer(ctx)
		})
		out <- result[V]{v, err}
	}()
	<-started
	return out
}

type result[V any] struct {
	v   V
	err error
}

// waiters starts n callers of key that join the call in flight, and
// returns once all of them wait for it; fn is what they would call.
func waiters[V any](g *Group[string, V], ctx context.Context, key string, n int, fn func() (V, error)) <-chan result[V] {
	var joined sync.WaitGroup
	joined.Add(n)
	g.waiting = joined.Done
	out := make(chan result[V], n)
	for range n {
		go func() {
			v, err := g.Do(ctx, key, fn)
			out <- result[V]{v, err}
		}()
	}
	joined.Wait()
	g.waiting = nil
	return out
}

// TestOneCallShared: concurrent callers of one key make one call and all
// get its value, which later callers get too without a call; another key
// makes its own call.
func TestOneCallShared(t *testing.T) {
	var g Group[string, int]
	var calls atomic.Int32
	release := make(chan struct{})
	first := inFlight(t, &g, context.Background(), "a", &calls, release, func(context.Context) (int, error) { return 7, nil })
	w := waiters(&g, context.Background(), "a", 5, func() (int, error) { calls.Add(1); return 0, errors.New("a second call") })
	close(release)
	if r := <-first; r.v != 7 || r.err != nil {
		t.Errorf("first caller: %v, %v", r.v, r.err)
	}
	for range 5 {
		if r := <-w; r.v != 7 || r.err != nil {
			t.Errorf("waiter: %v, %v", r.v, r.err)
		}
	}
	v, err := g.Do(context.Background(), "a", func() (int, error) { calls.Add(1); return 8, nil })
	if v != 7 || err != nil || calls.Load() != 1 {
		t.Errorf("later caller: %v, %v after %d calls; want the remembered 7 after one call", v, err, calls.Load())
	}
	if v, _ := g.Do(context.Background(), "b", func() (int, error) { calls.Add(1); return 9, nil }); v != 9 || calls.Load() != 2 {
		t.Errorf("another key: %v after %d calls; want its own call", v, calls.Load())
	}
}

// TestErrorSharedThenForgotten: by default the callers waiting get the
// call's error, and the next caller calls again.
func TestErrorSharedThenForgotten(t *testing.T) {
	var g Group[string, int]
	var calls atomic.Int32
	release := make(chan struct{})
	boom := errors.New("boom")
	first := inFlight(t, &g, context.Background(), "k", &calls, release, func(context.Context) (int, error) { return 0, boom })
	w := waiters(&g, context.Background(), "k", 3, func() (int, error) { calls.Add(1); return 1, nil })
	close(release)
	if r := <-first; !errors.Is(r.err, boom) {
		t.Errorf("first caller: %v", r.err)
	}
	for range 3 {
		if r := <-w; !errors.Is(r.err, boom) {
			t.Errorf("waiter: %v, want the shared error", r.err)
		}
	}
	if calls.Load() != 1 {
		t.Errorf("%d calls, want 1", calls.Load())
	}
	if v, err := g.Do(context.Background(), "k", func() (int, error) { calls.Add(1); return 2, nil }); v != 2 || err != nil {
		t.Errorf("next caller: %v, %v; want a new call", v, err)
	}
}

// TestKeepErrors: an error is remembered, but not a context's.
func TestKeepErrors(t *testing.T) {
	g := Group[string, int]{KeepErrors: true}
	boom := errors.New("boom")
	calls := 0
	for range 2 {
		_, err := g.Do(context.Background(), "k", func() (int, error) { calls++; return 0, boom })
		if !errors.Is(err, boom) {
			t.Fatalf("err = %v", err)
		}
	}
	if calls != 1 {
		t.Errorf("%d calls, want the error remembered", calls)
	}
	for range 2 {
		_, _ = g.Do(context.Background(), "c", func() (int, error) { calls++; return 0, fmt.Errorf("listing: %w", context.DeadlineExceeded) })
	}
	if calls != 3 {
		t.Errorf("%d calls, want a context's error forgotten", calls-1)
	}
}

// TestRetryErrors: a waiter calls again after the call's error, and gets
// its own answer.
func TestRetryErrors(t *testing.T) {
	g := Group[string, int]{Retry: RetryErrors}
	var calls atomic.Int32
	release := make(chan struct{})
	first := inFlight(t, &g, context.Background(), "k", &calls, release, func(context.Context) (int, error) { return 0, errors.New("boom") })
	w := waiters(&g, context.Background(), "k", 1, func() (int, error) { calls.Add(1); return 5, nil })
	close(release)
	if r := <-first; r.err == nil {
		t.Error("first caller: no error")
	}
	if r := <-w; r.v != 5 || r.err != nil || calls.Load() != 2 {
		t.Errorf("waiter: %v, %v after %d calls; want its own call's 5", r.v, r.err, calls.Load())
	}
}

// TestRetryContextErrors: when the first caller's context is cancelled,
// the waiters call again under theirs and do not fail; another error is
// shared.
func TestRetryContextErrors(t *testing.T) {
	g := Group[string, int]{Retry: RetryContextErrors, KeepErrors: true}
	var calls atomic.Int32
	release := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	first := inFlight(t, &g, ctx, "k", &calls, release, func(ctx context.Context) (int, error) { return 0, ctx.Err() })
	w := waiters(&g, context.Background(), "k", 3, func() (int, error) { calls.Add(1); return 4, nil })
	cancel()
	close(release)
	if r := <-first; !errors.Is(r.err, context.Canceled) {
		t.Errorf("first caller: %v, want its cancellation", r.err)
	}
	for range 3 {
		if r := <-w; r.v != 4 || r.err != nil {
			t.Errorf("waiter: %v, %v; want a call of its own", r.v, r.err)
		}
	}
	if calls.Load() != 2 {
		t.Errorf("%d calls, want 2 (the cancelled one, then one for the waiters)", calls.Load())
	}

	release = make(chan struct{})
	boom := errors.New("boom")
	first = inFlight(t, &g, context.Background(), "e", &calls, release, func(context.Context) (int, error) { return 0, boom })
	w = waiters(&g, context.Background(), "e", 2, func() (int, error) { calls.Add(1); return 1, nil })
	close(release)
	<-first
	for range 2 {
		if r := <-w; !errors.Is(r.err, boom) {
			t.Errorf("waiter: %v, want the shared error", r.err)
		}
	}
}

// TestWaiterCancelled: a waiter whose context ends gets its error at
// once; the call goes on for the others.
func TestWaiterCancelled(t *testing.T) {
	var g Group[string, int]
	var calls atomic.Int32
	release := make(chan struct{})
	first := inFlight(t, &g, context.Background(), "k", &calls, release, func(context.Context) (int, error) { return 3, nil })
	ctx, cancel := context.WithCancel(context.Background())
	w := waiters(&g, ctx, "k", 1, func() (int, error) { return 0, nil })
	cancel()
	if r := <-w; !errors.Is(r.err, context.Canceled) {
		t.Errorf("cancelled waiter: %v", r.err)
	}
	close(release)
	if r := <-first; r.v != 3 {
		t.Errorf("first caller: %v", r.v)
	}
}

// TestLifetime: a value is remembered for the lifetime after it came,
// by the group's clock; then the next caller calls again.
func TestLifetime(t *testing.T) {
	clock := time.Unix(1000, 0)
	g := Group[string, int]{Lifetime: time.Minute, Now: func() time.Time { return clock }}
	calls := 0
	get := func() int {
		v, _ := g.Do(context.Background(), "k", func() (int, error) { calls++; return calls, nil })
		return v
	}
	if get() != 1 {
		t.Fatal("first call")
	}
	clock = clock.Add(time.Minute)
	if v := get(); v != 1 {
		t.Errorf("within the lifetime: %d, want the remembered 1", v)
	}
	clock = clock.Add(time.Second)
	if v := get(); v != 2 {
		t.Errorf("after the lifetime: %d, want a new call", v)
	}
}

// TestNoMemory: only concurrent callers share a call.
func TestNoMemory(t *testing.T) {
	g := Group[string, int]{NoMemory: true}
	calls := 0
	for range 2 {
		_, _ = g.Do(context.Background(), "k", func() (int, error) { calls++; return 1, nil })
	}
	if calls != 2 {
		t.Errorf("%d calls, want one each", calls)
	}
}

// TestPanic: the panic goes on to the caller that made the call, its
// waiters get ErrPanicked instead of waiting for ever, and the next
// caller calls again.
func TestPanic(t *testing.T) {
	g := Group[string, int]{KeepErrors: true}
	started, release := make(chan struct{}), make(chan struct{})
	panicked := make(chan any, 1)
	go func() {
		defer func() { panicked <- recover() }()
		_, _ = g.Do(context.Background(), "k", func() (int, error) {
			close(started)
			<-release
			panic("broken")
		})
	}()
	<-started
	w := waiters(&g, context.Background(), "k", 2, func() (int, error) { return 0, nil })
	close(release)
	if p := <-panicked; p != "broken" {
		t.Errorf("panic %v, want it passed on", p)
	}
	for range 2 {
		if r := <-w; !errors.Is(r.err, ErrPanicked) {
			t.Errorf("waiter: %v, want ErrPanicked", r.err)
		}
	}
	if v, err := g.Do(context.Background(), "k", func() (int, error) { return 6, nil }); v != 6 || err != nil {
		t.Errorf("after the panic: %v, %v; want a new call", v, err)
	}
}
