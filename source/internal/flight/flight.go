// Package flight runs a function once per key among concurrent callers:
// the first caller of a key makes the call, the others wait for it and
// share its answer, which may then be remembered for later callers. It is
// the one such helper of the sources (service discovery, provider
// metadata, Memoize, git listings, the served mirror); each site chooses,
// with a [Group]'s fields, what becomes of an answer and of an error.
package flight

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrPanicked is the error the callers waiting for a call see when the
// function panicked (the caller that made the call sees the panic).
var ErrPanicked = errors.New("panicked while answering")

// Retry says which errors of a call a caller that waited for it does not
// share, but calls again for itself (when its own context is live).
type Retry int

const (
	// ShareErrors: every waiter gets the call's error.
	ShareErrors Retry = iota
	// RetryContextErrors: a waiter calls again when the call ended in a
	// context's cancellation or deadline (the caller that made it gave
	// up); other errors are shared.
	RetryContextErrors
	// RetryErrors: a waiter calls again after any error.
	RetryErrors
)

// Group is a set of calls by key. Its zero value shares a call among
// concurrent callers, remembers its value for ever, forgets its error
// once it returns, and hands that error to the callers that waited. A
// Group must not be copied after first use.
type Group[K comparable, V any] struct {
	// Lifetime, when positive, is how long a value (or a kept error) is
	// remembered after it came; zero or less: for ever.
	Lifetime time.Duration
	// NoMemory: nothing is remembered once the call returns; only the
	// callers waiting for it share its answer.
	NoMemory bool
	// KeepErrors: an error is remembered as a value is, except a
	// context's cancellation or deadline, which concerns only the
	// caller that saw it (and a panic). Otherwise an error is forgotten
	// once the call returns: the next caller calls again.
	KeepErrors bool
	// Retry says which errors the callers that waited call again for.
	Retry Retry
	// Now is the clock of Lifetime; nil means time.Now.
	Now func() time.Time

	mu    sync.Mutex
	calls map[K]*call[V]
	// waiting, if set (by tests), is called when a caller starts
	// waiting for a call in flight.
	waiting func()
}

type call[V any] struct {
	done chan struct{}
	val  V
	err  error
	at   time.Time // when the answer came; set before done is closed
}

// IsContextError reports whether err is a context's cancellation or
// deadline.
func IsContextError(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// Do returns the answer of fn for key: fn's, called now, when no call of
// key is in flight or remembered; else the remembered answer, or that of
// the call in flight once it returns (a caller whose ctx ends meanwhile
// gets ctx's error). fn runs under the first caller's context as the
// closure captures it; a site whose waiters must not fail with that
// caller's cancellation detaches it (context.WithoutCancel) or retries
// (RetryContextErrors).
func (g *Group[K, V]) Do(ctx context.Context, key K, fn func() (V, error)) (V, error) {
	for retry := false; ; retry = true {
		if retry {
			if err := ctx.Err(); err != nil {
				var zero V
				return zero, err
			}
		}
		g.mu.Lock()
		if g.calls == nil {
			g.calls = map[K]*call[V]{}
		}
		c, ok := g.calls[key]
		if ok && g.expired(c) {
			delete(g.calls, key)
			ok = false
		}
		if !ok {
			c = &call[V]{done: make(chan struct{})}
			g.calls[key] = c
			g.mu.Unlock()
			g.call(key, c, fn)
			return c.val, c.err
		}
		g.mu.Unlock()
		if g.waiting != nil {
			g.waiting()
		}
		select {
		case <-ctx.Done():
			var zero V
			return zero, ctx.Err()
		case <-c.done:
		}
		if c.err != nil && (g.Retry == RetryErrors || g.Retry == RetryContextErrors && IsContextError(c.err)) && !g.kept(key, c) {
			continue
		}
		return c.val, c.err
	}
}

// kept reports whether c, a finished call, is remembered: its error is
// then the answer (KeepErrors), which asking again would only find again.
func (g *Group[K, V]) kept(key K, c *call[V]) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.calls[key] == c
}

// expired reports whether c, a finished call, is older than the
// lifetime. g.mu is held.
func (g *Group[K, V]) expired(c *call[V]) bool {
	if g.Lifetime <= 0 {
		return false
	}
	select {
	case <-c.done:
		return g.now().Sub(c.at) > g.Lifetime
	default:
		return false // in flight
	}
}

func (g *Group[K, V]) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

// call runs fn for c. If fn panics, the call is forgotten and its waiters
// are released with ErrPanicked before the panic goes on, so that they
// never wait forever.
func (g *Group[K, V]) call(key K, c *call[V], fn func() (V, error)) {
	completed := false
	defer func() {
		if !completed {
			c.err = ErrPanicked
		}
		if !completed || g.NoMemory || c.err != nil && (!g.KeepErrors || IsContextError(c.err)) {
			g.mu.Lock()
			if g.calls[key] == c {
				delete(g.calls, key)
			}
			g.mu.Unlock()
		}
		close(c.done)
	}()
	c.val, c.err = fn()
	c.at = g.now()
	completed = true
}
