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

// Attack: many keys at once, each answer served only to its key.
func TestAttackAnswerServedToItsKeyOnly(t *testing.T) {
	var g Group[string, string]
	var wg sync.WaitGroup
	errs := make(chan error, 64*8)
	for i := range 64 {
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				key := fmt.Sprint("k", i)
				v, err := g.Do(context.Background(), key, func() (string, error) {
					time.Sleep(time.Millisecond)
					return key, nil
				})
				if err != nil || v != key {
					errs <- fmt.Errorf("Do(%s) = %q, %v", key, v, err)
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// wrapped hides a context error behind its own type, as a source's
// error does.
type wrapped struct{ err error }

func (w wrapped) Error() string { return "source: " + w.err.Error() }
func (w wrapped) Unwrap() error { return w.err }

// Attack: the first caller gives up (its context ends) and its source
// wraps the context's error: the error is not kept for the run
// (KeepErrors), and a waiter with a live context asks again and gets the
// answer (RetryContextErrors) rather than the first caller's
// cancellation.
func TestAttackCancelledFirstCallerNotKept(t *testing.T) {
	g := Group[string, int]{KeepErrors: true, Retry: RetryContextErrors}
	ctx, cancel := context.WithCancel(context.Background())
	var calls atomic.Int32
	release := make(chan struct{})
	first := inFlight(t, &g, ctx, "k", &calls, release, func(ctx context.Context) (int, error) {
		return 0, wrapped{ctx.Err()}
	})
	w := waiters(&g, context.Background(), "k", 3, func() (int, error) { calls.Add(1); return 7, nil })
	cancel()
	close(release)
	if r := <-first; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("first caller: %v, want its cancellation", r.err)
	}
	for range 3 {
		if r := <-w; r.err != nil || r.v != 7 {
			t.Errorf("waiter: %v, %v; want 7 from its own call", r.v, r.err)
		}
	}
	if v, err := g.Do(context.Background(), "k", func() (int, error) { return 9, nil }); v != 7 || err != nil {
		t.Errorf("later caller: %v, %v; want the remembered 7", v, err)
	}
}

// Attack: a function that panics is not remembered, even with
// KeepErrors, and waiters that retry errors call again for themselves.
func TestAttackPanicNotKeptWaitersRetry(t *testing.T) {
	g := Group[string, int]{KeepErrors: true, Retry: RetryErrors}
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
	w := waiters(&g, context.Background(), "k", 2, func() (int, error) { return 5, nil })
	close(release)
	<-panicked
	for range 2 {
		if r := <-w; r.err != nil || r.v != 5 {
			t.Errorf("waiter: %v, %v; want 5 from its own call", r.v, r.err)
		}
	}
}

// Attack: with KeepErrors and RetryErrors, a kept error is the answer of
// every later caller: a caller must not loop asking the kept call again
// until its context ends. (Broken before: a later caller spun until its
// deadline, then got the deadline instead of the kept error.)
func TestAttackKeptErrorWithRetryErrorsDoesNotSpin(t *testing.T) {
	g := Group[string, int]{KeepErrors: true, Retry: RetryErrors}
	boom := errors.New("registry said no")
	if _, err := g.Do(context.Background(), "k", func() (int, error) { return 0, boom }); !errors.Is(err, boom) {
		t.Fatalf("first: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	calls := 0
	_, err := g.Do(ctx, "k", func() (int, error) { calls++; return 1, nil })
	if !errors.Is(err, boom) || calls != 0 {
		t.Fatalf("later caller: %v after %d calls; want the kept error, no call", err, calls)
	}
}

// Attack: a remembered value past its lifetime is asked again, and a
// clock going backwards does not make a value live for ever.
func TestAttackLifetimeClock(t *testing.T) {
	var mu sync.Mutex
	at := time.Unix(1000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return at }
	set := func(t time.Time) { mu.Lock(); at = t; mu.Unlock() }
	g := Group[string, int]{Lifetime: time.Minute, Now: clock}
	n := 0
	fn := func() (int, error) { n++; return n, nil }
	if v, _ := g.Do(context.Background(), "k", fn); v != 1 {
		t.Fatalf("first: %d", v)
	}
	set(time.Unix(1000+61, 0))
	if v, _ := g.Do(context.Background(), "k", fn); v != 2 {
		t.Fatalf("after the lifetime: %d, want a new call", v)
	}
	set(time.Unix(0, 0)) // backwards
	set(time.Unix(1000+61+61, 0))
	if v, _ := g.Do(context.Background(), "k", fn); v != 3 {
		t.Fatalf("after a second lifetime: %d, want a new call", v)
	}
}
