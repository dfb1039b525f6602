package install

import (
	"context"
	"slices"
	"sync/atomic"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
)

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
