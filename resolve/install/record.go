package install

import (
	"context"
	"fmt"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/address"
)

// announce reports the selection's picks (EventVersionChosen), providers
// first, then module calls, before anything of them is fetched.
func (r *run) announce(ctx context.Context, sel *resolve.Selection) {
	for _, p := range sel.Providers {
		source.EmitContext(ctx, r.s.Events, source.Event{Kind: source.EventVersionChosen, Package: source.ProviderPackage{Addr: p.Addr, Version: p.Version}, Detail: p.Brief()})
	}
	for _, pick := range sel.Modules {
		source.EmitContext(ctx, r.s.Events, source.Event{Kind: source.EventVersionChosen, Package: pick.Package, Detail: pick.Brief()})
	}
}

// lockSelection writes a selection into a copy of the previous lock file
// (with apply: [resolve.Selection.Apply] for Init, Update for a single
// package) and records the hashes and pins of the modules fetched and the
// hashes the trust seam answered for the providers fetched (provs, from
// [run.fetchProviders]): the hash policy of Init and of [LockProvider] and
// [LockModule]. It fetches nothing: the record stage writes what the fetch
// stages brought.
func (r *run) lockSelection(sel *resolve.Selection, provs providerFetches, apply func(*lockfile.File)) (*Result, []ProviderResult, error) {
	next := r.prev.Clone()
	next.SetHeader(r.s.Header)
	apply(next)
	if err := r.recordModules(sel, next); err != nil {
		return nil, nil, err
	}
	out, err := r.recordProviders(provs, next)
	if err != nil {
		return nil, nil, err
	}
	res := &Result{Lock: next, Previous: r.prev, Selection: sel, Listed: int(r.lister.count()), Downloads: r.downloads, Warnings: r.warnings, Flavor: r.s.Flavor, Words: r.s.words}
	res.Changes = lockfile.Changes(r.prev, next)
	r.markRerecorded(res.Changes)
	return res, out, nil
}

// recordProviders adds to the new lock file the hashes the trust seam
// answered for each provider package (and, in providers-lock mode, those
// each provider's origin vouches for), notes them for the incomplete lock
// warning, and returns the providers' results.
func (r *run) recordProviders(provs providerFetches, next *lockfile.File) ([]ProviderResult, error) {
	add := map[tfaddr.Provider][]hash.Hash{}
	for addr, hs := range provs.origin {
		add[addr] = append(add[addr], hs...)
	}
	out := make([]ProviderResult, 0, len(provs.packages))
	for _, f := range provs.packages {
		add[f.pkg.Addr] = append(add[f.pkg.Addr], f.record...)
		if f.updates {
			r.noteLockUpdate(f.pkg.Addr, f.entry.Hashes, f.want, f.signed)
		}
		dir := f.entry.Dir
		if r.s.ProvidersLock {
			dir = "" // nothing installed
		}
		out = append(out, ProviderResult{Package: f.pkg, Dir: dir, CacheHit: f.hit, Reused: f.reused, h1: f.entry.H1})
	}
	for addr, hs := range add {
		if _, err := next.AddProviderHashes(addr, lockable(hs)...); err != nil {
			return nil, fmt.Errorf("provider %s: recording its hashes: %w", addr.ForDisplay(), err)
		}
	}
	return out, nil
}

// emitChanges reports each change of the result's lock file.
func (r *run) emitChanges(ctx context.Context, res *Result) {
	for _, c := range res.Changes {
		source.EmitContext(ctx, r.s.Events, source.Event{Kind: source.EventLockChanged, Package: changedPackage(c, r.prev, res.Lock), Detail: c.String()})
	}
}

// changedPackage names the package of a lock change for its
// EventLockChanged: the provider, or the module call's package (as the new
// lock file records it, or the previous one for a removed call; see
// [lockedPackage]).
func changedPackage(c lockfile.Change, prev, next *lockfile.File) source.Package {
	if c.Module == "" {
		return source.ProviderPackage{Addr: c.Provider}
	}
	ml := next.Module(c.Module)
	if ml == nil {
		ml = prev.Module(c.Module)
	}
	if ml == nil {
		return nil
	}
	return lockedPackage(ml)
}

// recordModules adds the hashes and pins of the fetched modules to the new
// lock file. A module whose lock entry did not bind the fetch (a new or
// changed requirement, an upgraded branch) gets exactly what was fetched:
// its h1: and its commit or digest, replacing what the entry held.
//
// A hash the lock file could not hold (the setter refuses what the parser
// would) is an error naming the call, never a lock entry silently left
// without it.
func (r *run) recordModules(sel *resolve.Selection, next *lockfile.File) error {
	for _, pick := range sel.Modules {
		mf := r.fetched[pick.Call]
		ml := next.Module(pick.Call)
		if mf == nil || ml == nil {
			continue
		}
		if !mf.locked {
			ml.Hashes, ml.Commit, ml.Digest = nil, "", ""
		}
		// The directory installed: the subdirectory the location named
		// (for a bound fetch from the cache, the one the lock binds; from
		// the origin, its answer, a change when it names another).
		ml.Subdir = mf.loc
		if _, err := next.AddModuleHashes(pick.Call, mf.entry.H1); err != nil {
			return fmt.Errorf("module %q: recording its hash: %w", pick.Call, err)
		}
		if mf.entry.Pin == "" {
			continue
		}
		if a, ok := mf.call.Address.(address.Remote); ok {
			switch a.Kind {
			case address.KindGit:
				ml.Commit = mf.entry.Pin
			case address.KindOCI:
				ml.Digest = mf.entry.Pin
			}
		}
	}
	return nil
}

// recordsOrigin is the lock file's rule for a provider hash its origin
// reports (rather than one this run computed from a package), the one
// place Init and providers-lock mode decide it:
//
//   - a registry's hash is recorded, whatever its platform, when one of
//     the keys the registry lists signed it, or when the registry's host
//     needs no signature ([hash.Provenance.SigningExempt]: OpenTofu's
//     default registry unless OPENTOFU_ENFORCE_GPG_VALIDATION=true). This
//     is OpenTofu's rule (ShouldEnforceGPGValidationForProvider and its
//     installer's "signed hashes"): with OpenTofu 1.12's "packages" field,
//     the default registry's h1: and zh: of every platform, in init and in
//     providers lock alike; elsewhere, the signed zh: of every platform.
//   - a mirror's hash (a filesystem mirror's, which tflock computes from
//     the mirror's own files; a network mirror's with trust_all_hashes;
//     an OCI mirror's) is recorded by Init for every platform the mirror
//     holds, more than tofu records, so that a lock made on one platform
//     verifies the others' packages from the same mirror; in
//     providers-lock mode, for the platforms asked for only, as the
//     mirror is not the provider's origin.
func (r *run) recordsOrigin(rec hash.Record) bool {
	p := rec.Provenance
	switch {
	case rec.Hash.Scheme() != hash.SchemeH1 && rec.Hash.Scheme() != hash.SchemeZH:
		return false
	case len(p.Registries) > 0:
		return len(p.SignedBy) > 0 || p.SigningExempt
	case len(p.Mirrors) > 0:
		return !r.s.ProvidersLock || r.askedPlatform(p.Platforms)
	}
	return false
}
