package git

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/address"
)

// listingsKey is the context key of a run's shared listings.
type listingsKey struct{}

// listings remembers, for one run, what each repository's ls-remote
// answered, and lets concurrent callers asking the same share one call.
type listings struct {
	mu    sync.Mutex
	calls map[string]*listingCall
}

type listingCall struct {
	done chan struct{}
	refs map[string]string
	err  error
}

// ShareListings returns a context under which the git sources list each
// repository at most once: the versions of a call, the ref of another
// call of the same repository, and the commit each [Source.Fetch] then
// fetches all come from the one "git ls-remote" of the repository, made
// by the first caller (concurrent callers wait for it and share its
// answer). Use one such context per run, as resolve/install's Init does:
// a tag moved upstream after the listing is not seen by the run, exactly
// as if it had moved after the run. Without it, every call lists the
// repository afresh. Errors are shared too, except the context's own
// (cancellation, deadline), after which the next caller lists again.
// Calling it on a context that already shares listings returns ctx.
func ShareListings(ctx context.Context) context.Context {
	if _, ok := ctx.Value(listingsKey{}).(*listings); ok {
		return ctx
	}
	return context.WithValue(ctx, listingsKey{}, &listings{calls: map[string]*listingCall{}})
}

// listOnce runs list, or, under [ShareListings], returns the answer of
// the run's earlier call with the same key. The key names the source (its
// git and configuration may differ), the repository URL with its
// credentials and "sshkey" (another identity may see other refs), and
// what is listed.
func (s *Source) listOnce(ctx context.Context, r address.Remote, what string, list func() (map[string]string, error)) (map[string]string, error) {
	l, ok := ctx.Value(listingsKey{}).(*listings)
	if !ok {
		return list()
	}
	key := fmt.Sprintf("%p\x00%s\x00%s\x00%s", s, r.URL, r.SSHKey, what)
	for {
		l.mu.Lock()
		c, found := l.calls[key]
		if !found {
			c = &listingCall{done: make(chan struct{})}
			l.calls[key] = c
			l.mu.Unlock()
			c.refs, c.err = list()
			if c.err != nil && isContextError(c.err) {
				l.mu.Lock()
				delete(l.calls, key)
				l.mu.Unlock()
			}
			close(c.done)
			return c.refs, c.err
		}
		l.mu.Unlock()
		select {
		case <-c.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if c.err != nil && isContextError(c.err) {
			// The caller that listed was cancelled: list again.
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			continue
		}
		return c.refs, c.err
	}
}

// isContextError reports whether err is a context's cancellation or
// deadline.
func isContextError(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// Prepare makes, under [ShareListings], the listing that a later
// [Source.Fetch] of pkg (a ref's, the default branch's, or a version's
// tags) will use, so that a caller who knows a call will be fetched can
// let the listing run beside other work, such as resolving other calls'
// versions. It returns when the listing is made; its errors are left to
// the calls that need it (a failed listing is shared with them, a
// cancelled one is made again). It does nothing without ShareListings, for
// a package that is not a git module, and for a full commit ID, which
// needs no listing.
func (s *Source) Prepare(ctx context.Context, pkg source.Package) {
	if _, ok := ctx.Value(listingsKey{}).(*listings); !ok {
		return
	}
	m, r, err := remoteOf(pkg)
	if err != nil {
		return
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
