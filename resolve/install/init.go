package install

import (
	"context"
	"errors"
	"slices"
	"sync"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/config"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
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
// ([address.DefaultRegistryHost]): as tofu does, Init keeps the locked
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
// "matches the lock file" when a hash of the lock file was compared,
// "checksum signed by key ...", "trusted on first use", or, for an entry
// whose hashes are all of schemes tflock cannot compute, "not verified:
// ..."; a module whose location names another subdirectory than its lock
// says so), EventLockChanged for each change to the lock file (Detail:
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
	// One ls-remote per git repository for the whole run: its versions,
	// the refs of its calls and the commits fetched.
	ctx = source.WithRun(ctx)
	r := newRun(s)
	if err := r.walk(ctx); err != nil {
		return nil, err
	}
	reqs := r.requirements()
	var prefetch func(context.Context, resolve.ProviderPick)
	if s.ProvidersLock {
		// Ask for each provider's checksums as soon as its version is
		// known, instead of after every provider is listed: the slowest
		// listing then delays only its own provider. The answer is
		// remembered (r.memo) for lockProvider; a failure is reported
		// there.
		prefetch = func(ctx context.Context, p resolve.ProviderPick) {
			_, _ = r.checksums(ctx, r.firstPlatform(p))
		}
	}
	sel, err := resolve.Resolve(ctx, reqs, r.lister, r.resolveOptions(prefetch))
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
	// The stages in ARCHITECTURE.md's order: fetch (the trust seam,
	// package by package), record (the new lock file and its changes, and
	// a read-only run's verdict on them), install.
	r.announce(ctx, sel)
	fetched, err := r.fetchProviders(ctx, sel)
	if err != nil {
		return nil, err
	}
	res, provs, err := r.lockSelection(sel, fetched, sel.Apply)
	if err != nil {
		return nil, err
	}
	if s.ReadOnly && len(res.Changes) > 0 {
		refused, warnings := readOnlyVerdict(r.prev, res.Changes, s.words)
		if len(refused) > 0 {
			return nil, &LockChangedError{Changes: refused, Remedy: Remedy{Kind: RemedyWritable, Modules: changesModules(refused)}, words: &s.words}
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
	// The configuration first, all or nothing: a rewrite that fails
	// installs nothing, and an install that fails puts the sources back,
	// so that modules.json and the lock file never claim a source the
	// configuration does not hold.
	rewritten, undo, err := r.applyManagedRefs(ctx, edits)
	if err != nil {
		return nil, err
	}
	installed, err := r.install(ctx, provs)
	if err != nil {
		return nil, errors.Join(err, undo())
	}
	res.Providers, res.Rewritten = installed, rewritten
	return res, nil
}

// newRun starts the state of one run (an Init, or a [LockProvider] or
// [LockModule] call).
func newRun(s *settings) *run {
	// A module the cache remembers fetching without the run's hashes is
	// served only to runs of the same source (cache.Cache.ForSource).
	s.Cache = s.Cache.ForSource(s.Source)
	r := &run{s: s, prev: s.Resolve.Lock, locked: s.Resolve.Lock, memo: source.Memoize(s.Source), fetched: map[string]*moduleFetch{}, calls: map[string]*config.ModuleCall{}}
	if !s.noDir {
		r.readInstalledModules()
	}
	for _, d := range s.Resolve.Lock.Warnings() {
		r.warnings = append(r.warnings, diagnosticText(d))
	}
	r.lister = &runLister{r: r}
	r.downloadSlots = make(chan struct{}, s.DownloadConcurrency)
	return r
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
	calls     map[string]*config.ModuleCall // every module call by path
	fetched   map[string]*moduleFetch       // remote module calls by path
	downloads int
	warnings  []string
	installed map[string]hash.Hash // installedMatch's answers: the h1: of each installed package ("" if none)
	// installedMods are installedModule's answers by call and version.
	installedMods map[string]*moduleFetch
	// lockUpdates are the hashes of each provider fetched for install,
	// for the incomplete lock warning (see incompleteWarning).
	lockUpdates map[tfaddr.Provider]*lockUpdate
}

// resolveOptions are the options of every [resolve.Resolve] call of the
// run, the one hand-over of [Options.Resolve] to the solver: the caller's
// options as normalized by [Options.common] (a nil Lock read from the
// directory, DefaultHost's default per flavour) and [Options.normalize]
// (Concurrency's default), with, set here, Lock the file the run treats
// as locked (the previous lock file plus the calls adopted from the
// previous install), TranslatePredecessor decided by the flavour,
// UpgradeCommand the upgrade command of the run's words ([Options.Words])
// and, when own is not nil, own called for each provider pick after the
// caller's ProviderPicked. The other fields reach the solver unchanged.
func (r *run) resolveOptions(own func(context.Context, resolve.ProviderPick)) resolve.Options {
	o := r.s.Resolve
	o.Lock = r.locked
	o.TranslatePredecessor = r.s.translate
	o.UpgradeCommand = r.s.words.Upgrade
	if caller := o.ProviderPicked; own != nil && caller != nil {
		o.ProviderPicked = func(ctx context.Context, p resolve.ProviderPick) {
			caller(ctx, p)
			own(ctx, p)
		}
	} else if own != nil {
		o.ProviderPicked = own
	}
	return o
}

func (r *run) readOptions() config.ReadOptions {
	return r.s.Options.ReadOptions()
}

func (r *run) requirements() []resolve.Requirement {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.reqs)
	return append(out, r.s.Requirements...)
}
