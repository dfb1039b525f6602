package install

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/internal/provaddr"
	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/config"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/providercache"
)

// CheckOptions are Check's settings: only what Check reads. A
// configuration, a lock file and an install directory are read the same
// way by Check and by Init (directories, platform, the lock file as read
// leniently, its flavour and default registry host, the state's
// requirements): Check normalizes these options as Init normalizes the
// fields of [Options] of the same names. To check what an Init installed,
// pass its options' [Options.ForCheck].
type CheckOptions struct {
	// Dir is the root module's directory. Default ".".
	Dir string
	// FS, when set, holds the root module's configuration, read from FS's
	// root instead of Dir, as [Options.FS]. Default nil: read Dir.
	FS fs.FS
	// Config, when set, is the root module tree the caller already read,
	// as [Options.Config]; it takes precedence over FS.
	Config *config.Config
	// InstallDir is where Init installed the packages. Default
	// Dir/.terraform.
	InstallDir string
	// Platform is the platform whose installed provider packages are
	// checked. Default [source.CurrentPlatform].
	Platform source.Platform
	// Lock is the lock file to check against. Nil: DIR/.terraform.lock.hcl
	// read leniently, as Init reads it (a missing file is an empty lock
	// file).
	Lock *lockfile.File
	// Requirements are extra requirements, such as the providers a state
	// still uses ([config.StateRequirements]). Default none.
	Requirements []resolve.Requirement
	// StateFile is a state file whose providers stay required, as
	// [Options.StateFile]. Default "": no state is read.
	StateFile string
	// Variables are the root module's input variable values for the
	// early evaluation of module sources and versions, as
	// [Options.Variables].
	Variables config.Variables
	// Flavor is the tool whose lock file this is, as [Options.Flavor].
	// [FlavorTerraform] reads addresses without a host as
	// registry.terraform.io. Default [FlavorAuto].
	Flavor Flavor
	// DevOverrides are providers served from local directories (see
	// [github.com/tflock/tflock/source/assemble.Sources.DevOverrides]): neither required in the lock file nor
	// checked, as in OpenTofu.
	DevOverrides []tfaddr.Provider
	// Reattach is the value of TF_REATTACH_PROVIDERS (Check does not read
	// the environment): those providers are neither required in the lock
	// file nor checked. An invalid value fails Check with a
	// [*resolve.ReattachError].
	Reattach string
	// DefaultHost is the registry host of every address without one, as
	// [Options.Resolve]'s DefaultHost for Init. Default
	// [address.DefaultRegistryHost], or [TerraformRegistryHost] when
	// Flavor is [FlavorTerraform].
	DefaultHost string
	// Words are the program's name and commands in the remedies of
	// Check's errors, problems and warnings, as [Options.Words]. Default
	// nil: the flavour's ([WordsFor]).
	Words *Words
}

// ForCheck returns the options with which [Check] checks what Init with
// these options installed: the fields of CheckOptions taken from the
// fields of o of the same names (Lock, DevOverrides, Reattach and
// DefaultHost from o.Resolve).
func (o Options) ForCheck() CheckOptions {
	return CheckOptions{
		Dir:          o.Dir,
		FS:           o.FS,
		Config:       o.Config,
		InstallDir:   o.InstallDir,
		Platform:     o.Platform,
		Lock:         o.Resolve.Lock,
		Requirements: o.Requirements,
		StateFile:    o.StateFile,
		Variables:    o.Variables,
		Flavor:       o.Flavor,
		DevOverrides: o.Resolve.DevOverrides,
		Reattach:     o.Resolve.Reattach,
		DefaultHost:  o.Resolve.DefaultHost,
		Words:        o.Words,
	}
}

// options are the [Options] whose common settings are Check's: Check's
// options are normalized by [Options.common], as Init's, and never
// differently.
func (o CheckOptions) options() Options {
	return Options{
		Dir:          o.Dir,
		FS:           o.FS,
		Config:       o.Config,
		InstallDir:   o.InstallDir,
		Platform:     o.Platform,
		Requirements: o.Requirements,
		StateFile:    o.StateFile,
		Variables:    o.Variables,
		Flavor:       o.Flavor,
		Words:        o.Words,
		Resolve: resolve.Options{
			Lock:         o.Lock,
			DevOverrides: o.DevOverrides,
			Reattach:     o.Reattach,
			DefaultHost:  o.DefaultHost,
		},
	}
}

// CheckedProvider is a selected provider's installed package.
type CheckedProvider struct {
	// Package is the provider package: its address, version and platform.
	Package source.ProviderPackage
	// Dir is the installed package directory.
	Dir string
	// Executable is the provider's executable inside Dir.
	Executable string
}

// CheckResult is what [Check] found usable, and what it found wrong.
type CheckResult struct {
	// Providers are the selected providers whose installed package matches
	// the lock file, sorted by address.
	Providers []CheckedProvider
	// Problems are every problem found, typed: the requirements the lock
	// file does not satisfy (sorted by message, as OpenTofu lists them),
	// then the providers not installed or not matching the lock file (by
	// address). Check's error reports the same problems.
	Problems []Problem
	// Warnings are messages for the user, such as
	// [ModulesNotLockedWarning].
	Warnings []string
}

// ProblemKind says what a [Problem] is.
type ProblemKind int

// The kinds of [Problem]. New kinds may be added.
const (
	// ProblemNotSelected: the configuration requires the package but the
	// lock file selects no version of it (for a module call: no entry, or
	// an entry of another source; for a call pinned by its source, "not
	// locked").
	ProblemNotSelected ProblemKind = iota + 1
	// ProblemConstraintsChanged: the configuration's version constraints
	// no longer allow the locked version.
	ProblemConstraintsChanged
	// ProblemLockEdited: the locked version does not satisfy the
	// constraints the lock file itself records, which are the
	// configuration's: the lock file was edited by hand.
	ProblemLockEdited
	// ProblemPinChanged: the module call's source pins a git ref, an OCI
	// tag or digest other than the one the lock file records.
	ProblemPinChanged
	// ProblemNotInstalled: the selected provider has no package installed
	// for the platform. Err is a [*NotInstalledError].
	ProblemNotInstalled
	// ProblemPackageMismatch: the installed provider package matches none
	// of the lock file's checksums. Err is a [*PackageMismatchError].
	ProblemPackageMismatch
	// ProblemNoExecutable: the installed provider package has no
	// executable. Err says why.
	ProblemNoExecutable
	// ProblemManagedRef: the git ref or OCI tag of a module call that
	// tflock manages ([config.AnnotationPrefix]) does not name the
	// locked version, so tofu would install another one; Init rewrites
	// it.
	ProblemManagedRef
	// ProblemModuleNotInstalled: a remote module call has no module
	// installed (no record in modules.json, or its directory is
	// missing); tofu reports it as "Module not installed". Err is a
	// [*ModuleNotInstalledError].
	ProblemModuleNotInstalled
	// ProblemModuleMismatch: the installed module is not the one the
	// lock file locks: its package does not hash to a recorded h1:, it
	// was installed from another subdirectory, at another version or
	// commit. Err is a [*ModuleMismatchError].
	ProblemModuleMismatch
)

var problemKindNames = [...]string{
	ProblemNotSelected:        "not selected",
	ProblemConstraintsChanged: "constraints changed",
	ProblemLockEdited:         "lock file edited",
	ProblemPinChanged:         "pin changed",
	ProblemNotInstalled:       "not installed",
	ProblemPackageMismatch:    "package mismatch",
	ProblemNoExecutable:       "no executable",
	ProblemManagedRef:         "managed ref out of date",
	ProblemModuleNotInstalled: "module not installed",
	ProblemModuleMismatch:     "module mismatch",
}

// remedy is the kind of remedy for a problem of kind k.
func (k ProblemKind) remedy() RemedyKind {
	switch k {
	case ProblemConstraintsChanged, ProblemLockEdited:
		return RemedyUpgrade
	case ProblemManagedRef:
		return RemedyEditSource
	}
	return RemedyInit
}

// String returns a short lower-case name for the kind.
func (k ProblemKind) String() string {
	if k > 0 && int(k) < len(problemKindNames) {
		return problemKindNames[k]
	}
	return "unknown problem"
}

// Problem is one thing [Check] found wrong.
type Problem struct {
	// Kind says what is wrong.
	Kind ProblemKind
	// Package is the package concerned: a [source.ProviderPackage] (Addr;
	// Version when one is locked; Platform for the installation kinds) or
	// a [source.ModulePackage] (Source; Version when one is locked).
	Package source.Package
	// Call is the module call path for a module, else "".
	Call string
	// Range is where the configuration states the requirement concerned
	// (file, line, column), for the lock file kinds; the zero range when
	// unknown (a requirement given in [CheckOptions.Requirements] without
	// an origin, and the installation kinds).
	Range hcl.Range
	// Constraints are the configuration's version constraints on the
	// package, for the lock file kinds.
	Constraints versions.Constraints
	// Message is the problem as the error prints it: for the lock file
	// kinds, the line of OpenTofu's "Inconsistent dependency lock file"
	// list, such as "provider registry.example.test/acme/cloud:
	// required by this configuration but no version is selected".
	Message string
	// Err is the error of the installation kinds, else nil.
	Err error
	// Remedy is what to do, for this package or call: [RemedyInit] for
	// what is not selected, locked or installed as the lock file says,
	// [RemedyUpgrade] for constraints that no longer allow the locked
	// version, [RemedyEditSource] for [ProblemManagedRef].
	Remedy Remedy
}

// String returns Message.
func (p Problem) String() string { return p.Message }

// Check is the read side of Init, for what runs after it (plan, apply): it
// reads the configuration (the root module, its local modules and the
// remote modules that modules.json lists as installed) and checks it
// against the lock file and the install directory.
//
// Requirements with no locked version, or a locked version that their
// constraints no longer allow, give an [*InconsistentLockError] (OpenTofu's
// "Inconsistent dependency lock file"). A lock file that records no module
// at all has not adopted module locking: its module calls are not checked,
// and [CheckResult.Warnings] holds [ModulesNotLockedWarning] once. Each selected provider must be
// installed for the platform ([*NotInstalledError]) and match a checksum of
// the lock file ([*PackageMismatchError]). Each remote module call must be
// installed ([*ModuleNotInstalledError], tofu's "Module not installed":
// no record in modules.json, or its directory missing) and, when the lock
// file has a module lock that applies to it, be the module that lock
// names ([*ModuleMismatchError]): its package hashes to one of the lock's
// h1: hashes, it is installed from the subdirectory the lock binds (the
// location's "subdir", then the call's own), at the locked version, and a
// git checkout at the locked commit; a module lock that records no hash
// tflock can check (only h9:, or none) binds nothing and is a
// [*ModuleMismatchError] too, as a read-only Init refuses it. A local module call that
// modules.json records must be recorded in the directory its source names
// (tofu loads a local module from its record too), which inside a remote
// package must be one that package's hashes cover: not outside it, not in
// its version-control metadata ([*ModuleMismatchError]; whether the lock
// file records modules or not). The root module is read in place, as tofu
// reads it, whatever modules.json records for it. All problems are returned,
// joined, and listed typed in [CheckResult.Problems]; the result lists
// the providers that passed. errors.As finds the [*InconsistentLockError]
// (whose Problems are the lock file kinds) and each [*NotInstalledError]
// and [*PackageMismatchError] in the joined error.
func Check(ctx context.Context, copts CheckOptions) (*CheckResult, error) {
	s, err := copts.options().common()
	if err != nil {
		return nil, err
	}
	opts, lock := s.Options, s.Resolve.Lock
	tree := &installedTree{calls: callerIndex{}}
	reqs, err := checkRequirements(opts, tree)
	if err != nil {
		return nil, err
	}
	reqs = append(reqs, opts.Requirements...)

	initial := lockIsEmpty(lock)
	problems, unlockedModules := checkModuleLocks(reqs, lock, s.words)
	addrs, byAddr := lockedProviderRequirements(reqs, opts, s.reattached)
	res := &CheckResult{}
	if unlockedModules {
		res.Warnings = append(res.Warnings, modulesNotLockedWarning(s.words, RemedyInit))
	}
	var errs []error
	var installed []Problem
	pd := providercache.NewDir(filepath.Join(opts.InstallDir, "providers"))
	for _, addr := range addrs {
		pl, rs := lock.Provider(addr), byAddr[addr]
		if pr, ok := providerLockProblem(addr, rs, pl); ok {
			problems = append(problems, pr)
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pkg := source.ProviderPackage{Addr: addr, Version: pl.Version, Platform: opts.Platform}
		checked, kind, err := checkInstalledProvider(pd, pkg, pl)
		if err != nil {
			installProblem(&errs, &installed, kind, pkg, err)
			continue
		}
		res.Providers = append(res.Providers, checked)
	}
	skip := map[string]bool{}
	for _, p := range problems {
		if p.Call != "" {
			skip[p.Call] = true
		}
	}
	if err := checkModules(ctx, opts, &s.words, lock, tree, skip, &errs, &installed); err != nil {
		return nil, err
	}
	return res, finishCheck(res, problems, installed, errs, initial, &s.words)
}

// lockIsEmpty reports whether the lock file locks nothing: the run is a
// first one.
func lockIsEmpty(lock *lockfile.File) bool {
	for range lock.Providers() {
		return false
	}
	for range lock.Modules() {
		return false
	}
	return true
}

// checkModuleLocks returns the problems of the module requirements against
// the lock's module locks, in the order of reqs, and whether modules are
// required that the lock does not lock at all (it has no module locks).
func checkModuleLocks(reqs []resolve.Requirement, lock *lockfile.File, words Words) (problems []Problem, unlockedModules bool) {
	adopted := modulesAdopted(lock)
	for _, q := range reqs {
		p, ok := q.Package.(source.ModulePackage)
		if !ok {
			continue
		}
		if !adopted {
			unlockedModules = true
			continue
		}
		if pr, ok := moduleLockProblem(q, p, lock.Module(q.Call), words); ok {
			problems = append(problems, pr)
		}
	}
	return problems, unlockedModules
}

// moduleLockProblem returns the problem of module requirement q (of
// package p) against ml, the lock of its call (nil if none), if it has one.
func moduleLockProblem(q resolve.Requirement, p source.ModulePackage, ml *lockfile.ModuleLock, words Words) (Problem, bool) {
	pr := Problem{Package: source.ModulePackage{Source: p.Source, Addr: p.Addr}, Call: q.Call, Range: q.Origin.Range, Constraints: q.Constraints}
	switch {
	case (ml == nil || ml.Source != lockSource(q)) && p.Ref != "":
		pr.Kind, pr.Message = ProblemNotSelected, fmt.Sprintf("module %q: required by this configuration but not locked", q.Call)
	case ml == nil || ml.Source != lockSource(q):
		pr.Kind, pr.Message = ProblemNotSelected, fmt.Sprintf("module %q: required by this configuration but no version is selected", q.Call)
	case !resolve.ModuleLockApplies(ml, p, q.LockSource):
		pr.Package = lockedPackage(ml)
		pr.Kind, pr.Message = ProblemPinChanged, pinProblem(q.Call, resolve.WrittenPin(p), ml.Pin())
	case !ml.Version.IsZero() && !q.Constraints.Allows(ml.Version):
		pr.Package = lockedPackage(ml)
		pr.Kind, pr.Message = ProblemConstraintsChanged, fmt.Sprintf("module %q: locked version selection %s doesn't match the updated version constraints %q", q.Call, ml.Version, q.Constraints.String())
	case managedProblem(q, ml, words) != "":
		pr.Package = lockedPackage(ml)
		pr.Kind, pr.Message = ProblemManagedRef, managedProblem(q, ml, words)
	default:
		return Problem{}, false
	}
	return pr, true
}

// lockedProviderRequirements groups the provider requirements that the
// lock must lock by address, and returns those addresses sorted. Built-in
// providers, dev overrides and reattached providers are not locked
// (OpenTofu marks the last two "overridden" and skips them).
func lockedProviderRequirements(reqs []resolve.Requirement, opts Options, reattached []tfaddr.Provider) ([]tfaddr.Provider, map[tfaddr.Provider][]resolve.Requirement) {
	byAddr := map[tfaddr.Provider][]resolve.Requirement{}
	var addrs []tfaddr.Provider
	for _, q := range reqs {
		p, ok := q.Package.(source.ProviderPackage)
		if !ok {
			continue
		}
		if provaddr.IsBuiltIn(p.Addr) || slices.Contains(opts.Resolve.DevOverrides, p.Addr) || slices.Contains(reattached, p.Addr) {
			continue
		}
		if _, ok := byAddr[p.Addr]; !ok {
			addrs = append(addrs, p.Addr)
		}
		byAddr[p.Addr] = append(byAddr[p.Addr], q)
	}
	slices.SortFunc(addrs, func(a, b tfaddr.Provider) int {
		if a.LessThan(b) {
			return -1
		}
		if b.LessThan(a) {
			return 1
		}
		return 0
	})
	return addrs, byAddr
}

// providerLockProblem returns the problem of the requirements rs of the
// provider addr against pl, its lock (nil if none), if they have one: no
// version selected, or a locked version the constraints do not allow.
func providerLockProblem(addr tfaddr.Provider, rs []resolve.Requirement, pl *lockfile.ProviderLock) (Problem, bool) {
	cs := make([]versions.Constraints, len(rs))
	for i, q := range rs {
		cs[i] = q.Constraints
	}
	all := versions.Intersect(cs...)
	pr := Problem{Package: source.ProviderPackage{Addr: addr}, Range: rs[0].Origin.Range, Constraints: all}
	if pl == nil {
		pr.Kind, pr.Message = ProblemNotSelected, fmt.Sprintf("provider %s: required by this configuration but no version is selected", addr)
		return pr, true
	}
	if all.Allows(pl.Version) {
		return Problem{}, false
	}
	pr.Package = source.ProviderPackage{Addr: addr, Version: pl.Version}
	for _, q := range rs {
		if !q.Constraints.Allows(pl.Version) {
			pr.Range = q.Origin.Range
			break
		}
	}
	// As OpenTofu: when the constraints are the ones recorded,
	// the lock file itself was edited.
	if all.String() != pl.Constraints {
		pr.Kind, pr.Message = ProblemConstraintsChanged, fmt.Sprintf("provider %s: locked version selection %s doesn't match the updated version constraints %q", addr, pl.Version, all.String())
	} else {
		pr.Kind, pr.Message = ProblemLockEdited, fmt.Sprintf("provider %s: version constraints %q don't match the locked version selection %s", addr, all.String(), pl.Version)
	}
	return pr, true
}

// checkInstalledProvider checks that pkg is installed in pd, matches a
// hash of its lock pl (if pl records any) and has an executable. On
// failure it returns the kind of the problem and its error.
func checkInstalledProvider(pd *providercache.Dir, pkg source.ProviderPackage, pl *lockfile.ProviderLock) (CheckedProvider, ProblemKind, error) {
	inst, err := pd.Get(pkg)
	if err != nil {
		return CheckedProvider{}, ProblemNotInstalled, &NotInstalledError{Package: pkg, Dir: pd.Root(), Err: err}
	}
	if len(pl.Hashes) > 0 {
		h, err := inst.Hash()
		if err == nil {
			_, err = hash.Verify(pkg.ForDisplay(), []hash.Hash{h}, pl.Hashes)
		}
		if err != nil {
			return CheckedProvider{}, ProblemPackageMismatch, &PackageMismatchError{Package: pkg, Dir: pd.Root(), PackageDir: inst.Dir, Err: err}
		}
	}
	exe, err := inst.Executable()
	if err != nil {
		return CheckedProvider{}, ProblemNoExecutable, err
	}
	return CheckedProvider{Package: pkg, Dir: inst.Dir, Executable: exe}, 0, nil
}

// finishCheck sets res.Problems: the lock's problems in OpenTofu's order
// (by message), then the installation's, each with its remedy. It returns
// errs joined, led by an *InconsistentLockError if the lock has problems.
func finishCheck(res *CheckResult, problems, installed []Problem, errs []error, initial bool, words *Words) error {
	// OpenTofu's order: by message.
	slices.SortStableFunc(problems, func(a, b Problem) int { return strings.Compare(a.Message, b.Message) })
	res.Problems = append(problems, installed...)
	for i, p := range res.Problems {
		res.Problems[i].Remedy = remedyFor(p.Kind.remedy(), p.Package, p.Call)
		// Installing a module is tofu's own remedy.
		res.Problems[i].Remedy.Modules = p.Call != "" && p.Kind != ProblemModuleNotInstalled
	}
	if len(problems) > 0 {
		ie := &InconsistentLockError{Problems: problems, Initial: initial, Remedy: Remedy{Kind: RemedyUpgrade}, words: words}
		if initial {
			ie.Remedy.Kind = RemedyInit
		}
		errs = append([]error{ie}, errs...)
	}
	return errors.Join(errs...)
}

// installProblem records a problem of a provider's installed package, as
// an error and as a [Problem].
func installProblem(errs *[]error, problems *[]Problem, kind ProblemKind, pkg source.ProviderPackage, err error) {
	*errs = append(*errs, err)
	*problems = append(*problems, Problem{Kind: kind, Package: pkg, Message: err.Error(), Err: err})
}

// checkRequirements reads the requirements of the installed module tree:
// every module modules.json lists, or the root module and its local
// modules when there is no manifest.
//
// tree records the module calls read and the records of modules.json: a
// record whose directory is missing is not read (its call is reported
// "Module not installed" by Check).
func checkRequirements(opts Options, tree *installedTree) ([]resolve.Requirement, error) {
	ropts := config.ReadOptions{DefaultHost: opts.Resolve.DefaultHost, Variables: opts.Variables}
	man, err := ReadManifest(filepath.Join(opts.InstallDir, "modules", ManifestFile))
	if err != nil {
		return nil, err
	}
	tree.recs, tree.missing = map[string]ManifestRecord{}, map[string]bool{}
	for i, rec := range man.Modules {
		if rec.Key == "" {
			// tofu reads the root module in place, whatever its record
			// says; so does Check.
			man.Modules[i].Dir = "."
			rec.Dir = "."
		}
		tree.recs[rec.Key] = rec
	}
	root, err := checkRoot(opts, ropts)
	if err != nil {
		return nil, err
	}
	if root != nil {
		// The root tree is the caller's; the remote modules are read where
		// modules.json says they are installed.
		reqs := root.Requirements()
		have := map[string]bool{}
		callers := tree.calls
		for _, m := range root.Modules {
			have[m.Call] = true
			callers.add(m)
		}
		var recs []ManifestRecord
		for _, rec := range man.Modules {
			if !have[rec.Key] {
				recs = append(recs, rec)
			}
		}
		more, err := readAllInstalled(opts.Dir, recs, ropts, callers, tree.missing)
		if err != nil {
			return nil, err
		}
		return append(reqs, more...), nil
	}
	if len(man.Modules) == 0 {
		cfg, diags := config.ReadTree(opts.Dir, "", ropts)
		if diags.HasErrors() {
			return nil, &ConfigError{Dir: opts.Dir, Diagnostics: diags}
		}
		for _, m := range cfg.Modules {
			tree.calls.add(m)
		}
		return cfg.Requirements(), nil
	}
	return readAllInstalled(opts.Dir, man.Modules, ropts, tree.calls, tree.missing)
}

// installedTree is what Check read of the installed module tree: every
// module call of the modules read, the records of modules.json by key,
// and the keys of records whose directory is missing.
type installedTree struct {
	calls   callerIndex
	recs    map[string]ManifestRecord
	missing map[string]bool
}

// checkModules checks the install of each remote module call read: a call
// with no record in modules.json, or whose directory is missing, is "Module
// not installed" (tofu's words); with a lock entry that applies, the
// installed package must be the one it locks ([verifyInstalledModule]).
// skip are the calls whose lock entry a lock file problem was reported for.
func checkModules(ctx context.Context, opts Options, w *Words, lock *lockfile.File, tree *installedTree, skip map[string]bool, errs *[]error, problems *[]Problem) error {
	adopted := modulesAdopted(lock)
	modules := filepath.Join(opts.InstallDir, "modules")
	for _, key := range slices.Sorted(maps.Keys(tree.calls)) {
		mc := tree.calls[key]
		if mc.Kind == resolve.ModuleSourceLocal {
			if err := checkLocalCall(opts, key, mc, tree); err != nil {
				me := &ModuleMismatchError{Call: key, Dir: filepath.Join(opts.Dir, filepath.FromSlash(tree.recs[key].Dir)), Err: err}
				*errs = append(*errs, me)
				*problems = append(*problems, Problem{Kind: ProblemModuleMismatch, Package: source.ModulePackage{Source: mc.Source}, Call: key, Range: mc.DeclRange, Message: me.Error(), Err: me})
			}
			continue
		}
		if mc.Address == nil {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		pkg, err := source.NewModulePackage(mc.Address)
		if err != nil {
			pkg = source.ModulePackage{Source: mc.Address.Package()}
		}
		rec, ok := tree.recs[key]
		if !ok || tree.missing[key] {
			err := &ModuleNotInstalledError{Call: key, Dir: filepath.Join(modules, key), Range: mc.DeclRange, Remedy: Remedy{Kind: RemedyInit, Module: key}, words: w}
			*errs = append(*errs, err)
			*problems = append(*problems, Problem{Kind: ProblemModuleNotInstalled, Package: pkg, Call: key, Range: mc.DeclRange, Message: err.Error(), Err: err})
			continue
		}
		ml := lock.Module(key)
		if !adopted || skip[key] || ml == nil {
			continue
		}
		pkg = lockedPackage(ml)
		_, _, err = verifyInstalledModule(ctx, filepath.Join(modules, key), opts.Dir, rec, mc, ml)
		if err == nil && unverifiable(ml) {
			// Nothing bound what is installed: as a read-only Init
			// refuses the entry, Check does not take the install.
			err = errors.New("the lock file records no hash of it that tflock can check (h1: or zh:), so nothing binds what is installed")
		}
		if err != nil {
			me := &ModuleMismatchError{Call: key, Dir: filepath.Join(modules, key), Err: err}
			*errs = append(*errs, me)
			*problems = append(*problems, Problem{Kind: ProblemModuleMismatch, Package: pkg, Call: key, Range: mc.DeclRange, Message: me.Error(), Err: me})
		}
	}
	return nil
}

// checkLocalCall checks the modules.json record of the local module call
// key. Tofu loads a local module, as any other, from the directory its
// record names, so that directory must be the one the call's source names
// (joined to its caller's recorded directory, as tofu's installer records
// it); and inside a remote package, one that package's hashes cover: not
// outside the package, not in its version-control metadata (left out of
// h1:). A call with no record, or whose caller has none, is not checked.
func checkLocalCall(opts Options, key string, mc *config.ModuleCall, tree *installedTree) error {
	rec, ok := tree.recs[key]
	if !ok {
		return nil
	}
	callerKey, _, _ := cutLast(key)
	callerDir := "." // tofu reads the root module in place, whatever its record says
	if callerKey != "" {
		caller, ok := tree.recs[callerKey]
		if !ok {
			return nil
		}
		callerDir = filepath.ToSlash(caller.Dir)
	}
	want := path.Join(callerDir, mc.Source)
	if got := path.Clean(filepath.ToSlash(rec.Dir)); got != want {
		return fmt.Errorf("modules.json records the directory %s, where the call's source %q names %s", rec.Dir, mc.Source, want)
	}
	for k := callerKey; k != ""; k, _, _ = cutLast(k) {
		c := tree.calls[k]
		if c == nil || c.Kind == resolve.ModuleSourceLocal {
			continue
		}
		if _, why := uncovered(filepath.Join(opts.InstallDir, "modules", k), filepath.Join(opts.Dir, filepath.FromSlash(want))); why != "" {
			return fmt.Errorf("its directory %s, in the package of module %q, %s", want, k, why)
		}
		return nil
	}
	return nil
}

// cutLast splits a module call path into its caller's path ("" for the
// root module) and the call's name.
func cutLast(key string) (caller, name string, ok bool) {
	i := strings.LastIndexByte(key, '.')
	if i < 0 {
		return "", key, false
	}
	return key[:i], key[i+1:], true
}

// readInstalled reads the requirements of one module modules.json lists,
// in its directory relative to the configuration directory dir.
func readInstalled(dir string, rec ManifestRecord, ropts config.ReadOptions) (*config.Module, error) {
	mdir := filepath.Join(dir, filepath.FromSlash(rec.Dir))
	m, diags := config.ReadModule(mdir, rec.Key, ropts)
	if diags.HasErrors() {
		return nil, &ConfigError{Dir: mdir, Diagnostics: diags}
	}
	return m, nil
}
