package source

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source/internal/display"
)

// Memoize returns a source that asks src at most once per package for its
// versions and (when src is a [ChecksumReporter]) its checksums, and then
// answers from memory. Concurrent callers asking about the same package wait
// for the one call in flight and share its answer. Errors are remembered
// too, except context cancellations and deadlines, which concern only the
// caller that saw them: the next caller asks again.
//
// Versions are remembered per package family (a provider address or a
// module source), checksums per exact package. Fetch is passed through
// unchanged, since each call brings the package to a different directory,
// and so is FetchArchive: the result is an [ArchiveFetcher], which calls
// src's Fetch when src is not one.
//
// The result is a [ChecksumReporter] exactly when src is one. Use one
// memoizing source per run: it never forgets (see [MemoizeFor] for one
// that a long-lived process keeps).
func Memoize(src Source) Source { return MemoizeFor(src, 0) }

// MemoizeFor is [Memoize] with a lifetime: an answer is remembered for
// lifetime after it came, and the next caller after that asks src again.
// A lifetime of zero or less never forgets, as Memoize. A long-lived
// process that shares one source among its runs uses it, so that a new
// release is seen at most lifetime after it appears.
func MemoizeFor(src Source, lifetime time.Duration) Source {
	m := &memo{src: src, versions: flight[[]Available]{lifetime: lifetime}}
	if cr, ok := src.(ChecksumReporter); ok {
		return &memoChecksums{memo: m, cr: cr, checksums: flight[[]hash.Record]{lifetime: lifetime}}
	}
	return m
}

// now is the clock of the lifetimes; tests replace it.
var now = time.Now

type memo struct {
	src      Source
	versions flight[[]Available]
}

type memoChecksums struct {
	*memo
	cr        ChecksumReporter
	checksums flight[[]hash.Record]
}

var (
	_ Source           = (*memo)(nil)
	_ ArchiveFetcher   = (*memo)(nil)
	_ ChecksumReporter = (*memoChecksums)(nil)
	_ ArchiveFetcher   = (*memoChecksums)(nil)
)

// FamilyKey identifies the package family a version listing is about: a
// provider address, whatever the version and platform, or a module
// source, whatever the version and ref. [Memoize] remembers versions by it;
// a caller counting the listings a run asks for counts one per key.
func FamilyKey(pkg Package) string {
	switch p := pkg.(type) {
	case ProviderPackage:
		return "p " + display.Provider(p.Addr)
	case ModulePackage:
		return "m " + p.Source
	}
	return "? " + pkg.String()
}

func (m *memo) String() string { return displayName(m.src) }

func (m *memo) Versions(ctx context.Context, pkg Package) ([]Available, error) {
	list, err := m.versions.do(ctx, FamilyKey(pkg), func() ([]Available, error) {
		return m.src.Versions(ctx, pkg)
	})
	if err != nil {
		return nil, err
	}
	// Callers may modify what they get; hand each its own copy.
	out := make([]Available, len(list))
	for i, a := range list {
		a.Platforms = append([]Platform(nil), a.Platforms...)
		a.Protocols = append([]string(nil), a.Protocols...)
		out[i] = a
	}
	return out, nil
}

func (m *memo) Fetch(ctx context.Context, pkg Package, dir string) (*Fetched, error) {
	return m.src.Fetch(ctx, pkg, dir)
}

func (m *memo) FetchArchive(ctx context.Context, pkg Package, dir string) (*Fetched, error) {
	return FetchArchive(ctx, m.src, pkg, dir)
}

func (m *memoChecksums) Checksums(ctx context.Context, pkg Package) ([]hash.Record, error) {
	recs, err := m.checksums.do(ctx, FamilyKey(pkg)+" "+pkg.String(), func() ([]hash.Record, error) {
		return m.cr.Checksums(ctx, pkg)
	})
	if err != nil {
		return nil, err
	}
	return append([]hash.Record(nil), recs...), nil
}

// flight remembers one result per key and lets concurrent callers of the
// same key share a single call.
type flight[T any] struct {
	mu       sync.Mutex
	calls    map[string]*call[T]
	lifetime time.Duration // > 0: how long an answer is kept
}

type call[T any] struct {
	done chan struct{}
	val  T
	err  error
	at   time.Time // when the answer came; set before done is closed
}

// expired reports whether c, a finished call, is older than the lifetime.
// f.mu is held.
func (f *flight[T]) expired(c *call[T]) bool {
	if f.lifetime <= 0 {
		return false
	}
	select {
	case <-c.done:
		return now().Sub(c.at) > f.lifetime
	default:
		return false // in flight
	}
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

func (f *flight[T]) do(ctx context.Context, key string, fn func() (T, error)) (T, error) {
	for {
		if err := ctx.Err(); err != nil {
			var zero T
			return zero, err
		}
		f.mu.Lock()
		if f.calls == nil {
			f.calls = map[string]*call[T]{}
		}
		c, ok := f.calls[key]
		if ok && f.expired(c) {
			delete(f.calls, key)
			ok = false
		}
		if !ok {
			c = &call[T]{done: make(chan struct{})}
			f.calls[key] = c
			f.mu.Unlock()
			f.call(key, c, fn)
			return c.val, c.err
		}
		f.mu.Unlock()
		select {
		case <-ctx.Done():
			var zero T
			return zero, ctx.Err()
		case <-c.done:
		}
		if c.err != nil && isContextErr(c.err) && ctx.Err() == nil {
			// The caller that made the call gave up; ask again for us.
			continue
		}
		return c.val, c.err
	}
}

// call runs fn for c. If fn panics, the call is forgotten and its waiters
// are released with an error before the panic goes on, so that they never
// wait forever.
func (f *flight[T]) call(key string, c *call[T], fn func() (T, error)) {
	completed := false
	defer func() {
		if !completed {
			c.err = errors.New("source panicked while answering")
		}
		if !completed || (c.err != nil && isContextErr(c.err)) {
			// Not an answer about the package: forget it.
			f.mu.Lock()
			delete(f.calls, key)
			f.mu.Unlock()
		}
		close(c.done)
	}()
	c.val, c.err = fn()
	c.at = now()
	completed = true
}
