package install

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2"
	tfaddr "github.com/hashicorp/terraform-registry-address"
	"golang.org/x/sync/errgroup"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/address"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/mirror"
	"github.com/tflock/tflock/source/providercache"
)

// Init does for a configuration what "tofu init" does for its dependencies,
// plus module locking: it reads the root module and the local modules it
// calls, resolves and fetches the remote modules (reading each to find what
// it needs in turn), resolves every provider, fetches every package through
// the cache, verifies each against the lock file (trusting it on first use),
// and installs providers and modules where tofu looks for them. It returns
// the new lock file, which it does not write (see [WriteLock]).
//
// When every locked version still satisfies the constraints and the cache
// holds every package by its locked hashes, no source is asked for versions
// at all.
//
// A lock file written before a move from Terraform to OpenTofu holds
// hashicorp/X of Terraform's registry ([TerraformRegistryHost]) where the
// configuration now means hashicorp/X of OpenTofu's
// ([resolve.DefaultRegistryHost]): as tofu does, Init keeps the locked
// version (if the constraints allow it and the registry lists it) under the
// new address, with the hashes of the new address's packages (the two
// projects' releases differ byte for byte), drops the old entry once
// nothing requires it, and warns ([Result.Warnings]). [FlavorTerraform]
// does not translate.
//
// On error nothing is installed: packages are staged in temporary
// directories and moved into place at the end. With
// [Options.ProvidersLock], nothing is installed at all.
//
// Init reports its progress to [Options.Events]: EventResolving when it
// asks a source for a package's versions, EventVersionChosen for each pick
// (Detail: why, in a few words: the pick's Brief), EventFetchStarted and EventFetchDone around each
// download, EventCacheHit (from the cache, when it is opened with the same
// handler) for each package found in the cache, EventVerified (Detail:
// "matches the lock file", "checksum signed by key ..." or "trusted on
// first use"), EventLockChanged for each change to the lock file (Detail:
// the change) and EventWarning. Bytes done and total during a download
// (EventFetchProgress) come from the source itself: give the sources the
// same handler (registry.Options.Events, oci.Options.Events); they then
// report their own EventFetchStarted and EventFetchDone for the package
// too.
func Init(ctx context.Context, opts Options) (*Result, error) {
	s, err := opts.normalize()
	if err != nil {
		return nil, err
	}
	defer s.cleanup()
	if s.Reverify {
		ctx = cache.Reverify(ctx)
	}
	r := newRun(s)
	if err := r.walk(ctx); err != nil {
		return nil, err
	}
	reqs := r.requirements()
	ropts := r.resolveOptions()
	if s.ProvidersLock {
		// Ask for each provider's checksums as soon as its version is
		// known, instead of after every provider is listed: the slowest
		// listing then delays only its own provider. The answer is
		// remembered (r.memo) for lockProvider; a failure is reported
		// there.
		ropts.ProviderPicked = func(ctx context.Context, p resolve.ProviderPick) {
			_, _ = r.checksums(ctx, r.firstPlatform(p))
		}
	}
	sel, err := resolve.Resolve(ctx, reqs, r.lister, ropts)
	if err != nil {
		var unknown *resolve.UnknownPackageError
		if errors.As(err, &unknown) {
			if p, ok := unknown.Package.(source.ProviderPackage); ok {
				return nil, r.legacyHint(p.Addr, err)
			}
		}
		return nil, err
	}
	r.warnTranslated(ctx, sel)
	if err := r.checkFetched(sel); err != nil {
		return nil, err
	}
	res, provs, err := r.lockSelection(ctx, sel, sel.Apply)
	if err != nil {
		return nil, err
	}
	if s.ReadOnly && len(res.Changes) > 0 {
		refused, warnings := readOnlyVerdict(r.prev, res.Changes)
		if len(refused) > 0 {
			return nil, &LockChangedError{Changes: refused}
		}
		res.Warnings = append(res.Warnings, warnings...)
		res.Lock, res.Changes = r.prev.Clone(), nil
	}
	if w := r.incompleteWarning(); w != "" && len(res.Changes) > 0 && !s.ProvidersLock {
		res.Warnings = append(res.Warnings, w)
	}
	r.emitChanges(ctx, res)
	edits, err := r.planManagedRefs(ctx, res)
	if err != nil {
		return nil, err
	}
	res.Modules = r.moduleResults()
	if s.ProvidersLock {
		for i := range provs {
			provs[i].Dir = ""
		}
		res.Providers = provs
		return res, nil
	}
	installed, err := r.install(ctx, provs)
	if err != nil {
		return nil, err
	}
	res.Providers = installed
	if res.Rewritten, err = r.applyManagedRefs(ctx, edits); err != nil {
		return nil, err
	}
	return res, nil
}

// newRun starts the state of one run (an Init, or a [LockProvider] or
// [LockModule] call).
func newRun(s *settings) *run {
	r := &run{s: s, prev: s.Lock, locked: s.Lock, memo: source.Memoize(s.Source), fetched: map[string]*moduleFetch{}, calls: map[string]*resolve.ModuleCall{}}
	if !s.noDir {
		r.readInstalledModules()
	}
	for _, d := range s.Lock.Warnings() {
		r.warnings = append(r.warnings, diagnosticText(d))
	}
	r.lister = &runLister{r: r}
	r.downloadSlots = make(chan struct{}, s.DownloadConcurrency)
	return r
}

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
	r.recordModules(ctx, sel, next)
	provs, err := r.fetchProviders(ctx, sel, next)
	if err != nil {
		return nil, nil, err
	}
	res := &Result{Lock: next, Previous: r.prev, Selection: sel, Listed: int(r.lister.count()), Downloads: r.downloads, Warnings: r.warnings, Flavor: r.s.Flavor}
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

// run is the state of one Init.
type run struct {
	s    *settings
	prev *lockfile.File
	// locked is what the run treats as locked: prev, plus the module
	// calls prev lacks that were installed already (see adoptInstalled).
	locked *lockfile.File
	// manifest is the previous install's modules.json by key; adopted the
	// calls whose installed selection locked holds in prev's stead.
	manifest map[string]ManifestRecord
	adopted  map[string]bool
	memo     source.Source
	lister   *runLister
	// downloadSlots bounds the provider package fetches (downloads,
	// extraction, hashing) running at once.
	downloadSlots chan struct{}

	mu        sync.Mutex
	reqs      []resolve.Requirement
	trees     []*tree
	calls     map[string]*resolve.ModuleCall // every module call by path
	fetched   map[string]*moduleFetch        // remote module calls by path
	downloads int
	warnings  []string
	installed map[string]hash.Hash // installedMatch's answers: the h1: of each installed package ("" if none)
	// installedMods are installedModule's answers by call and version.
	installedMods map[string]*moduleFetch
	// lockUpdates are the hashes of each provider fetched for install,
	// for the incomplete lock warning (see incompleteWarning).
	lockUpdates map[tfaddr.Provider]*lockUpdate
}

// tree is a module tree read in place (the root) or from a fetched package.
type tree struct {
	pkgRoot      string // file system directory of the package (or the root module)
	manifestRoot string // the same, as modules.json spells it
	cfg          *resolve.Config
}

// moduleFetch is a remote module call's package.
type moduleFetch struct {
	pick  resolve.ModulePick
	call  *resolve.ModuleCall
	entry cache.Entry
	sub   string // subdirectory of entry.Dir holding the module (slash-separated)
	hit   bool
	// locked is true when the call's lock entry bound the fetch (its
	// hashes and commit or digest were checked); else the entry records
	// what was fetched now.
	locked bool
	// reused is true when the module was installed already and matches
	// the lock: entry.Dir is its installed directory, kept as it is.
	reused bool
}

func (r *run) resolveOptions() resolve.Options {
	return resolve.Options{
		Lock:             r.locked,
		Upgrade:          r.s.Upgrade,
		UpgradeProviders: r.s.UpgradeProviders,
		UpgradeModules:   r.s.UpgradeModules,
		DevOverrides:     r.s.DevOverrides,
		Reattach:         r.s.Reattach,
		UnifyModules:     r.s.UnifyModules,
		DefaultHost:      r.s.DefaultHost,
		Concurrency:      r.s.Concurrency,

		TranslatePredecessor: r.s.translate,
	}
}

func (r *run) readOptions() resolve.ReadOptions {
	return resolve.ReadOptions{DefaultHost: r.s.DefaultHost, Variables: r.s.Variables}
}

func (r *run) requirements() []resolve.Requirement {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.reqs)
	return append(out, r.s.Requirements...)
}

// addTree records a module tree and returns its remote module calls.
func (r *run) addTree(t *tree) []*resolve.ModuleCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.trees = append(r.trees, t)
	var remote []*resolve.ModuleCall
	for _, m := range t.cfg.Modules {
		r.reqs = append(r.reqs, m.Requirements...)
		for i := range m.Calls {
			mc := &m.Calls[i]
			r.calls[mc.Path] = mc
			if mc.Kind != resolve.ModuleSourceLocal {
				remote = append(remote, mc)
			}
		}
	}
	return remote
}

func (r *run) readTree(ctx context.Context, dir, call, pkgRoot, manifestRoot string) ([]*resolve.ModuleCall, error) {
	cfg, diags := resolve.ReadTree(dir, call, r.readOptions())
	return r.useTree(ctx, dir, cfg, diags, pkgRoot, manifestRoot)
}

// useTree records a module tree read from dir, or fails with its
// errors.
func (r *run) useTree(ctx context.Context, dir string, cfg *resolve.Config, diags hcl.Diagnostics, pkgRoot, manifestRoot string) ([]*resolve.ModuleCall, error) {
	if diags.HasErrors() {
		return nil, &ConfigError{Dir: dir, Diagnostics: diags}
	}
	r.warn(ctx, diags)
	return r.addTree(&tree{pkgRoot: pkgRoot, manifestRoot: manifestRoot, cfg: cfg}), nil
}

func (r *run) warn(ctx context.Context, diags hcl.Diagnostics) {
	for _, d := range diags {
		if d.Severity == hcl.DiagWarning {
			msg := d.Summary
			if d.Detail != "" {
				msg += ": " + d.Detail
			}
			r.mu.Lock()
			r.warnings = append(r.warnings, msg)
			r.mu.Unlock()
			source.EmitContext(ctx, r.s.Events, source.Event{Kind: source.EventWarning, Detail: msg})
		}
	}
}

// modulesRoot is the install directory's modules dir as modules.json
// spells it, relative to the configuration directory.
func (r *run) modulesRoot() string {
	rel, err := filepath.Rel(r.s.dir, r.s.InstallDir)
	if err != nil {
		rel = r.s.InstallDir
	}
	return path.Join(filepath.ToSlash(rel), "modules")
}

// walk reads the root module tree, then resolves, fetches and reads the
// remote modules level by level.
func (r *run) walk(ctx context.Context) error {
	pending, err := r.readRoot(ctx)
	if err != nil {
		return err
	}
	for len(pending) > 0 {
		r.bindSourceLocks(pending)
		r.adoptInstalled(pending)
		want := map[string]*resolve.ModuleCall{}
		for _, mc := range pending {
			want[mc.Path] = mc
		}
		var reqs []resolve.Requirement
		for _, q := range r.requirements() {
			if _, ok := q.Package.(source.ModulePackage); ok && (want[q.Call] != nil || r.s.UnifyModules) {
				reqs = append(reqs, q)
			}
		}
		sel, err := resolve.Resolve(ctx, reqs, r.lister, r.resolveOptions())
		if err != nil {
			return err
		}
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(r.s.Concurrency)
		var mu sync.Mutex
		var done []*moduleFetch
		for _, pick := range sel.Modules {
			mc := want[pick.Call]
			if mc == nil {
				continue
			}
			g.Go(func() error {
				mf, err := r.fetchModule(gctx, pick, mc)
				if err != nil {
					return err
				}
				mu.Lock()
				done = append(done, mf)
				mu.Unlock()
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
		slices.SortFunc(done, func(a, b *moduleFetch) int { return strings.Compare(a.pick.Call, b.pick.Call) })
		pending = nil
		for _, mf := range done {
			r.mu.Lock()
			r.fetched[mf.pick.Call] = mf
			r.mu.Unlock()
			dir := filepath.Join(mf.entry.Dir, filepath.FromSlash(mf.sub))
			root := path.Join(r.modulesRoot(), mf.pick.Call)
			more, err := r.readCalledTree(ctx, dir, mf.call, mf.entry.Dir, root)
			if err != nil {
				return err
			}
			pending = append(pending, more...)
		}
	}
	return nil
}

// upgradingModule reports whether the call's locked version is ignored.
func (r *run) upgradingModule(call string) bool {
	if r.s.Upgrade {
		return true
	}
	for _, u := range r.s.UpgradeModules {
		if call == u || strings.HasPrefix(call, u+".") {
			return true
		}
	}
	return false
}

func (r *run) upgradingProvider(addr tfaddr.Provider) bool {
	return r.s.Upgrade || slices.Contains(r.s.UpgradeProviders, addr)
}

func lockSource(q resolve.Requirement) string {
	if q.LockSource != "" {
		return q.LockSource
	}
	if m, ok := q.Package.(source.ModulePackage); ok {
		return m.Source
	}
	return ""
}

// lockedModule returns the lock entry of a call if it binds what is
// fetched for the pick, else nil: the entry applies to the call
// ([resolve.ModuleLockApplies]: same source, same ref, tag or digest as
// written) and records the picked version. Under an upgrade, a call without
// a version (a branch, the default branch, a ref or tag, OCI's "latest")
// is fetched afresh, so that it moves on; a versioned entry whose version
// the upgrade keeps still binds, so that a version republished with other
// content is refused as without an upgrade.
func (r *run) lockedModule(pick resolve.ModulePick) *lockfile.ModuleLock {
	ml := r.locked.Module(pick.Call)
	if !resolve.ModuleLockApplies(ml, pick.Package, pick.LockSource) || ml.Version != pick.Package.Version {
		return nil
	}
	if ml.Version.IsZero() && r.upgradingModule(pick.Call) {
		return nil
	}
	return ml
}

func (r *run) fetchModule(ctx context.Context, pick resolve.ModulePick, mc *resolve.ModuleCall) (*moduleFetch, error) {
	pkg := pick.Package
	var want []hash.Hash
	ml := r.lockedModule(pick)
	if ml != nil {
		want = ml.Hashes
		pkg.Pin = cmp.Or(ml.Digest, ml.Commit, pkg.Pin)
	}
	var callSub string
	switch a := mc.Address.(type) {
	case address.Registry:
		callSub = a.Subdir
	case address.Remote:
		callSub = a.Subdir
	}
	if ml != nil {
		if mf := r.installedModule(pick, mc, ml); mf != nil {
			source.EmitContext(ctx, r.s.Events, source.Event{Kind: source.EventVerified, Package: pkg, Detail: installedDetail})
			return mf, nil
		}
	}
	e, hit, sub, err := r.fill(ctx, pkg, pick.Call, want)
	if err != nil {
		return nil, err
	}
	return &moduleFetch{pick: pick, call: mc, entry: e, hit: hit, locked: ml != nil, sub: path.Join(sub, callSub)}, nil
}

// fill brings pkg into the cache, checked against want. sub is the
// subdirectory the origin designated, when the package was downloaded now.
func (r *run) fill(ctx context.Context, pkg source.Package, call string, want []hash.Hash) (cache.Entry, bool, string, error) {
	e, hit, sub, _, err := r.fillOrigin(ctx, pkg, call, want)
	return e, hit, sub, err
}

// fillOrigin is fill that also returns the hashes the origin vouched for,
// when the package was downloaded now.
func (r *run) fillOrigin(ctx context.Context, pkg source.Package, call string, want []hash.Hash) (cache.Entry, bool, string, []hash.Record, error) {
	return r.bring(ctx, r.s.Cache.Fill, pkg, call, want)
}

// hashOnly is fill for a package nothing will install (another platform's,
// in providers-lock mode): its hashes, from the cache or from the package
// hashed as it is downloaded, without storing it (cache.Cache.Hash).
func (r *run) hashOnly(ctx context.Context, pkg source.Package, want []hash.Hash) (cache.Entry, bool, error) {
	e, hit, _, _, err := r.bring(ctx, r.s.Cache.Hash, pkg, "", want)
	return e, hit, err
}

// bring is fillOrigin and hashOnly: through the cache method given (Fill
// or Hash), the package fetched from the run's source on a miss, with the
// run's events and download count, and a checksum mismatch reported as a
// *ChecksumError.
func (r *run) bring(ctx context.Context, through func(context.Context, source.Package, []hash.Hash, cache.FetchFunc) (cache.Entry, bool, error), pkg source.Package, call string, want []hash.Hash) (cache.Entry, bool, string, []hash.Record, error) {
	var got []hash.Hash
	var origin []hash.Record
	var sub string
	e, hit, err := through(ctx, pkg, want, func(ctx context.Context, dir string) (*source.Fetched, error) {
		source.EmitContext(ctx, r.s.Events, source.Event{Kind: source.EventFetchStarted, Package: pkg})
		f, err := r.s.Source.Fetch(ctx, pkg, dir)
		if err != nil {
			return nil, err
		}
		got, sub, origin = f.Hashes, f.Subdir, f.Origin
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
			return cache.Entry{}, false, "", nil, &ChecksumError{Package: pkg, Call: call, Got: got, Want: want, Err: err}
		}
		return cache.Entry{}, false, "", nil, err
	}
	if sub == "" {
		sub = e.Subdir // a cache hit: the origin's subdirectory as recorded at fetch time
	}
	detail := "trusted on first use"
	switch keys := signers(origin, e.Hashes); {
	case len(want) > 0:
		detail = "matches the lock file"
	case len(keys) > 0:
		detail = "checksum signed by key " + strings.Join(keys, ", ")
	}
	source.EmitContext(ctx, r.s.Events, source.Event{Kind: source.EventVerified, Package: pkg, Detail: detail})
	return e, hit, sub, origin, nil
}

// recordModules adds the hashes and pins of the fetched modules to the new
// lock file. A module whose lock entry did not bind the fetch (a new or
// changed requirement, an upgraded branch) gets exactly what was fetched:
// its h1: and its commit or digest, replacing what the entry held.
func (r *run) recordModules(ctx context.Context, sel *resolve.Selection, next *lockfile.File) {
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
		next.AddModuleHashes(pick.Call, mf.entry.H1)
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
}

// providerFetch is one provider package brought into the cache, or found
// installed already (reused).
type providerFetch struct {
	pkg    source.ProviderPackage
	entry  cache.Entry
	hit    bool
	reused bool
}

// installedDetail is the EventVerified detail of a package kept as it was
// installed.
const installedDetail = "installed already, matches the lock file"

// installedMatch reports whether pkg is installed already in the install
// directory (by an earlier run, or by tofu or terraform) with contents
// that match want, the lock file's hashes: such a package is kept as it
// is, as tofu keeps it, instead of being fetched and copied again. The
// answer is computed once per package and run: from the metadata of its
// files alone when they are the cache entry's own files, unchanged
// (cache.Cache.Installed), else by hashing them.
func (r *run) installedMatch(ctx context.Context, pkg source.ProviderPackage, want []hash.Hash) (string, hash.Hash, bool) {
	if len(want) == 0 || r.s.ProvidersLock || r.s.PluginCacheDir != "" {
		return "", "", false
	}
	dir := providercache.NewDir(filepath.Join(r.s.InstallDir, "providers")).PackageDir(pkg)
	key := pkg.String()
	r.mu.Lock()
	h1, done := r.installed[key]
	r.mu.Unlock()
	if !done {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			var linked bool
			if h1, linked = r.s.Cache.Installed(ctx, pkg, dir); !linked {
				h1, _ = hash.H1Dir(dir)
			}
		}
		r.mu.Lock()
		if r.installed == nil {
			r.installed = map[string]hash.Hash{}
		}
		r.installed[key] = h1
		r.mu.Unlock()
	}
	if h1 == "" || !slices.Contains(want, h1) {
		return "", "", false
	}
	return dir, h1, true
}

// fetchProviders fetches (or finds in the cache) every selected provider
// for the platforms concerned, verifies them against the lock and records
// their hashes in next.
func (r *run) fetchProviders(ctx context.Context, sel *resolve.Selection, next *lockfile.File) ([]ProviderResult, error) {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(r.s.Concurrency)
	var mu sync.Mutex
	var fetched []providerFetch
	add := map[tfaddr.Provider][]hash.Hash{}
	record := func(addr tfaddr.Provider, hs ...hash.Hash) {
		mu.Lock()
		add[addr] = append(add[addr], hs...)
		mu.Unlock()
	}
	for _, p := range sel.Providers {
		if p.Version.IsZero() || p.Reason == resolve.Builtin || p.Reason == resolve.Unmanaged {
			continue
		}
		// A version's contents never change: even when upgrading, a
		// selection of the locked version must match the locked hashes
		// (a registry that republished it is a checksum error); only a
		// version that changed gets fresh hashes.
		var want []hash.Hash
		if old := r.prev.Provider(p.Addr); old != nil && old.Version == p.Version {
			want = old.Hashes
		}
		if r.s.ProvidersLock {
			g.Go(func() error {
				return r.legacyHint(p.Addr, r.lockProvider(gctx, p, record, &mu, &fetched))
			})
			continue
		}
		for _, plat := range r.s.platforms {
			pkg := source.ProviderPackage{Addr: p.Addr, Version: p.Version, Platform: plat}
			g.Go(func() error {
				var e cache.Entry
				var hit, reused bool
				var origin []hash.Record
				if dir, h1, ok := r.installedMatch(gctx, pkg, want); ok {
					e, hit, reused = cache.Entry{Dir: dir, H1: h1, Hashes: []hash.Hash{h1}}, true, true
					source.EmitContext(gctx, r.s.Events, source.Event{Kind: source.EventVerified, Package: pkg, Detail: installedDetail})
				} else {
					select {
					case r.downloadSlots <- struct{}{}:
					case <-gctx.Done():
						return gctx.Err()
					}
					var err error
					e, hit, _, origin, err = r.fillOrigin(gctx, pkg, "", want)
					<-r.downloadSlots
					if err != nil {
						return r.legacyHint(p.Addr, err)
					}
				}
				record(p.Addr, e.Hashes...)
				if len(origin) == 0 && len(want) == 0 {
					// A new selection found in the cache: ask what the
					// origin vouches for, so that the lock file does not
					// depend on the cache being warm, and check the entry
					// against it before trusting it.
					var err error
					if origin, err = r.checksums(gctx, pkg); err != nil {
						return err
					}
					if err := vouched(pkg, e.Hashes, origin); err != nil {
						return err
					}
				}
				// Record what the origin vouches for (a registry's signed
				// zh: of every platform), as tofu and terraform do. Like
				// both (checked against tofu 1.12.6 by the interop suite),
				// an init records no h1: it did not compute itself, even
				// when the registry reports other platforms' h1: in its
				// "packages" field: "providers lock" records those.
				signed := false
				for _, rec := range origin {
					if rec.Hash.Scheme() == hash.SchemeH1 {
						continue
					}
					record(p.Addr, rec.Hash)
					signed = signed || vouchedByOrigin(rec)
				}
				if !reused && (!hit || len(want) == 0) {
					r.noteLockUpdate(p.Addr, e.Hashes, want, signed)
				}
				mu.Lock()
				fetched = append(fetched, providerFetch{pkg: pkg, entry: e, hit: hit, reused: reused})
				mu.Unlock()
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for addr, hs := range add {
		next.AddProviderHashes(addr, lockable(hs)...)
	}
	slices.SortFunc(fetched, func(a, b providerFetch) int { return strings.Compare(a.pkg.String(), b.pkg.String()) })
	out := make([]ProviderResult, 0, len(fetched))
	for _, f := range fetched {
		dir := f.entry.Dir
		if r.s.ProvidersLock {
			dir = "" // nothing installed
		}
		out = append(out, ProviderResult{Package: f.pkg, Dir: dir, CacheHit: f.hit, Reused: f.reused, h1: f.entry.H1})
	}
	return out, nil
}

// vouched checks a cached provider package against the hashes its origin
// vouches for the package's platform: when the origin reports any of a
// scheme the entry has, one of have must be among them. (An entry with an
// h1: alone, from an unpacked mirror, cannot be checked against zh:
// checksums.)
func vouched(pkg source.ProviderPackage, have []hash.Hash, origin []hash.Record) error {
	schemes := map[hash.Scheme]bool{}
	for _, h := range have {
		schemes[h.Scheme()] = true
	}
	var want []hash.Hash
	for _, rec := range origin {
		if len(rec.Provenance.Platforms) > 0 && !slices.Contains(rec.Provenance.Platforms, pkg.Platform.String()) {
			continue
		}
		if !schemes[rec.Hash.Scheme()] || (rec.Hash.Scheme() != hash.SchemeH1 && rec.Hash.Scheme() != hash.SchemeZH) {
			continue
		}
		if slices.Contains(have, rec.Hash) {
			return nil
		}
		want = append(want, rec.Hash)
	}
	if len(want) == 0 {
		return nil
	}
	slices.Sort(want)
	return &ChecksumError{Package: pkg, Got: have, Want: slices.Compact(want), Origin: true, Err: fmt.Errorf("%w: the cached package matches none of the checksums its origin vouches for", source.ErrChecksumMismatch)}
}

// lockable keeps the hashes a lock file records (h1: and zh:).
func lockable(hs []hash.Hash) []hash.Hash {
	var out []hash.Hash
	for _, h := range hs {
		if h.Scheme() == hash.SchemeH1 || h.Scheme() == hash.SchemeZH {
			out = append(out, h)
		}
	}
	return out
}

func (r *run) checksums(ctx context.Context, pkg source.Package) ([]hash.Record, error) {
	cr, ok := r.memo.(source.ChecksumReporter)
	if !ok {
		return nil, nil
	}
	recs, err := cr.Checksums(ctx, pkg)
	if err != nil && (errors.Is(err, source.ErrNotFound) || errors.Is(err, source.ErrVersionNotFound) || errors.Is(err, source.ErrPlatformNotSupported)) {
		return nil, nil
	}
	return recs, err
}

// firstPlatform is the package of p whose checksums lockProvider asks for
// first.
func (r *run) firstPlatform(p resolve.ProviderPick) source.ProviderPackage {
	return source.ProviderPackage{Addr: p.Addr, Version: p.Version, Platform: r.s.platforms[0]}
}

// lockProvider records the hashes of every platform of one provider
// version: what the origin vouches for, plus, for each platform whose h1:
// the origin does not report, the h1: of its package, downloaded once
// (through the cache), all platforms in parallel.
func (r *run) lockProvider(ctx context.Context, p resolve.ProviderPick, record func(tfaddr.Provider, ...hash.Hash), mu *sync.Mutex, fetched *[]providerFetch) error {
	recs, err := r.checksums(ctx, r.firstPlatform(p))
	if err != nil {
		return err
	}
	haveH1 := map[string]bool{}
	for _, rec := range recs {
		if rec.Hash.Scheme() == hash.SchemeH1 && !r.askedPlatform(rec.Provenance.Platforms) {
			continue // as tofu: the h1: of the platforms asked for only
		}
		record(p.Addr, rec.Hash)
		if rec.Hash.Scheme() == hash.SchemeH1 {
			for _, pl := range rec.Provenance.Platforms {
				haveH1[pl] = true
			}
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, len(r.s.platforms))
	for i, plat := range r.s.platforms {
		if haveH1[plat.String()] {
			continue
		}
		pkg := source.ProviderPackage{Addr: p.Addr, Version: p.Version, Platform: plat}
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case r.downloadSlots <- struct{}{}:
			case <-ctx.Done():
				errs[i] = ctx.Err()
				return
			}
			defer func() { <-r.downloadSlots }()
			// Downloads are verified by the source against what its
			// origin signs; the lock's hashes may cover other platforms
			// only, so they are not required to match here. The package
			// of the platform this machine installs for is stored for the
			// init that follows; the others are hashed as they are read
			// and not kept.
			var e cache.Entry
			var hit bool
			var err error
			if plat == r.s.Platform {
				e, hit, _, err = r.fill(ctx, pkg, "", nil)
			} else {
				e, hit, err = r.hashOnly(ctx, pkg, nil)
			}
			if err != nil {
				errs[i] = err
				return
			}
			record(p.Addr, e.Hashes...)
			mu.Lock()
			*fetched = append(*fetched, providerFetch{pkg: pkg, entry: e, hit: hit})
			mu.Unlock()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// askedPlatform reports whether a hash that the origin reports for plats
// (none: for no platform in particular) concerns a platform of the run.
func (r *run) askedPlatform(plats []string) bool {
	if len(plats) == 0 {
		return true
	}
	for _, p := range r.s.platforms {
		if slices.Contains(plats, p.String()) {
			return true
		}
	}
	return false
}

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
			pin := ml.Commit
			if ml.Digest != "" {
				pin = ml.Digest
			}
			lp := source.ModulePackage{Source: p.Source, Version: ml.Version, Pin: pin}
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

// diagnosticText is a one-line form of an HCL diagnostic: where, what, why.
func diagnosticText(d *hcl.Diagnostic) string {
	s := d.Summary
	if d.Detail != "" {
		s += "; " + d.Detail
	}
	if d.Subject != nil {
		s = fmt.Sprintf("%s:%d,%d: %s", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column, s)
	}
	return s
}

// legacyHint adds to a provider's installation error, as OpenTofu does,
// where to move the provider if a copy of it sits in the configuration's
// legacy .terraform/plugins directory, which is not a mirror.
func (r *run) legacyHint(addr tfaddr.Provider, err error) error {
	if err == nil || errors.Is(err, context.Canceled) || r.s.noDir {
		return err
	}
	return mirror.CheckLegacyPlugins(r.s.Dir, addr, err)
}
