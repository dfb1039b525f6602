package install

import (
	"context"
	"fmt"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/address"
)

// lockSelection writes a selection into a copy of the previous lock file
// (with apply: [resolve.Selection.Apply] for Init, Update for a single
// package), records the hashes and pins of the modules already fetched,
// and fetches the selected providers, recording their hashes: the hash
// policy of Init and of [LockProvider] and [LockModule].
func (r *run) lockSelection(ctx context.Context, sel *resolve.Selection, apply func(*lockfile.File)) (*Result, []ProviderResult, error) {
	for _, p := range sel.Providers {
		source.EmitContext(ctx, r.s.Events, source.Event{Kind: source.EventVersionChosen, Package: source.ProviderPackage{Addr: p.Addr, Version: p.Version}, Detail: p.Brief()})
	}
	next := r.prev.Clone()
	next.SetHeader(r.s.Header)
	apply(next)
	if err := r.recordModules(ctx, sel, next); err != nil {
		return nil, nil, err
	}
	provs, err := r.fetchProviders(ctx, sel, next)
	if err != nil {
		return nil, nil, err
	}
	res := &Result{Lock: next, Previous: r.prev, Selection: sel, Listed: int(r.lister.count()), Downloads: r.downloads, Warnings: r.warnings, Flavor: r.s.Flavor, Words: r.s.words}
	res.Changes = lockfile.Changes(r.prev, next)
	r.markRerecorded(res.Changes)
	return res, provs, nil
}

// emitChanges reports each change of the result's lock file.
func (r *run) emitChanges(ctx context.Context, res *Result) {
	for _, c := range res.Changes {
		source.EmitContext(ctx, r.s.Events, source.Event{Kind: source.EventLockChanged, Package: changedPackage(c, r.prev, res.Lock), Detail: c.String()})
	}
}

// changedPackage names the package of a lock change for its
// EventLockChanged: the provider, or the module call's source (as the new
// lock file records it, or the previous one for a removed call).
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
	return source.ModulePackage{Source: ml.Source, Version: ml.Version}
}

// recordModules adds the hashes and pins of the fetched modules to the new
// lock file. A module whose lock entry did not bind the fetch (a new or
// changed requirement, an upgraded branch) gets exactly what was fetched:
// its h1: and its commit or digest, replacing what the entry held.
//
// A hash the lock file could not hold (the setter refuses what the parser
// would) is an error naming the call, never a lock entry silently left
// without it.
func (r *run) recordModules(ctx context.Context, sel *resolve.Selection, next *lockfile.File) error {
	for _, pick := range sel.Modules {
		source.EmitContext(ctx, r.s.Events, source.Event{Kind: source.EventVersionChosen, Package: pick.Package, Detail: pick.Brief()})
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
