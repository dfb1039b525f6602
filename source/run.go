package source

import (
	"context"
	"sync"
)

type runKey struct{}

// runScope is what one run keeps for its sources.
type runScope struct {
	mu   sync.Mutex
	vals map[any]any
}

// WithRun returns a context for one run of an installer (resolve/install's
// Init and LockModule start one): a source may keep in it what it learned
// during the run, for the run's later calls and for this run only
// ([RunValue]), such as the git source's listing of a repository, which
// then answers every call of that repository in the run. Under a run,
// WithRun returns ctx.
func WithRun(ctx context.Context) context.Context {
	if _, ok := ctx.Value(runKey{}).(*runScope); ok {
		return ctx
	}
	return context.WithValue(ctx, runKey{}, &runScope{vals: map[any]any{}})
}

// RunValue returns the value the run of ctx ([WithRun]) keeps under key,
// made by newValue on its first use, and true; without a run, nil and
// false. Use a key of an unexported type of the caller's package; the
// value must be safe for concurrent use.
func RunValue(ctx context.Context, key any, newValue func() any) (any, bool) {
	s, ok := ctx.Value(runKey{}).(*runScope)
	if !ok {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.vals[key]
	if !ok {
		v = newValue()
		s.vals[key] = v
	}
	return v, true
}
