package resolve

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	tfaddr "github.com/hashicorp/terraform-registry-address"
	"golang.org/x/sync/errgroup"

	"github.com/tflock/tflock/internal/provaddr"
	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/address"
)

// Options tunes [Resolve]. The zero value resolves from scratch: no lock
// file, no upgrade, nothing skipped.
type Options struct {
	// Lock holds the previous selections. Nil means no lock file.
	Lock *lockfile.File
	// Upgrade ignores every locked version: each package gets the newest
	// version its constraints allow. Default false.
	Upgrade bool
	// UpgradeProviders ignores the locked versions of these providers
	// only. Default: none.
	UpgradeProviders []tfaddr.Provider
	// UpgradeModules ignores the locked versions of these module calls and
	// of the calls nested in them ("vpc" also upgrades "vpc.subnets").
	// Default: none.
	UpgradeModules []string
	// DevOverrides lists providers that the CLI configuration's
	// dev_overrides block serves from a local directory: they are never
	// looked up and their lock entries are left as they are. Default: none.
	DevOverrides []tfaddr.Provider
	// Reattach is the value of TF_REATTACH_PROVIDERS: a JSON object keyed
	// by provider address. Those providers are unmanaged, and treated like
	// dev overrides. Default "" (none).
	Reattach string
	// DefaultHost is the registry host for addresses without one in
	// Reattach. Default [DefaultRegistryHost].
	DefaultHost string
	// TranslatePredecessor carries a locked version of
	// registry.terraform.io/hashicorp/X over to
	// registry.opentofu.org/hashicorp/X when the lock file has no entry for
	// the latter, as OpenTofu 1.12 does, provided that version is listed
	// and allowed. Default false.
	TranslatePredecessor bool
	// UnifyModules makes every call of the same module source share one
	// version, chosen against the constraints of all of them. Default
	// false: each call is resolved on its own constraint.
	UnifyModules bool
	// Concurrency bounds how many packages are listed at the same time.
	// Listing is waiting on the network, not computing, so the bound is
	// high. If less than or equal to 0, a default (currently 64) is used.
	Concurrency int
	// ProviderPicked, if set, is called with each listed provider's pick as
	// soon as that provider's versions are known, so that a caller can
	// start work on it (asking for its checksums, say) while other
	// providers are still being listed. A provider's pick depends only on
	// its own requirements, versions and lock entry, so it is the pick the
	// returned Selection holds. It is not called for providers that are
	// not listed (built-in, dev overrides, unmanaged) nor for one whose
	// pick fails. It runs in the goroutine that listed the provider, so
	// calls overlap, each holds one of the Concurrency slots until it
	// returns, and Resolve returns after the last one has. It must not
	// modify the pick.
	ProviderPicked func(ctx context.Context, pick ProviderPick)
	// UpgradeCommand is the command a [*LockedMismatchError] advises, in
	// the words of the program that embeds the solver. Default "":
	// OpenTofu's, "tofu init -upgrade". (Init sets it from
	// install.Options.Words.)
	UpgradeCommand string
}

const defaultConcurrency = 64

// Resolve picks one version for every provider and one for every remote
// module call that reqs name, asking lister which versions exist.
//
// Providers: every requirement on a provider, wherever in the module tree
// and the state it comes from, constrains one shared version: the newest
// listed version that all constraints allow. A version in opts.Lock is
// kept if every constraint still allows it, unless an upgrade is asked; a
// locked version a constraint now forbids is a [*LockedMismatchError].
// Version 0.0.0 is never picked, as in OpenTofu. Built-in providers are
// never looked up and reject constraints ([*BuiltinConstraintError]);
// a built-in name other than "terraform" is an [*UnknownBuiltinError].
// Dev overrides and unmanaged providers are skipped.
//
// Modules: each call is resolved on its own constraint (see
// Options.UnifyModules). A pick from the listed versions gets the tag and,
// unless the lock file's version is kept, the commit or digest the lister
// reported for it ([ModulePick].Tag, Package.Pin). When a git or OCI
// module's constraint matches no tag, the [*NoMatchError] lists the tags
// seen. A call pinned by its source string, or a remote
// module other than a registry module without a version constraint, is
// passed through with reason [Pinned].
//
// Resolve asks the lister about each package at most once, concurrently
// across packages; it asks about locked packages too, so that a locked
// version the source no longer offers is reported
// ([*LockedUnavailableError]) before anything is fetched. It returns every problem it finds, joined
// (errors.Join); match them with errors.As.
func Resolve(ctx context.Context, reqs []Requirement, lister source.Lister, opts Options) (*Selection, error) {
	unmanaged, overridden, err := unmanagedProviders(opts)
	if err != nil {
		return nil, err
	}
	lock := viewLock(opts.Lock)
	provReqs, modReqs, err := groupRequirements(reqs)
	if err != nil {
		return nil, err
	}
	plan, err := planListing(provReqs, modReqs, unmanaged)
	if err != nil {
		return nil, err
	}
	for _, rs := range provReqs {
		sortRequirements(rs)
	}
	onListed, early := earlyPicks(provReqs, lock, opts)
	listed, err := listAll(ctx, lister, plan.toList, cmp.Or(max(opts.Concurrency, 0), defaultConcurrency), onListed)
	if err != nil {
		return nil, err
	}
	sel := &Selection{}
	var errs []error
	sel.Providers, errs = pickProviders(provReqs, listed, early, lock, unmanaged, overridden, opts)
	modules, modErrs := pickModules(plan, modReqs, listed, lock, opts)
	sel.Modules, errs = modules, append(errs, modErrs...)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return sel, nil
}

// unmanagedProviders returns the providers that opts takes out of the
// lock's hands: the dev overrides and the reattached providers (unmanaged),
// and of those the ones that stay dev overrides (overridden).
func unmanagedProviders(opts Options) (unmanaged, overridden map[tfaddr.Provider]bool, err error) {
	unmanaged, overridden = map[tfaddr.Provider]bool{}, map[tfaddr.Provider]bool{}
	for _, p := range opts.DevOverrides {
		unmanaged[p], overridden[p] = true, true
	}
	if opts.Reattach != "" {
		host := cmp.Or(opts.DefaultHost, DefaultRegistryHost)
		ps, err := ParseReattach(opts.Reattach, host)
		if err != nil {
			return nil, nil, err
		}
		for _, p := range ps {
			// A reattached provider takes precedence over a dev
			// override, as in OpenTofu.
			unmanaged[p], overridden[p] = true, false
		}
	}
	return unmanaged, overridden, nil
}

// groupRequirements groups the requirements by provider address and by
// module call path, refusing a requirement without its package.
func groupRequirements(reqs []Requirement) (map[tfaddr.Provider][]Requirement, map[string][]Requirement, error) {
	provReqs := map[tfaddr.Provider][]Requirement{}
	modReqs := map[string][]Requirement{}
	for i, r := range reqs {
		switch p := r.Package.(type) {
		case source.ProviderPackage:
			if p.Addr.IsZero() {
				return nil, nil, fmt.Errorf("requirement %d (%s): provider package without an address", i, r.Origin)
			}
			provReqs[p.Addr] = append(provReqs[p.Addr], r)
		case source.ModulePackage:
			if r.Call == "" || p.Source == "" {
				return nil, nil, fmt.Errorf("requirement %d (%s): module requirement without a call path or source", i, r.Origin)
			}
			modReqs[r.Call] = append(modReqs[r.Call], r)
		default:
			return nil, nil, fmt.Errorf("requirement %d (%s): no package", i, r.Origin)
		}
	}
	return provReqs, modReqs, nil
}

// listingPlan is what Resolve asks the lister about, and the module
// calls it picks.
type listingPlan struct {
	toList      []source.Package                // sorted
	calls       map[string]source.ModulePackage // by call path
	listedCalls map[string]bool                 // calls resolved from the listed versions
}

// planListing decides which packages to list: every managed provider that
// is not built in, and the module sources of the calls resolved from
// listed versions. It refuses a module call whose requirements name
// different sources.
func planListing(provReqs map[tfaddr.Provider][]Requirement, modReqs map[string][]Requirement, unmanaged map[tfaddr.Provider]bool) (listingPlan, error) {
	plan := listingPlan{calls: map[string]source.ModulePackage{}, listedCalls: map[string]bool{}}
	for addr := range provReqs {
		if !provaddr.IsBuiltIn(addr) && !unmanaged[addr] {
			plan.toList = append(plan.toList, source.ProviderPackage{Addr: addr})
		}
	}
	var errs []error
	// Whether a call is resolved from the listed versions is decided per
	// call: two calls of one repository, one constrained and one pinned by
	// its source, each get their own pick.
	listedSources := map[string]bool{}
	for call, rs := range modReqs {
		pkg := rs[0].Package.(source.ModulePackage)
		for _, r := range rs[1:] {
			if q := r.Package.(source.ModulePackage); !samePackage(q, pkg) || r.LockSource != rs[0].LockSource {
				errs = append(errs, fmt.Errorf("module %q: conflicting sources %s (%s) and %s (%s)", call, pkg.ForDisplay(), rs[0].Origin, q.ForDisplay(), r.Origin))
			}
		}
		plan.calls[call] = pkg
		if !ModuleCallListed(rs) {
			continue
		}
		plan.listedCalls[call] = true
		if !listedSources[pkg.Source] {
			listedSources[pkg.Source] = true
			plan.toList = append(plan.toList, source.ModulePackage{Source: pkg.Source, Addr: pkg.Addr})
		}
	}
	if len(errs) > 0 {
		return listingPlan{}, errors.Join(errs...)
	}
	sortByString(plan.toList)
	return plan, nil
}

// earlyPicks returns, with opts.ProviderPicked set, the listing callback
// that picks each provider as soon as it is listed and reports the pick,
// and the map of those picks, which the Selection then holds; without
// it, nil and an empty map. The map is complete once listing returns.
func earlyPicks(provReqs map[tfaddr.Provider][]Requirement, lock lockView, opts Options) (func(context.Context, source.Package, listResult), map[tfaddr.Provider]ProviderPick) {
	early := map[tfaddr.Provider]ProviderPick{}
	if opts.ProviderPicked == nil {
		return nil, early
	}
	var mu sync.Mutex
	return func(ctx context.Context, pkg source.Package, l listResult) {
		p, ok := pkg.(source.ProviderPackage)
		if !ok {
			return
		}
		one := map[string]listResult{pkg.String(): l}
		pick, err := pickProvider(p.Addr, provReqs[p.Addr], one, lock, false, opts)
		if err != nil {
			return // reported by the pick after listing
		}
		mu.Lock()
		early[p.Addr] = pick
		mu.Unlock()
		opts.ProviderPicked(ctx, pick)
	}, early
}

// pickProviders picks a version of each required provider, in address
// order, taking the picks made early as they are.
func pickProviders(provReqs map[tfaddr.Provider][]Requirement, listed map[string]listResult, early map[tfaddr.Provider]ProviderPick, lock lockView, unmanaged, overridden map[tfaddr.Provider]bool, opts Options) ([]ProviderPick, []error) {
	addrs := make([]tfaddr.Provider, 0, len(provReqs))
	for a := range provReqs {
		addrs = append(addrs, a)
	}
	sortByString(addrs)
	var picks []ProviderPick
	var errs []error
	for _, addr := range addrs {
		if pick, ok := early[addr]; ok {
			picks = append(picks, pick)
			continue
		}
		pick, err := pickProvider(addr, provReqs[addr], listed, lock, unmanaged[addr], opts)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		pick.DevOverride = pick.Reason == Unmanaged && overridden[addr]
		picks = append(picks, pick)
	}
	return picks, errs
}

// pickModules picks the version of each module call, in call path order:
// a call pinned by its source is passed through, the others are picked
// from the listed versions (alone, or with opts.UnifyModules one version
// for all the calls of a source).
func pickModules(plan listingPlan, modReqs map[string][]Requirement, listed map[string]listResult, lock lockView, opts Options) ([]ModulePick, []error) {
	callNames := make([]string, 0, len(plan.calls))
	for c := range plan.calls {
		callNames = append(callNames, c)
		sortRequirements(modReqs[c])
	}
	slices.Sort(callNames)
	var picks []ModulePick
	var errs []error
	unified := map[string]*unifiedPick{}
	for _, call := range callNames {
		pkg, rs := plan.calls[call], modReqs[call]
		pick := ModulePick{Call: call, Package: pkg, LockSource: cmp.Or(rs[0].LockSource, address.StripCredentials(pkg.Source)), Requirements: rs, Constraints: intersect(rs)}
		if !plan.listedCalls[call] {
			pick.Reason = Pinned
			picks = append(picks, pick)
			continue
		}
		l := listed[source.ModulePackage{Source: pkg.Source}.String()]
		if l.err != nil {
			errs = append(errs, packageError(source.ModulePackage{Source: pkg.Source}, rs, l.err))
			continue
		}
		if opts.UnifyModules {
			u := unified[pkg.Source]
			if u == nil {
				u = unifyModule(pkg.Source, callNames, plan.calls, plan.listedCalls, modReqs, l, lock, opts)
				unified[pkg.Source] = u
				if u.err != nil {
					errs = append(errs, u.err)
				}
			}
			if u.err != nil {
				continue
			}
			pick.Package.Version = u.version
			pick.Constraints = u.constraints
			pick.Requirements = u.reqs
			pick.Reason = u.reason
			pick.Locked = lock.lockedVersion(call, pkg, pick.LockSource)
			pick.Available = len(l.versions)
			l.setListed(&pick)
			picks = append(picks, pick)
			continue
		}
		if err := pickModule(&pick, l, lock, opts); err != nil {
			errs = append(errs, err)
			continue
		}
		picks = append(picks, pick)
	}
	return picks, errs
}

// ModuleCallListed reports whether [Resolve] picks a version for the
// module call that rs (the requirements of one call, which name one
// package) state, from the versions its source lists: the call is not
// pinned by a ref, tag or digest in its source, and is either constrained
// or a registry module (where no constraint means the newest version).
// Other calls pass through with reason [Pinned]. It is decided per call,
// never per repository.
func ModuleCallListed(rs []Requirement) bool {
	if len(rs) == 0 {
		return false
	}
	pkg, ok := rs[0].Package.(source.ModulePackage)
	if !ok || pkg.Ref != "" {
		return false
	}
	kind := ModuleSourceRemote // as ClassifyModuleSource: what does not parse
	if ms, err := pkg.Address(); err == nil {
		kind = ClassifyModuleAddress(ms)
	}
	switch kind {
	case ModuleSourceLocal:
		return false
	case ModuleSourceRegistry:
		return true
	}
	return !intersect(rs).IsZero()
}

type listResult struct {
	versions []versions.Version // ascending, no duplicates
	// listed holds, per version, the first entry the lister reported for
	// it: its origin name (Ref) and identity (Pin).
	listed map[versions.Version]source.Available
	err    error
}

// tags returns the names vs are published under at the origin: each
// version's Ref when the lister reported one, else the version itself.
func (l listResult) tags(vs []versions.Version) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = cmp.Or(l.listed[v].Ref, v.String())
	}
	return out
}

// setListed copies what the lister reported about the picked version into
// pick: its origin name (Tag) always, its identity (Package.Pin) unless the
// pick keeps the lock file's version, whose recorded commit or digest the
// installer uses instead.
func (l listResult) setListed(pick *ModulePick) {
	a := l.listed[pick.Package.Version]
	pick.Tag = a.Ref
	if pick.Reason != Locked {
		pick.Package.Pin = a.Pin
	}
}

// listAll asks lister about every package once, with at most limit calls in
// flight. Results are keyed by Package.String(). onListed, if not nil, is
// called with each result as soon as it is known.
func listAll(ctx context.Context, lister source.Lister, pkgs []source.Package, limit int, onListed func(context.Context, source.Package, listResult)) (map[string]listResult, error) {
	out := make(map[string]listResult, len(pkgs))
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(limit)
	for _, pkg := range pkgs {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			av, err := lister.Versions(gctx, pkg)
			var r listResult
			if err != nil {
				r.err = err
			} else {
				r.listed = make(map[versions.Version]source.Available, len(av))
				for _, a := range av {
					if _, dup := r.listed[a.Version]; a.Version.IsZero() || dup {
						continue
					}
					r.listed[a.Version] = a
					r.versions = append(r.versions, a.Version)
				}
				versions.Sort(r.versions)
				if onListed != nil {
					onListed(gctx, pkg, r)
				}
			}
			mu.Lock()
			out[pkg.String()] = r
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// packageError turns a lister error into the solver's typed error.
func packageError(pkg source.Package, rs []Requirement, err error) error {
	if errors.Is(err, source.ErrNotFound) {
		return &UnknownPackageError{Package: pkg, Requirements: rs, Err: err}
	}
	return &ListError{Package: pkg, Err: err}
}

// intersect returns the intersection of the requirements' constraints.
func intersect(rs []Requirement) versions.Constraints {
	var cs []versions.Constraints
	for _, r := range rs {
		if !r.Constraints.IsZero() {
			cs = append(cs, r.Constraints)
		}
	}
	if len(cs) == 0 {
		return versions.Constraints{}
	}
	return versions.Intersect(cs...)
}

// noVersionError explains why nothing in vs satisfies c: the package has no
// versions, one constraint alone matches nothing, or constraints conflict.
// tags, for a module whose versions are tags (git, OCI), are the names vs
// are published under; nil otherwise.
func noVersionError(pkg source.Package, call string, rs []Requirement, vs []versions.Version, tags []string) error {
	if len(vs) == 0 {
		return &NoVersionsError{Package: pkg, Requirements: rs}
	}
	var constrained []Requirement
	for _, r := range rs {
		if !r.Constraints.IsZero() {
			constrained = append(constrained, r)
		}
	}
	for _, r := range constrained {
		if _, ok := versions.Newest(vs, r.Constraints); !ok {
			return &NoMatchError{Package: pkg, Call: call, Requirement: r, Available: vs, Tags: tags}
		}
	}
	if len(constrained) == 0 {
		// Only pre-releases exist, and nothing asks for one.
		return &NoMatchError{Package: pkg, Call: call, Requirement: rs[0], Available: vs, Tags: tags}
	}
	return &ConflictError{Package: pkg, Call: call, Requirements: constrained, Available: vs}
}

func pickProvider(addr tfaddr.Provider, rs []Requirement, listed map[string]listResult, lock lockView, unmanaged bool, opts Options) (ProviderPick, error) {
	pick := ProviderPick{Addr: addr, Requirements: rs, Constraints: intersect(rs)}
	pkg := source.ProviderPackage{Addr: addr}
	switch {
	case provaddr.IsBuiltIn(addr):
		if addr.Type != builtinTerraform {
			return pick, &UnknownBuiltinError{Provider: addr, Requirements: rs}
		}
		for _, r := range rs {
			if !r.Constraints.IsZero() {
				return pick, &BuiltinConstraintError{Provider: addr, Requirement: r}
			}
		}
		pick.Reason = Builtin
		return pick, nil
	case unmanaged:
		pick.Reason = Unmanaged
		pick.Locked = lock.providers[addr]
		return pick, nil
	}
	l := listed[pkg.String()]
	if l.err != nil {
		return pick, packageError(pkg, rs, l.err)
	}
	// OpenTofu never selects 0.0.0 (go-versions puts it in no constrained
	// set, and MeetingConstraints is never unconstrained), even when no
	// constraint is given or the lock file holds it.
	vs := slices.DeleteFunc(slices.Clone(l.versions), func(v versions.Version) bool { return v == unspecified })
	pick.Available = len(vs)
	allows := func(v versions.Version) bool { return v != unspecified && pick.Constraints.Allows(v) }
	upgrade := opts.Upgrade || slices.Contains(opts.UpgradeProviders, addr)
	locked, ok := lock.providers[addr]
	pick.Locked = locked
	if !upgrade && ok {
		if !allows(locked) {
			return pick, &LockedMismatchError{Provider: addr, Locked: locked, Constraints: pick.Constraints, Requirements: rs, UpgradeCommand: opts.UpgradeCommand}
		}
		if !slices.Contains(vs, locked) {
			return pick, &LockedUnavailableError{Package: pkg, Locked: locked, Available: vs}
		}
		pick.Version, pick.Reason = locked, Locked
		return pick, nil
	}
	if !upgrade && !ok && opts.TranslatePredecessor {
		if pred, isPred := Predecessor(addr); isPred {
			if v, ok := lock.providers[pred]; ok && allows(v) && slices.Contains(vs, v) {
				pick.Version, pick.Reason, pick.Locked = v, Translated, v
				return pick, nil
			}
		}
	}
	v, found := versions.Newest(vs, pick.Constraints)
	if !found {
		// The error lists what the source offers, 0.0.0 included.
		return pick, noVersionError(pkg, "", rs, l.versions, nil)
	}
	pick.Version, pick.Reason = v, Newest
	if upgrade {
		pick.Reason = Upgraded
	}
	return pick, nil
}

// builtinTerraform is the only built-in provider type OpenTofu has:
// terraform.io/builtin/terraform.
const builtinTerraform = "terraform"

// unspecified is version 0.0.0, which OpenTofu never selects for a
// provider.
var unspecified = versions.MustParse("0.0.0")

// Predecessor returns registry.terraform.io/hashicorp/X for
// registry.opentofu.org/hashicorp/X, the address whose lock entry
// [Options.TranslatePredecessor] carries over; false for any other
// address.
func Predecessor(addr tfaddr.Provider) (tfaddr.Provider, bool) {
	if addr.Hostname.ForDisplay() != DefaultRegistryHost || addr.Namespace != "hashicorp" {
		return tfaddr.Provider{}, false
	}
	p := addr
	p.Hostname = tfaddr.DefaultProviderRegistryHost
	return p, true
}

func upgradeModule(call string, opts Options) bool {
	if opts.Upgrade {
		return true
	}
	for _, u := range opts.UpgradeModules {
		if call == u || strings.HasPrefix(call, u+".") {
			return true
		}
	}
	return false
}

func pickModule(pick *ModulePick, l listResult, lock lockView, opts Options) error {
	vs := l.versions
	pick.Available = len(vs)
	pkg := source.ModulePackage{Source: pick.Package.Source, Addr: pick.Package.Addr}
	upgrade := upgradeModule(pick.Call, opts)
	_, ok := lock.modules[pick.Call]
	locked := lock.lockedVersion(pick.Call, pick.Package, pick.LockSource)
	pick.Locked = locked
	if !upgrade && !locked.IsZero() && pick.Constraints.Allows(locked) {
		if !slices.Contains(vs, locked) {
			return &LockedUnavailableError{Package: pkg, Call: pick.Call, Locked: locked, Available: vs}
		}
		pick.Package.Version, pick.Reason = locked, Locked
		l.setListed(pick)
		return nil
	}
	v, found := versions.Newest(vs, pick.Constraints)
	if !found {
		return noVersionError(pkg, pick.Call, pick.Requirements, vs, tagsOf(pkg, l))
	}
	pick.Package.Version = v
	switch {
	case upgrade:
		pick.Reason = Upgraded
	case ok:
		pick.Reason = Relocked
	default:
		pick.Reason = Newest
	}
	l.setListed(pick)
	return nil
}

// tagsOf returns the tag names l holds when pkg is a module whose versions
// are tags (a git repository or an OCI repository), else nil.
func tagsOf(pkg source.ModulePackage, l listResult) []string {
	if !tagged(pkg) {
		return nil
	}
	return l.tags(l.versions)
}

type unifiedPick struct {
	version     versions.Version
	constraints versions.Constraints
	reqs        []Requirement
	reason      Reason
	err         error
}

// unifyModule chooses one version for every listed call of src.
func unifyModule(src string, callNames []string, calls map[string]source.ModulePackage, listedCalls map[string]bool, modReqs map[string][]Requirement, l listResult, lock lockView, opts Options) *unifiedPick {
	vs := l.versions
	u := &unifiedPick{}
	var group []string
	for _, c := range callNames {
		if calls[c].Source == src && listedCalls[c] {
			group = append(group, c)
			u.reqs = append(u.reqs, modReqs[c]...)
		}
	}
	sortRequirements(u.reqs)
	u.constraints = intersect(u.reqs)
	upgrade := false
	var locked versions.Version
	allLocked := true
	for _, c := range group {
		upgrade = upgrade || upgradeModule(c, opts)
		lv := lock.lockedVersion(c, calls[c], modReqs[c][0].LockSource)
		if lv.IsZero() || (!locked.IsZero() && lv != locked) {
			allLocked = false
			continue
		}
		locked = lv
	}
	if !upgrade && allLocked && !locked.IsZero() && u.constraints.Allows(locked) && slices.Contains(vs, locked) {
		u.version, u.reason = locked, Locked
		return u
	}
	v, found := versions.Newest(vs, u.constraints)
	if !found {
		family := source.ModulePackage{Source: src}
		if len(group) > 0 {
			family.Addr = calls[group[0]].Addr
		}
		u.err = noVersionError(family, "", u.reqs, vs, tagsOf(family, l))
		return u
	}
	u.version = v
	switch {
	case upgrade:
		u.reason = Upgraded
	case !locked.IsZero():
		u.reason = Relocked
	default:
		u.reason = Newest
	}
	return u
}

// sortByString sorts xs by their String forms, computing each form once:
// a provider address's String converts its host name for display, which
// costs more than the comparisons a sort makes.
func sortByString[T fmt.Stringer](xs []T) {
	type keyed struct {
		key string
		x   T
	}
	ks := make([]keyed, len(xs))
	for i, x := range xs {
		ks[i] = keyed{x.String(), x}
	}
	slices.SortFunc(ks, func(a, b keyed) int { return strings.Compare(a.key, b.key) })
	for i, k := range ks {
		xs[i] = k.x
	}
}

// samePackage reports whether two module packages are the same: Addr,
// the typed form of Source, is set by some callers and not by others.
func samePackage(a, b source.ModulePackage) bool {
	a.Addr, b.Addr = nil, nil
	return a == b
}
