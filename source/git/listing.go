package git

import (
	"context"
	"fmt"
	"sync"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/address"
	"github.com/tflock/tflock/source/internal/flight"
)

// listingsKey is the key of a run's listings ([source.RunValue]).
type listingsKey struct{}

// runListings returns the listings of the run of ctx, if it is one
// ([source.WithRun]).
func runListings(ctx context.Context) (*listings, bool) {
	v, ok := source.RunValue(ctx, listingsKey{}, func() any {
		return &listings{calls: flight.Group[string, map[string]string]{KeepErrors: true, Retry: flight.RetryContextErrors}}
	})
	if !ok {
		return nil, false
	}
	return v.(*listings), true
}

// listings remembers, for one run, what each repository's ls-remote
// answered, and lets concurrent callers asking the same share one call.
type listings struct {
	calls flight.Group[string, map[string]string]
	mu    sync.Mutex
	fresh map[string]bool // cached clones Prepare made, not yet filled
}

// madeEmpty reports whether the run's Prepare made the cached clone at
// bare and nothing has used it since, and forgets it: the fetch then
// knows the clone holds nothing. The caller holds the entry's repo lock.
func madeEmpty(ctx context.Context, bare string) bool {
	l, ok := runListings(ctx)
	if !ok {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	was := l.fresh[bare]
	delete(l.fresh, bare)
	return was
}

// listOnce runs list, or, in a run ([source.WithRun]), returns the
// answer of the run's earlier call with the same key: a repository is
// then listed once per run, by the first caller (concurrent callers wait
// for it and share its answer), for its versions, the refs of its calls
// and the commits fetched. A tag moved upstream after the listing is not
// seen by the run, exactly as if it had moved after the run. Errors are
// shared too, except the context's own (cancellation, deadline), after
// which the next caller lists again. The key names the source (its
// git and configuration may differ), the repository URL with its
// credentials and "sshkey" (another identity may see other refs), and
// what is listed.
func (s *Source) listOnce(ctx context.Context, r address.Remote, what string, list func() (map[string]string, error)) (map[string]string, error) {
	l, ok := runListings(ctx)
	if !ok {
		return list()
	}
	key := fmt.Sprintf("%p\x00%s\x00%s\x00%s", s, r.URL, r.SSHKey, what)
	return l.calls.Do(ctx, key, list)
}

// Prepare makes, in a run ([source.WithRun]), the listing that a later
// [Source.Fetch] of pkg (a ref's, the default branch's, or a version's
// tags) will use, so that a caller who knows a call will be fetched can
// let the listing run beside other work, such as resolving other calls'
// versions. It returns when the listing is made; its errors are left to
// the calls that need it (a failed listing is shared with them, a
// cancelled one is made again). With a cache, the repository's cached
// clone is made meanwhile, if there is none. It does nothing outside a run, for
// a package that is not a git module, and for a full commit ID, which
// needs no listing.
func (s *Source) Prepare(ctx context.Context, pkg source.Package) {
	if _, ok := runListings(ctx); !ok {
		return
	}
	m, r, err := remoteOf(pkg)
	if err != nil {
		return
	}
	if s.opts.CacheDir != "" {
		// The cached clone the fetch will fill, made meanwhile.
		var wg sync.WaitGroup
		defer wg.Wait()
		wg.Go(func() { s.prepareClone(ctx, r, m) })
	}
	switch {
	case !m.Version.IsZero():
		_, _ = s.headsAndTags(ctx, r, m)
	case m.Ref != "" && !isCommitID(m.Ref):
		_, _ = s.lsRemoteRef(ctx, r, m, m.Ref)
	case m.Ref == "":
		_, _ = s.lsRemoteHead(ctx, r)
	}
}

// prepareClone makes the cached clone of r if there is none yet (as the
// fetch would), so that a fetch prepared ahead does not wait for "git
// init" after its listing. Errors are left to the fetch.
func (s *Source) prepareClone(ctx context.Context, r address.Remote, m source.ModulePackage) {
	unlock, err := s.lockEntry(ctx, r, m, repoLock)
	if err != nil {
		return
	}
	defer unlock()
	run, err := s.newRunner("", false)
	if err != nil {
		return
	}
	defer run.close()
	bare, created, err := s.openBare(ctx, run, r)
	if err != nil || !created {
		return
	}
	if l, ok := runListings(ctx); ok {
		l.mu.Lock()
		if l.fresh == nil {
			l.fresh = map[string]bool{}
		}
		l.fresh[bare] = true
		l.mu.Unlock()
	}
}
