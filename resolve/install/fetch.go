package install

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
)

// fill brings pkg into the cache, checked against want. sub is the
// subdirectory of the package its location names: the origin's answer
// when it was downloaded now, else the one the lock binds (or the cache
// recorded).
func (r *run) fill(ctx context.Context, pkg source.Package, call string, want []hash.Hash) (cache.Entry, bool, string, error) {
	e, hit, sub, _, err := r.fillOrigin(ctx, pkg, call, want)
	return e, hit, sub, err
}

// fillOrigin is fill that also returns the hashes the origin vouched for,
// when the package was downloaded now.
func (r *run) fillOrigin(ctx context.Context, pkg source.Package, call string, want []hash.Hash) (cache.Entry, bool, string, []hash.Record, error) {
	return r.bring(ctx, r.s.Cache.Fill, pkg, call, want, nil)
}

// fillSigned is fillOrigin for a provider the lock file has no hashes for
// yet, checked against the checksums its origin vouches for (signed), so
// that a copy from the cache's remote tier can be verified before it is
// used. signed are those records; the result's origin records are them
// when the package did not come from the origin.
func (r *run) fillSigned(ctx context.Context, pkg source.ProviderPackage, signed []hash.Record) (cache.Entry, bool, []hash.Record, error) {
	var want []hash.Hash
	for _, rec := range signed {
		if (rec.Hash.Scheme() == hash.SchemeZH || rec.Hash.Scheme() == hash.SchemeH1) && (len(rec.Provenance.Platforms) == 0 || slices.Contains(rec.Provenance.Platforms, pkg.Platform.String())) {
			want = append(want, rec.Hash)
		}
	}
	e, hit, _, origin, err := r.bring(ctx, r.s.Cache.Fill, pkg, "", want, signed)
	if len(origin) == 0 {
		origin = signed
	}
	return e, hit, origin, err
}

// hashOnly is fill for a package nothing will install (another platform's,
// in providers-lock mode): its hashes, from the cache or from the package
// hashed as it is downloaded, without storing it (cache.Cache.Hash).
func (r *run) hashOnly(ctx context.Context, pkg source.Package, want []hash.Hash) (cache.Entry, bool, error) {
	e, hit, _, _, err := r.bring(ctx, r.s.Cache.Hash, pkg, "", want, nil)
	return e, hit, err
}

// bring is fillOrigin, fillSigned and hashOnly: through the cache method
// given (Fill or Hash), the package fetched from the run's source on a
// miss, with the run's events and download count, and a checksum mismatch
// reported as a *ChecksumError. want are the lock file's hashes, or, when
// signed is set, the hashes of those origin records.
func (r *run) bring(ctx context.Context, through func(context.Context, source.Package, []hash.Hash, cache.FetchFunc) (cache.Entry, bool, error), pkg source.Package, call string, want []hash.Hash, signed []hash.Record) (cache.Entry, bool, string, []hash.Record, error) {
	var got []hash.Hash
	var origin []hash.Record
	fetching := new(atomic.Bool)
	e, hit, err := through(cacheEvents(ctx, r.s.Events, fetching), pkg, want, func(ctx context.Context, dir string) (*source.Fetched, error) {
		fetching.Store(true)
		source.EmitContext(ctx, r.s.Events, source.Event{Kind: source.EventFetchStarted, Package: pkg})
		f, err := source.FetchArchive(ctx, r.s.Source, pkg, dir)
		if err != nil {
			return nil, err
		}
		got, origin = f.Hashes, f.Origin
		r.mu.Lock()
		r.downloads++
		r.mu.Unlock()
		source.EmitContext(ctx, r.s.Events, source.Event{Kind: source.EventFetchDone, Package: pkg, Bytes: f.Size, Total: f.Size, Detail: f.Location})
		return f, nil
	})
	if err != nil {
		if errors.Is(err, source.ErrChecksumMismatch) {
			var mm *cache.MismatchError
			if errors.As(err, &mm) {
				got = mm.Got
			}
			ce := &ChecksumError{Package: pkg, Call: call, Got: got, Want: want, Origin: signed != nil, Err: err, words: &r.s.words}
			if !ce.Origin {
				ce.Remedy = remedyFor(RemedyRelock, pkg, call)
			}
			return cache.Entry{}, false, "", nil, ce
		}
		return cache.Entry{}, false, "", nil, err
	}
	// The subdirectory the origin named now (in canonical form), or on a
	// cache hit the one the lock binds, or else the one the origin named
	// when the package was stored (checked by the cache).
	sub := e.Subdir
	detail := "trusted on first use"
	vouchers := origin
	if len(vouchers) == 0 {
		vouchers = signed
	}
	switch keys := signers(vouchers, e.Hashes); {
	case len(want) > 0 && signed == nil && len(hash.Preferred(want)) == 0:
		// Nothing was compared: say so, never "matches".
		detail = unverifiableDetail
	case len(want) > 0 && signed == nil:
		detail = "matches the lock file"
		if m, ok := pkg.(source.ModulePackage); ok {
			if bound, isBound := m.BoundSubdir(); isBound && bound != sub {
				detail = fmt.Sprintf("matches the lock file's hashes, but its location names the subdirectory %s where the lock file records %s", subdirText(sub), subdirText(bound))
			}
		}
	case len(keys) > 0:
		detail = "checksum signed by key " + strings.Join(keys, ", ")
	}
	source.EmitContext(ctx, r.s.Events, source.Event{Kind: source.EventVerified, Package: pkg, Detail: detail})
	return e, hit, sub, origin, nil
}

// unverifiableDetail is the detail of the EventVerified of a package whose
// lock file entry holds hashes, none of a scheme tflock computes (h1:,
// zh:): nothing could be compared.
const unverifiableDetail = "not verified: the lock file records no h1: or zh: hash of it, so nothing in it could be checked"

// subdirText names a package subdirectory in a message.
func subdirText(sub string) string {
	if sub == "" {
		return "(the package root)"
	}
	return sub
}

// signers returns the OpenPGP key IDs that signed one of the hashes of a
// fetched package, according to the origin's records.
func signers(origin []hash.Record, have []hash.Hash) []string {
	var keys []string
	for _, rec := range origin {
		if slices.Contains(have, rec.Hash) {
			keys = append(keys, rec.Provenance.SignedBy...)
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// cacheEvents returns ctx with h attached (source.WithEvents) for the
// package cache's hits and waits, so that a run's Events receive them,
// with the run's unit, whatever handler the cache was opened with: one
// run, one event stream. Events of other kinds, and those the source
// sends while fetching (fetching is set then; a git source reports its
// own clone cache), are left to the handlers configured for them.
func cacheEvents(ctx context.Context, h source.Events, fetching *atomic.Bool) context.Context {
	if h == nil {
		return ctx
	}
	return source.WithEvents(ctx, source.EventsFunc(func(e source.Event) {
		if isCacheEvent(e.Kind) && !fetching.Load() {
			h.Event(e)
		}
	}))
}

// isCacheEvent reports the kinds of event [cacheEvents] forwards.
func isCacheEvent(k source.EventKind) bool {
	return k == source.EventCacheHit || k == source.EventCacheWait
}
