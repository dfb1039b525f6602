package install

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"golang.org/x/sync/errgroup"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/config"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/address"
	"github.com/tflock/tflock/source/cache"
)

// tree is a module tree read in place (the root) or from a fetched package.
type tree struct {
	pkgRoot      string // file system directory of the package (or the root module)
	manifestRoot string // the same, as modules.json spells it
	cfg          *config.Config
}

// moduleFetch is a remote module call's package.
type moduleFetch struct {
	pick  resolve.ModulePick
	call  *config.ModuleCall
	entry cache.Entry
	sub   string // subdirectory of entry.Dir holding the module (slash-separated)
	// loc is the subdirectory of the package its location named (the
	// lock's "subdir"), in canonical form: sub is loc, then the call's
	// own "//subdir".
	loc string
	hit bool
	// locked is true when the call's lock entry bound the fetch (its
	// hashes and commit or digest were checked); else the entry records
	// what was fetched now.
	locked bool
	// reused is true when the module was installed already and matches
	// the lock: entry.Dir is its installed directory, kept as it is.
	reused bool
	// tree is the module tree the call runs, read as soon as it was
	// fetched; nil when it is still to be read.
	tree *parsedTree
}

// addTree records a module tree and returns its remote module calls.
func (r *run) addTree(t *tree) []*config.ModuleCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.trees = append(r.trees, t)
	var remote []*config.ModuleCall
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

func (r *run) readTree(ctx context.Context, dir, call, pkgRoot, manifestRoot string) ([]*config.ModuleCall, error) {
	cfg, diags := config.ReadTree(dir, call, r.readOptions())
	return r.useTree(ctx, dir, cfg, diags, pkgRoot, manifestRoot)
}

// useTree records a module tree read from dir, or fails with its
// errors.
func (r *run) useTree(ctx context.Context, dir string, cfg *config.Config, diags hcl.Diagnostics, pkgRoot, manifestRoot string) ([]*config.ModuleCall, error) {
	if diags.HasErrors() {
		return nil, &ConfigError{Dir: dir, Diagnostics: diags}
	}
	r.warn(ctx, diags)
	return r.addTree(&tree{pkgRoot: pkgRoot, manifestRoot: manifestRoot, cfg: cfg}), nil
}

func (r *run) warn(ctx context.Context, diags hcl.Diagnostics) {
	for _, d := range diags {
		if d.Severity == hcl.DiagWarning {
			// With its file and line: an ignored tflock annotation, say,
			// must be found.
			msg := diagnosticText(d)
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
	prep := r.newPrep(ctx)
	defer prep.stop()
	for len(pending) > 0 {
		r.bindSourceLocks(pending)
		r.adoptInstalled(pending)
		want := map[string]*config.ModuleCall{}
		for _, mc := range pending {
			want[mc.Path] = mc
		}
		var reqs []resolve.Requirement
		for _, q := range r.requirements() {
			if _, ok := q.Package.(source.ModulePackage); ok && (want[q.Call] != nil || r.s.Resolve.UnifyModules) {
				reqs = append(reqs, q)
			}
		}
		for _, q := range reqs {
			if want[q.Call] != nil {
				prep.add(q)
			}
		}
		sel, err := resolve.Resolve(ctx, reqs, r.lister, r.resolveOptions(nil))
		if err != nil {
			return err
		}
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(r.s.Resolve.Concurrency)
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
				// Its module tree is read now, beside the level's other
				// fetches, and the calls it makes prepared.
				if dir, err := moduleDir(mf.entry.Dir, mf.sub); err == nil {
					mf.tree = r.parseCalledTree(dir, mc, mf.entry.Dir)
					if mf.tree.cfg != nil {
						for _, m := range mf.tree.cfg.Modules {
							for _, q := range m.Requirements {
								prep.add(q)
							}
						}
					}
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
			dir, err := moduleDir(mf.entry.Dir, mf.sub)
			if err != nil {
				return &source.Error{Package: mf.pick.Package, Err: fmt.Errorf("module %q: %w", mf.pick.Call, err)}
			}
			root := path.Join(r.modulesRoot(), mf.pick.Call)
			if mf.tree == nil {
				mf.tree = r.parseCalledTree(dir, mf.call, mf.entry.Dir)
			}
			more, err := r.useTree(ctx, dir, mf.tree.cfg, mf.tree.diags, mf.entry.Dir, root)
			if err != nil {
				return err
			}
			pending = append(pending, more...)
		}
	}
	return nil
}

// preparer is a source that can make ahead of a Fetch the listing the
// Fetch will need (source/assemble's Dispatch, routing to the git
// source's Prepare).
type preparer interface {
	Prepare(ctx context.Context, pkg source.Package)
}

// prep lets the source list ahead the repositories that calls pinned by
// a ref (or following a default branch) will be fetched from (the git
// source's Prepare, in the run's shared listings): those of a level's
// calls while the level's constraints are resolved, so that a level that
// calls a repository by a constraint and another by a ref waits for one
// listing, not for two in turn; and those of the calls a fetched module
// makes as soon as its tree is read, while the level's other fetches go
// on. Only calls without a lock entry are prepared: a locked call may
// need no listing at all (installed, or in the cache).
type prep struct {
	r      *run
	p      preparer // nil: the source prepares nothing
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	seen   map[string]bool // the calls prepared
}

func (r *run) newPrep(ctx context.Context) *prep {
	p, _ := r.s.Source.(preparer)
	ctx, cancel := context.WithCancel(ctx)
	return &prep{r: r, p: p, ctx: ctx, cancel: cancel, seen: map[string]bool{}}
}

// add prepares the package of a module requirement, once per call.
func (pp *prep) add(q resolve.Requirement) {
	pkg, ok := q.Package.(source.ModulePackage)
	if pp.p == nil || !ok || (pkg.Ref == "" && !q.Constraints.IsZero()) || pp.r.locked.Module(q.Call) != nil {
		return
	}
	pp.mu.Lock()
	defer pp.mu.Unlock()
	if pp.seen[q.Call] {
		return
	}
	pp.seen[q.Call] = true
	pp.wg.Go(func() { pp.p.Prepare(pp.ctx, pkg) })
}

// stop stops what is still under way and waits for it.
func (pp *prep) stop() {
	pp.cancel()
	pp.wg.Wait()
}

// upgradingModule reports whether the call's locked version is ignored.
func (r *run) upgradingModule(call string) bool {
	if r.s.Resolve.Upgrade {
		return true
	}
	for _, u := range r.s.Resolve.UpgradeModules {
		if call == u || strings.HasPrefix(call, u+".") {
			return true
		}
	}
	return false
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

func (r *run) fetchModule(ctx context.Context, pick resolve.ModulePick, mc *config.ModuleCall) (*moduleFetch, error) {
	pkg := pick.Package
	var want []hash.Hash
	ml := r.lockedModule(pick)
	if ml != nil {
		want = ml.Hashes
		pkg = lockBound(pkg, ml, mc)
	} else {
		// Unbound, the subdirectory is the location's; Located has the
		// cache keep the package's own record, which a later run bound
		// to the root needs to be served from it.
		pkg.Located = locatedCall(mc)
	}
	callSub := callSubdir(mc)
	if ml != nil {
		if mf := r.installedModule(pick, mc, ml); mf != nil {
			detail := installedDetail
			if len(hash.Preferred(ml.Hashes)) == 0 {
				// Kept as the install it was adopted from: no hash compared.
				detail = "installed already; the lock file records no hash of it to compare"
			}
			source.EmitContext(ctx, r.s.Events, source.Event{Kind: source.EventVerified, Package: pkg, Detail: detail})
			return mf, nil
		}
	}
	t, err := voucher{r}.vouch(ctx, wanted{pkg: pkg, call: pick.Call, lock: want})
	if err != nil {
		return nil, err
	}
	loc := t.entry.Subdir
	return &moduleFetch{pick: pick, call: mc, entry: t.entry, hit: t.hit, locked: ml != nil, loc: loc, sub: path.Join(loc, callSub)}, nil
}

// moduleDir returns the directory sub (slash-separated) of the package in
// root, which is the module: it must be a directory inside the package,
// also once symbolic links are resolved, and name no version-control
// metadata (which a module package never holds).
func moduleDir(root, sub string) (string, error) {
	dir := filepath.Join(root, filepath.FromSlash(sub))
	if hash.IsVCSMetadata(sub) {
		return "", fmt.Errorf("the subdirectory %s of its package is version-control metadata", sub)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("its package has no subdirectory %s", sub)
	}
	if rel, err := filepath.Rel(realRoot, real); err != nil || (rel != "." && !filepath.IsLocal(rel)) {
		return "", fmt.Errorf("the subdirectory %s of its package leads out of it", sub)
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("the subdirectory %s of its package is not a directory", sub)
	}
	return dir, nil
}

// lockBound returns pkg as its lock entry ml binds it for the call mc: at
// the commit or digest ml records (Pin, when it records one), installed
// from the subdirectory ml records (Subdir; [source.SubdirRoot] when none),
// Located when the call is a registry module's or an HTTP address's (or
// is not known): a registry names each version's location, and an HTTP
// address may be answered by X-Terraform-Get, either of which may name a
// subdirectory. Bound to the root, such a package is served from the cache
// only when its own index record confirms it (the cache keeps one for a
// Located package, versioned or not), never from an entry another
// identity filled with the same h1:.
func lockBound(pkg source.ModulePackage, ml *lockfile.ModuleLock, mc *config.ModuleCall) source.ModulePackage {
	pkg.Pin = cmp.Or(ml.Digest, ml.Commit, pkg.Pin)
	pkg.Subdir = cmp.Or(ml.Subdir, source.SubdirRoot)
	pkg.Located = locatedCall(mc)
	return pkg
}

// lockedPackage is the module package the lock entry ml names, for a
// message, a problem or an event: built from the entry's typed address
// ([lockfile.ModuleLock.Address], read once with the file) by
// [source.NewModulePackage], so its Source is the package address (the
// source's own "//subdir" is no part of it), with the entry's version,
// its ref or tag, and what it binds ([lockBound]: the pin and the
// subdirectory its "subdir" records). An entry whose source does not
// parse is named by its Source as written.
func lockedPackage(ml *lockfile.ModuleLock) source.ModulePackage {
	pkg := source.ModulePackage{Source: ml.Source}
	if addr, err := ml.Address(); err == nil {
		if p, err := source.NewModulePackage(addr); err == nil {
			pkg = p
		}
	}
	pkg.Version, pkg.Ref = ml.Version, cmp.Or(ml.Ref, ml.Tag)
	return lockBound(pkg, ml, nil)
}

// locatedCall reports whether the package of the call mc is
// [source.ModulePackage.Located]: a registry module's, an HTTP address's,
// or a call not known.
func locatedCall(mc *config.ModuleCall) bool {
	if mc == nil {
		return true
	}
	switch a := mc.Address.(type) {
	case address.Registry:
		return true
	case address.Remote:
		return a.Kind == address.KindHTTP
	}
	return false
}

// callSubdir is the "//subdir" of a module call's own source address,
// in the canonical form of [address.PackageSubdir] when it has one.
func callSubdir(mc *config.ModuleCall) string {
	var s string
	switch a := mc.Address.(type) {
	case address.Registry:
		s = a.Subdir
	case address.Remote:
		s = a.Subdir
	}
	if c, err := address.PackageSubdir(s); err == nil {
		return c
	}
	return s
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
