package install

import (
	"context"
	"slices"
	"sync"

	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
)

// runLister lists versions for Resolve: from the lock file and the cache
// when they agree (no source is contacted), else from the memoized source.
type runLister struct {
	r    *run
	mu   sync.Mutex
	n    int64
	seen map[string]bool // source.FamilyKey of each package listed
}

func (l *runLister) count() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

// Versions implements [source.Lister].
func (l *runLister) Versions(ctx context.Context, pkg source.Package) ([]source.Available, error) {
	if av, ok := l.r.fromLock(ctx, pkg); ok {
		return av, nil
	}
	if l.first(pkg) {
		source.EmitContext(ctx, l.r.s.Events, source.Event{Kind: source.EventResolving, Package: pkg})
	}
	return l.r.memo.Versions(ctx, pkg)
}

// fromLock answers a version listing from the lock file alone when every
// requirement on pkg is satisfied by its locked version and the cache holds
// the locked package (opentofu/opentofu#3508: a warm cache and an unchanged
// lock file need no registry).
func (r *run) fromLock(ctx context.Context, pkg source.Package) ([]source.Available, bool) {
	if r.s.ProvidersLock {
		return nil, false
	}
	reqs := r.requirements()
	switch p := pkg.(type) {
	case source.ProviderPackage:
		if r.upgradingProvider(p.Addr) {
			return nil, false
		}
		lk := r.prev.Provider(p.Addr)
		if lk == nil || lk.Version.IsZero() {
			return nil, false
		}
		for _, q := range reqs {
			if qp, ok := q.Package.(source.ProviderPackage); ok && qp.Addr == p.Addr && !q.Constraints.Allows(lk.Version) {
				return nil, false
			}
		}
		for _, plat := range r.s.platforms {
			pp := source.ProviderPackage{Addr: p.Addr, Version: lk.Version, Platform: plat}
			if _, _, ok := r.installedMatch(ctx, pp, lk.Hashes); ok {
				continue
			}
			if _, ok, err := r.s.Cache.Lookup(ctx, pp, lk.Hashes); err != nil || !ok {
				return nil, false
			}
		}
		return []source.Available{{Version: lk.Version}}, true
	case source.ModulePackage:
		var vs []versions.Version
		found := false
		byCall := map[string][]resolve.Requirement{}
		for _, q := range reqs {
			if qp, ok := q.Package.(source.ModulePackage); ok && qp.Source == p.Source {
				byCall[q.Call] = append(byCall[q.Call], q)
			}
		}
		for _, q := range reqs {
			qp, ok := q.Package.(source.ModulePackage)
			// Only the calls whose versions are listed matter: a call of
			// the same repository pinned by its source is not listed.
			if !ok || qp.Source != p.Source || !resolve.ModuleCallListed(byCall[q.Call]) {
				continue
			}
			found = true
			if r.upgradingModule(q.Call) {
				return nil, false
			}
			ml := r.locked.Module(q.Call)
			if !resolve.ModuleLockApplies(ml, qp, q.LockSource) || ml.Version.IsZero() || !q.Constraints.Allows(ml.Version) {
				return nil, false
			}
			lp := lockBound(source.ModulePackage{Source: p.Source, Version: ml.Version, Addr: qp.Addr}, ml, r.calls[q.Call])
			installed := false
			if mc := r.calls[q.Call]; mc != nil {
				pick := resolve.ModulePick{Call: q.Call, Package: qp, LockSource: lockSource(q)}
				pick.Package.Version = ml.Version
				installed = r.installedModule(pick, mc, ml) != nil
			}
			if !installed {
				// Only then: a lookup re-hashes the cache entry.
				if _, ok, err := r.s.Cache.Lookup(ctx, lp, ml.Hashes); err != nil || !ok {
					return nil, false
				}
			}
			if !slices.Contains(vs, ml.Version) {
				vs = append(vs, ml.Version)
			}
		}
		if !found {
			return nil, false
		}
		versions.Sort(vs)
		av := make([]source.Available, len(vs))
		for i, v := range vs {
			av[i] = source.Available{Version: v}
		}
		return av, true
	}
	return nil, false
}
