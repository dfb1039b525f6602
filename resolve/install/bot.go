package install

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	tfaddr "github.com/hashicorp/terraform-registry-address"
	"github.com/zclconf/go-cty/cty"

	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/config"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
)

// LockProviderOptions configure [LockProvider]. Addr, Version and Source
// are required.
type LockProviderOptions struct {
	// Lock is the lock file to update; LockProvider does not change it.
	// Default: an empty lock file.
	Lock *lockfile.File
	// Addr is the provider, such as registry.example.test/acme/cloud.
	Addr tfaddr.Provider
	// Version is the version to lock.
	Version versions.Version
	// Constraints are the configuration's version constraints for the
	// provider (provider dialect, as in required_providers), which the
	// lock file records. Default: those of the provider's entry in Lock.
	// Version must satisfy them.
	Constraints string
	// Platforms are the platforms whose hashes are recorded, as "tofu
	// providers lock -platform=..." does. Default: [source.CurrentPlatform].
	Platforms []source.Platform
	// Source lists and fetches the provider's packages.
	Source source.Source
	// Cache is the package cache; default a temporary one.
	Cache *cache.Cache
	// Events receives progress reports. Default nil: discarded.
	Events source.Events
	// Concurrency is as in [Options.Resolve], DownloadConcurrency as in
	// [Options].
	Concurrency, DownloadConcurrency int
	// Header is the header flavour of the new lock file, as in [Options].
	Header lockfile.Header
}

// LockProvider re-locks one provider at one version for a list of
// platforms, without a configuration: what a dependency bot does after
// bumping a provider's version. It returns the updated lock file in
// [Result.Lock] (not written; see [WriteLock]) and what changed; every
// other entry of the lock file is kept as it is.
//
// The hashes recorded are the ones Init records in ProvidersLock mode,
// with -upgrade for this provider, for a configuration that requires
// exactly this version, by the same code:
// what the origin vouches for (a registry's signed zh: of every
// platform), plus the h1: of each platform's package. If the entry
// already records the version, its hashes are kept and the new ones
// added; if it records another version, they are replaced.
//
// Errors are those of Init: a version the source does not list is a
// [*resolve.NoMatchError] naming the versions available, a package that
// does not match what its origin vouches for a [*ChecksumError]. An
// option that cannot be used is an [*OptionError]: a malformed constraint
// wraps the *[versions.ConstraintError], a version the constraints do not
// allow is [ErrVersionNotAllowed].
func LockProvider(ctx context.Context, opts LockProviderOptions) (*Result, error) {
	if opts.Addr.IsZero() {
		return nil, &OptionError{Option: "LockProviderOptions.Addr", Msg: "a provider address is required"}
	}
	if opts.Version.IsZero() {
		return nil, &OptionError{Option: "LockProviderOptions.Version", Msg: fmt.Sprintf("a version is required (provider %s)", opts.Addr.ForDisplay())}
	}
	prev := opts.Lock
	if prev == nil {
		prev = lockfile.New()
	}
	text := opts.Constraints
	if text == "" {
		if old := prev.Provider(opts.Addr); old != nil {
			text = old.Constraints
		}
	}
	cons, err := versions.ParseConstraints(text)
	if err != nil {
		return nil, &OptionError{Option: "LockProviderOptions.Constraints", Err: err,
			Msg: fmt.Sprintf("This string does not use correct version constraint syntax: %q, the version constraints of provider %s (%v).", text, opts.Addr.ForDisplay(), err)}
	}
	if !cons.Allows(opts.Version) {
		return nil, &OptionError{Option: "LockProviderOptions.Version", Err: ErrVersionNotAllowed,
			Msg: fmt.Sprintf("provider %s: version %s does not satisfy the version constraints %q; give LockProviderOptions.Constraints the configuration's new constraints", opts.Addr.ForDisplay(), opts.Version, text)}
	}
	exact, err := versions.ParseConstraints("= " + opts.Version.String())
	if err != nil {
		return nil, fmt.Errorf("install: provider %s: version %s: %w", opts.Addr.ForDisplay(), opts.Version, err)
	}
	r, cleanup, err := newBotRun(Options{
		Resolve: resolve.Options{Lock: prev, UpgradeProviders: []tfaddr.Provider{opts.Addr}, Concurrency: opts.Concurrency},
		Source:  opts.Source, Cache: opts.Cache, Events: opts.Events,
		ProvidersLock: true, Platforms: opts.Platforms,
		DownloadConcurrency: opts.DownloadConcurrency, Header: opts.Header,
	})
	if err != nil {
		return nil, err
	}
	defer cleanup()
	// The solver checks that the source lists the version (and says which
	// versions it has if not); the constraints recorded are the caller's.
	req := resolve.Requirement{Package: source.ProviderPackage{Addr: opts.Addr}, Constraints: exact}
	sel, err := resolve.Resolve(ctx, []resolve.Requirement{req}, r.lister, r.resolveOptions(nil))
	if err != nil {
		return nil, err
	}
	for i := range sel.Providers {
		if sel.Providers[i].Addr == opts.Addr {
			sel.Providers[i].Constraints = cons
		}
	}
	return r.relock(ctx, sel)
}

// LockModuleOptions configure [LockModule]. Call, Address and Source are
// required.
type LockModuleOptions struct {
	// Lock is the lock file to update; LockModule does not change it.
	// Default: an empty lock file.
	Lock *lockfile.File
	// Call is the module call's path: "vpc", or "app.vpc" for a call in
	// the module called "app".
	Call string
	// Address is the call's source argument as the configuration writes
	// it: a registry address, "git::https://...?ref=v1.2.0",
	// "oci://...". A local path is refused: local modules are not locked.
	Address string
	// Version is the call's version argument (module constraint dialect),
	// "" when it has none.
	Version string
	// Source lists and fetches the module's packages.
	Source source.Source
	// Cache is the package cache; default a temporary one.
	Cache *cache.Cache
	// Events receives progress reports. Default nil: discarded.
	Events source.Events
	// DefaultHost is the registry host of addresses without one. Default
	// [address.DefaultRegistryHost].
	DefaultHost string
	// Concurrency is as in [Options.Resolve].
	Concurrency int
	// Header is the header flavour of the new lock file, as in [Options].
	Header lockfile.Header
}

// lockModuleFile names the module block LockModule reads, in its
// diagnostics.
const lockModuleFile = "LockModuleOptions"

// LockModule re-locks one module call without a configuration directory:
// it selects the version Init with -upgrade for this call would select
// for a call with this source and version argument (a git ref or an OCI
// tag is resolved again), fetches it through the cache and records its
// hashes, and its commit (git) or digest (OCI), by the same code as Init.
// A version the lock file already records must still match its hashes.
// It returns the updated lock file in [Result.Lock] (not written; see
// [WriteLock]); every other entry is kept as it is. The module calls
// inside the fetched module are not followed: lock them with their own
// LockModule calls, or run Init.
//
// A source address or version argument the configuration reader refuses
// is a [*ConfigError] whose diagnostics name "LockModuleOptions"; an
// invalid call path or a local source is an [*OptionError].
func LockModule(ctx context.Context, opts LockModuleOptions) (*Result, error) {
	prev := opts.Lock
	if prev == nil {
		prev = lockfile.New()
	}
	r, cleanup, err := newBotRun(Options{
		Resolve: resolve.Options{Lock: prev, DefaultHost: opts.DefaultHost, Concurrency: opts.Concurrency, UpgradeModules: []string{opts.Call}},
		Source:  opts.Source, Cache: opts.Cache, Events: opts.Events, Header: opts.Header,
	})
	if err != nil {
		return nil, err
	}
	defer cleanup()
	ctx = source.WithRun(ctx) // one ls-remote per git repository, as in Init
	mc, mod, err := r.moduleCall(opts)
	if err != nil {
		return nil, err
	}
	sel, err := resolve.Resolve(ctx, mod.Requirements, r.lister, r.resolveOptions(nil))
	if err != nil {
		return nil, err
	}
	pick := sel.Module(opts.Call)
	if pick == nil {
		return nil, fmt.Errorf("install: module %q: no version selected for %s", opts.Call, opts.Address)
	}
	mf, err := r.fetchModule(ctx, *pick, mc)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.fetched[opts.Call] = mf
	r.mu.Unlock()
	return r.relock(ctx, sel)
}

// moduleCall reads the call LockModule locks as the configuration reader
// reads a module block, so that its source and version mean what they
// mean to Init.
func (r *run) moduleCall(opts LockModuleOptions) (*config.ModuleCall, *config.Module, error) {
	for _, part := range strings.Split(opts.Call, ".") {
		if !hclsyntax.ValidIdentifier(part) {
			return nil, nil, &OptionError{Option: "LockModuleOptions.Call", Msg: fmt.Sprintf("invalid module call path %q: each part must be a module name", opts.Call)}
		}
	}
	parent, name := "", opts.Call
	if i := strings.LastIndex(opts.Call, "."); i >= 0 {
		parent, name = opts.Call[:i], opts.Call[i+1:]
	}
	f := hclwrite.NewEmptyFile()
	b := f.Body().AppendNewBlock("module", []string{name}).Body()
	b.SetAttributeValue("source", cty.StringVal(opts.Address))
	if opts.Version != "" {
		b.SetAttributeValue("version", cty.StringVal(opts.Version))
	}
	mod, diags := config.ReadFiles([]config.File{{Name: lockModuleFile, Src: f.Bytes()}}, parent, r.readOptions())
	if diags.HasErrors() {
		return nil, nil, &ConfigError{Dir: lockModuleFile, Diagnostics: diags}
	}
	if mod.Calls[0].Kind == resolve.ModuleSourceLocal {
		return nil, nil, &OptionError{Option: "LockModuleOptions.Address", Msg: fmt.Sprintf("module %q: %q is a local module source; local modules are not locked", opts.Call, opts.Address)}
	}
	remote := r.addTree(&tree{cfg: &config.Config{Modules: []*config.Module{mod}}})
	return remote[0], mod, nil
}

// newBotRun starts the run of a LockProvider or LockModule call, which has
// no configuration directory; cleanup removes its temporary cache.
func newBotRun(o Options) (r *run, cleanup func(), err error) {
	s, err := o.normalize()
	if err != nil {
		return nil, nil, err
	}
	s.noDir = true
	return newRun(s), s.cleanup, nil
}

// relock writes a bot's selection into a copy of the previous lock file
// with Init's hash policy ([run.lockSelection]), leaving the entries the
// selection does not concern as they are.
func (r *run) relock(ctx context.Context, sel *resolve.Selection) (*Result, error) {
	r.announce(ctx, sel)
	fetched, err := r.fetchProviders(ctx, sel)
	if err != nil {
		return nil, err
	}
	res, provs, err := r.lockSelection(sel, fetched, func(f *lockfile.File) { sel.Update(f) })
	if err != nil {
		return nil, err
	}
	r.emitChanges(ctx, res)
	for i := range provs {
		provs[i].Dir = ""
	}
	res.Providers = provs
	return res, nil
}
