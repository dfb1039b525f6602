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

// voucher is the run's one trust seam: for each package the run needs, it
// decides where the package comes from (installed already, the cache, its
// remote tier, or its origin through the cache) and who vouches for it
// (the lock file's hashes, the checksums its origin signs, a trusted
// mirror, or nobody yet: trust on first use), and it checks the package
// against them. [voucher.vouch] is the one way in, answering one result
// ([trusted]); bring, slot and release are its steps. The fetch stages
// (walk for modules, fetchProviders for providers) ask it, and the record
// stage ([run.lockSelection]) writes what it answers, asking nothing
// itself.
type voucher struct{ r *run }

// wanted is a package the run asks the trust seam for.
type wanted struct {
	pkg source.Package
	// call is the module call the package is for ("" for a provider): a
	// checksum error names it.
	call string
	// lock are the lock file's hashes of the package's version (nil when
	// the lock holds none: a new selection, trusted on first use unless
	// its origin vouches for it).
	lock []hash.Hash
}

// trusted is the trust seam's answer for one package.
type trusted struct {
	// entry is the package: its directory (the cache entry's, or the
	// installed one when reused; none for another platform's package in
	// providers-lock mode, which is hashed, not stored), its hashes, pin
	// and subdirectory (the origin's answer when downloaded now, else the
	// one the lock binds or the cache recorded).
	entry cache.Entry
	// hit reports that nothing was downloaded: the package came from the
	// cache (or its remote tier) or is installed already.
	hit bool
	// reused reports that the package is installed already, with the
	// lock file's hashes, and is kept where it is.
	reused bool
	// record are the hashes the lock file records for the package: its
	// own (computed here: h1:, and a provider zip's zh:) and, for a
	// provider Init installs, those its origin vouches for by the lock's
	// rule ([run.recordsOrigin]).
	record []hash.Hash
	// origin is who vouched: the origin's records (a registry's signed
	// checksums, a mirror's hashes) from the download, or asked of the
	// origin when the package came from the cache or its remote tier.
	origin []hash.Record
	// verified says what the package was verified against: the detail of
	// its EventVerified ("matches the lock file", "checksum signed by key
	// ...", "trusted on first use", ...).
	verified string
	// signed reports that the origin registry vouched for a recorded hash
	// ([vouchedByOrigin]), for the incomplete lock warning.
	signed bool
	// updates reports that the package gives the lock file hashes anew
	// (downloaded, or a new selection), for the incomplete lock warning;
	// a package already installed or cached that matches the lock does
	// not, nor one of providers-lock mode, which gives no such warning.
	updates bool
}

// vouch brings the package w names, verified, and says who vouched for it:
//
//   - a module package: through the cache, checked against the lock
//     file's hashes (trusted on first use without them);
//   - a provider package Init installs: kept where it is when installed
//     already with the lock file's hashes; else, in a download slot,
//     through the cache, checked against the lock file's hashes, or on a
//     first install with a remote tier behind the cache against the
//     checksums its origin signs (asked first, so that the tier's copy
//     can be checked); a new selection found in the cache is checked
//     against what its origin vouches for, asked then, so that the lock
//     file does not depend on the cache being warm. Its record adds the
//     origin's hashes by the lock's rule ([run.recordsOrigin]);
//   - a provider package in providers-lock mode: in a download slot,
//     hashed as it is read and not kept, whatever its platform (as
//     "tofu providers lock" keeps nothing); verified by its source against what its origin
//     signs (the lock's hashes may cover other platforms only, so they
//     are not required to match). What its origin vouches for is
//     recorded per provider by [run.lockProvider].
func (v voucher) vouch(ctx context.Context, w wanted) (trusted, error) {
	r := v.r
	p, isProvider := w.pkg.(source.ProviderPackage)
	if !isProvider {
		t, err := v.bring(ctx, w, nil)
		t.record = []hash.Hash{t.entry.H1}
		return t, err
	}
	if r.s.ProvidersLock {
		if err := v.slot(ctx); err != nil {
			return trusted{}, err
		}
		defer v.release()
		t, err := v.bring(ctx, wanted{pkg: p}, nil)
		t.record = t.entry.Hashes
		return t, err
	}
	if dir, h1, ok := r.installedMatch(ctx, p, w.lock); ok {
		source.EmitContext(ctx, r.s.Events, source.Event{Kind: source.EventVerified, Package: p, Detail: installedDetail})
		return trusted{entry: cache.Entry{Dir: dir, H1: h1, Hashes: []hash.Hash{h1}}, hit: true, reused: true, record: []hash.Hash{h1}, verified: installedDetail}, nil
	}
	if err := v.slot(ctx); err != nil {
		return trusted{}, err
	}
	var signed []hash.Record
	var err error
	if len(w.lock) == 0 && r.s.Cache.Tiered() {
		// A first install with a remote tier behind the cache: the tier's
		// copy can be used only once it can be checked, so the checksums
		// the origin signs are asked first (a registry asks the same
		// documents for its download, once).
		signed, err = r.checksums(ctx, p)
	}
	var t trusted
	if err == nil {
		if len(signed) == 0 {
			signed = nil
		}
		t, err = v.bring(ctx, w, signed)
		if len(t.origin) == 0 {
			t.origin = signed
		}
	}
	v.release()
	if err != nil {
		return trusted{}, r.legacyHint(p.Addr, err)
	}
	if len(t.origin) == 0 && len(w.lock) == 0 {
		// A new selection found in the cache: ask what the origin vouches
		// for, so that the lock file does not depend on the cache being
		// warm, and check the entry against it before trusting it.
		if t.origin, err = r.checksums(ctx, p); err != nil {
			return trusted{}, err
		}
		if err := vouched(p, t.entry.Hashes, t.origin); err != nil {
			return trusted{}, err
		}
	}
	// Record what the origin vouches for, by the lock's rule
	// (recordsOrigin; checked against tofu 1.12.6 and terraform by the
	// interop suite).
	t.record = slices.Clone(t.entry.Hashes)
	for _, rec := range t.origin {
		if !r.recordsOrigin(rec) {
			continue
		}
		t.record = append(t.record, rec.Hash)
		t.signed = t.signed || vouchedByOrigin(rec)
	}
	t.updates = !t.hit || len(w.lock) == 0
	return t, nil
}

// slot waits for one of the run's download slots (provider package
// fetches: downloads, extraction, hashing) or for ctx's end.
func (v voucher) slot(ctx context.Context) error {
	select {
	case v.r.downloadSlots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// release gives back the download slot taken by slot.
func (v voucher) release() { <-v.r.downloadSlots }

// bring brings w's package through the cache, checked against w.lock,
// or, when signed is set, against those of the origin's signed records
// that concern the package's platform: from the cache, or from the run's
// source on a miss, with the run's events and download count. A provider
// package in providers-lock mode is only hashed ([cache.Cache.Hash]);
// every other package is stored ([cache.Cache.Fill]).
// A checksum mismatch is reported as a *ChecksumError. It fills in the
// answer's entry, hit, origin (the records the origin gave with a
// download) and verified, and emits EventVerified.
func (v voucher) bring(ctx context.Context, w wanted, signed []hash.Record) (trusted, error) {
	r, pkg, want := v.r, w.pkg, w.lock
	p, isProvider := pkg.(source.ProviderPackage)
	if signed != nil {
		want = nil
		for _, rec := range signed {
			if (rec.Hash.Scheme() == hash.SchemeZH || rec.Hash.Scheme() == hash.SchemeH1) && (len(rec.Provenance.Platforms) == 0 || slices.Contains(rec.Provenance.Platforms, p.Platform.String())) {
				want = append(want, rec.Hash)
			}
		}
	}
	var got []hash.Hash
	var origin []hash.Record
	fetching := new(atomic.Bool)
	fetch := func(ctx context.Context, dir string) (*source.Fetched, error) {
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
	}
	cctx := cacheEvents(ctx, r.s.Events, fetching)
	var e cache.Entry
	var hit bool
	var err error
	if isProvider && r.s.ProvidersLock {
		e, hit, err = r.s.Cache.Hash(cctx, pkg, want, fetch)
	} else {
		e, hit, err = r.s.Cache.Fill(cctx, pkg, want, fetch)
	}
	if err != nil {
		if errors.Is(err, source.ErrChecksumMismatch) {
			var mm *cache.MismatchError
			if errors.As(err, &mm) {
				got = mm.Got
			}
			ce := &ChecksumError{Package: pkg, Call: w.call, Got: got, Want: want, Origin: signed != nil, Err: err, words: &r.s.words}
			if !ce.Origin {
				ce.Remedy = remedyFor(RemedyRelock, pkg, w.call)
			}
			return trusted{}, ce
		}
		return trusted{}, err
	}
	detail := verifiedDetail(pkg, e, want, signed, origin)
	source.EmitContext(ctx, r.s.Events, source.Event{Kind: source.EventVerified, Package: pkg, Detail: detail})
	return trusted{entry: e, hit: hit, origin: origin, verified: detail}, nil
}

// verifiedDetail says what a package brought through the cache (e) was
// verified against, for its EventVerified and [trusted.verified]: the
// lock file's hashes want (when signed is nil), or the keys that signed
// one of its hashes by the origin's records (those of the download, else
// signed, which the fill was checked against), or nothing (trust on first
// use).
func verifiedDetail(pkg source.Package, e cache.Entry, want []hash.Hash, signed, origin []hash.Record) string {
	vouchers := origin
	if len(vouchers) == 0 {
		vouchers = signed
	}
	switch keys := signers(vouchers, e.Hashes); {
	case len(want) > 0 && signed == nil && len(hash.Preferred(want)) == 0:
		// Nothing was compared: say so, never "matches".
		return unverifiableDetail
	case len(want) > 0 && signed == nil:
		if m, ok := pkg.(source.ModulePackage); ok {
			if bound, isBound := m.BoundSubdir(); isBound && bound != e.Subdir {
				return fmt.Sprintf("matches the lock file's hashes, but its location names the subdirectory %s where the lock file records %s", subdirText(e.Subdir), subdirText(bound))
			}
		}
		return "matches the lock file"
	case len(keys) > 0:
		return "checksum signed by key " + strings.Join(keys, ", ")
	}
	return "trusted on first use"
}
