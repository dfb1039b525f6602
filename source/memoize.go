package source

import (
	"context"
	"time"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source/internal/display"
	"github.com/tflock/tflock/source/internal/flight"
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
	m := &memo{src: src, versions: newFlight[[]Available](lifetime)}
	if cr, ok := src.(ChecksumReporter); ok {
		return &memoChecksums{memo: m, cr: cr, checksums: newFlight[[]hash.Record](lifetime)}
	}
	return m
}

// now is the clock of the lifetimes; tests replace it.
var now = time.Now

type memo struct {
	src      Source
	versions *flight.Group[string, []Available]
}

type memoChecksums struct {
	*memo
	cr        ChecksumReporter
	checksums *flight.Group[string, []hash.Record]
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
	list, err := do(ctx, m.versions, FamilyKey(pkg), func() ([]Available, error) {
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
	recs, err := do(ctx, m.checksums, FamilyKey(pkg)+" "+pkg.String(), func() ([]hash.Record, error) {
		return m.cr.Checksums(ctx, pkg)
	})
	if err != nil {
		return nil, err
	}
	return append([]hash.Record(nil), recs...), nil
}

// newFlight is the memory of one kind of answer: concurrent callers share
// a call, answers and errors are remembered (for lifetime if positive),
// a context's error is forgotten and the callers waiting ask again.
func newFlight[T any](lifetime time.Duration) *flight.Group[string, T] {
	return &flight.Group[string, T]{Lifetime: lifetime, KeepErrors: true, Retry: flight.RetryContextErrors, Now: func() time.Time { return now() }}
}

// do is g.Do for a caller whose context has not ended already.
func do[T any](ctx context.Context, g *flight.Group[string, T], key string, fn func() (T, error)) (T, error) {
	if err := ctx.Err(); err != nil {
		var zero T
		return zero, err
	}
	return g.Do(ctx, key, fn)
}
