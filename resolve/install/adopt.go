package install

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/internal/gitcheckout"
	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/config"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/address"
	"github.com/tflock/tflock/source/cache"
)

// Keeping what was installed when the lock file lost a module's entry.
//
// A tool that does not know module locks (tofu 1.12's "providers lock",
// or any tofu rewrite) drops the module blocks of the lock file. tofu
// itself then keeps each module as installed, through
// .terraform/modules/modules.json. So does Init: a remote module call
// with no lock entry whose modules.json record has the same source keeps
// the installed selection (a registry module's version; a git module's
// commit, read from the checkout tofu left) instead of resolving anew,
// and its lock entry is recorded again with its hashes, reported as
// [lockfile.Rerecorded] rather than as added.

// readInstalledModules reads the previous install's modules.json. A
// missing or unreadable one means nothing was installed (a warning says
// so for an unreadable one).
func (r *run) readInstalledModules() {
	file := filepath.Join(r.s.InstallDir, "modules", ManifestFile)
	m, err := ReadManifest(file)
	if err != nil {
		r.warnf("ignoring the installed modules' manifest: %v", err)
		return
	}
	r.manifest = map[string]ManifestRecord{}
	for _, rec := range m.Modules {
		r.manifest[rec.Key] = rec
	}
}

func (r *run) warnf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.mu.Lock()
	r.warnings = append(r.warnings, msg)
	r.mu.Unlock()
	source.Emit(r.s.Events, source.Event{Kind: source.EventWarning, Detail: msg})
}

// adoptInstalled treats as locked the installed selection of each call
// that the lock file does not mention (see above). Calls being upgraded
// are left to the solver.
func (r *run) adoptInstalled(calls []*config.ModuleCall) {
	for _, mc := range calls {
		if r.prev.Module(mc.Path) != nil || r.upgradingModule(mc.Path) {
			continue
		}
		rec, ok := r.manifest[mc.Path]
		if !ok || mc.Address == nil || rec.Source != mc.Address.String() {
			continue // not installed, or installed from another source
		}
		q, ok := r.moduleRequirement(mc.Path)
		if !ok {
			continue
		}
		pkg, _ := q.Package.(source.ModulePackage)
		pin := resolve.WrittenPin(pkg)
		ml := &lockfile.ModuleLock{Path: mc.Path, Source: lockSource(q), Ref: pin.Ref, Tag: pin.Tag, Digest: pin.Digest}
		// The subdirectory the location named, as the install shows it:
		// the installed directory less the call's own "//subdir".
		if sub, ok := installedSubdir(filepath.Join(r.s.InstallDir, "modules", mc.Path), r.s.dir, rec); ok {
			switch own := callSubdir(mc); {
			case own == "":
				ml.Subdir = sub
			case strings.HasSuffix(sub, "/"+own):
				ml.Subdir = strings.TrimSuffix(sub, "/"+own)
			}
		}
		switch {
		case rec.Version != "":
			v, err := versions.Parse(rec.Version)
			if err != nil || !q.Constraints.Allows(v) {
				continue
			}
			ml.Version = v
		case isGit(mc):
			commit, err := r.installedCommit(rec.Dir)
			if err != nil && pin.Ref == "" {
				continue
			}
			// Without a checkout (tflock installs a copy without .git), a
			// call pinned by its ref is fetched at that ref again, from
			// the cache when it is there, and its commit recorded.
			ml.Commit = commit
		case isOCI(mc) && pin.Digest == "":
			// tofu's OCI install records no digest: the entry keeps the
			// tag as written and the installed package's h1:, and gains
			// its digest at the next fetch (a moved tag is then a checksum
			// error).
		default:
			continue
		}
		if r.locked == r.prev {
			r.locked = r.prev.Clone()
		}
		if err := r.locked.SetModule(ml); err != nil {
			// What tofu's install left cannot be a lock entry: the call
			// is resolved as a new one.
			r.warnf("module %q: the installed module is not re-recorded: %v", mc.Path, err)
			continue
		}
		if r.adopted == nil {
			r.adopted = map[string]bool{}
		}
		r.adopted[mc.Path] = true
	}
}

// installedSubdir returns the directory of an installed module call, as
// modules.json records it (relative to the configuration directory dir),
// relative to the call's package directory root in the modules directory
// (slash-separated, "" for the package root), or false when it is not
// inside it.
func installedSubdir(root, dir string, rec ManifestRecord) (string, bool) {
	sub, err := filepath.Rel(root, filepath.Join(dir, filepath.FromSlash(rec.Dir)))
	if err != nil || !filepath.IsLocal(sub) && sub != "." {
		return "", false
	}
	if sub == "." {
		return "", true
	}
	return filepath.ToSlash(sub), true
}

// moduleRequirement returns the module requirement of a call.
func (r *run) moduleRequirement(call string) (resolve.Requirement, bool) {
	for _, q := range r.requirements() {
		if _, ok := q.Package.(source.ModulePackage); ok && q.Call == call {
			return q, true
		}
	}
	return resolve.Requirement{}, false
}

func isGit(mc *config.ModuleCall) bool {
	a, ok := mc.Address.(address.Remote)
	return ok && a.Kind == address.KindGit
}

func isOCI(mc *config.ModuleCall) bool {
	a, ok := mc.Address.(address.Remote)
	return ok && a.Kind == address.KindOCI
}

// installedCommit reads the commit of the git checkout holding the module
// directory dir (as modules.json spells it, relative to the configuration
// directory): dir itself or, for a "//subdir" source, a parent of it
// inside the modules directory.
func (r *run) installedCommit(dir string) (string, error) {
	modules := filepath.Join(r.s.InstallDir, "modules")
	d := filepath.Join(r.s.dir, filepath.FromSlash(dir))
	for {
		commit, err := gitcheckout.Commit(d)
		if err == nil || !errors.Is(err, gitcheckout.ErrNoCheckout) {
			return commit, err
		}
		parent := filepath.Dir(d)
		if rel, err := filepath.Rel(modules, parent); err != nil || rel == "." || !filepath.IsLocal(rel) {
			return "", fs.ErrNotExist
		}
		d = parent
	}
}

// markRerecorded reports the adopted calls' new lock entries as
// re-recorded rather than added.
func (r *run) markRerecorded(changes []lockfile.Change) {
	for i, c := range changes {
		if c.Module != "" && c.Kind == lockfile.Added && r.adopted[c.Module] {
			changes[i].Kind = lockfile.Rerecorded
		}
	}
}

// bindSourceLocks gives the lock file's module locks keyed by source
// address (OpenTofu's module-locking RFC PR #3540 form) to the calls that
// have none, before they are resolved ([lockfile.File.BindModules]). The
// caller's lock file is never changed: the run works on a copy.
func (r *run) bindSourceLocks(calls []*config.ModuleCall) {
	if !hasSourceModules(r.prev) {
		return
	}
	if r.prev == r.s.Resolve.Lock {
		c := r.prev.Clone()
		if r.locked == r.prev {
			r.locked = c
		}
		r.prev = c
	}
	var lcs []lockfile.ModuleCall
	for _, mc := range calls {
		q, ok := r.moduleRequirement(mc.Path)
		if !ok {
			continue
		}
		lcs = append(lcs, lockfile.ModuleCall{Path: mc.Path, Source: lockSource(q), Constraints: q.Constraints})
	}
	for _, path := range r.prev.BindModules(lcs) {
		if r.locked != r.prev {
			// r.prev's own entry, bound to its call: valid as it was read.
			if err := r.locked.SetModule(r.prev.Module(path)); err != nil {
				r.warnf("module %q: the lock file's entry is not bound to the call: %v", path, err)
			}
		}
	}
}

func hasSourceModules(f *lockfile.File) bool {
	for range f.SourceModules() {
		return true
	}
	return false
}

// installedModule returns the call's module as installed already, when the
// previous install's modules.json records the call with the same source
// and version and the installed package (a .git of tofu's checkout left
// out, by the module rule) matches the lock's hashes: it is then kept in
// place, neither fetched nor copied. Otherwise nil.
func (r *run) installedModule(pick resolve.ModulePick, mc *config.ModuleCall, ml *lockfile.ModuleLock) *moduleFetch {
	key := pick.Call + "\x00" + pick.Package.Version.String()
	r.mu.Lock()
	mf, done := r.installedMods[key]
	r.mu.Unlock()
	if done {
		return mf
	}
	mf = r.checkInstalledModule(pick, mc, ml)
	r.mu.Lock()
	if r.installedMods == nil {
		r.installedMods = map[string]*moduleFetch{}
	}
	r.installedMods[key] = mf
	r.mu.Unlock()
	return mf
}

func (r *run) checkInstalledModule(pick resolve.ModulePick, mc *config.ModuleCall, ml *lockfile.ModuleLock) *moduleFetch {
	rec, ok := r.manifest[pick.Call]
	if !ok || mc.Address == nil || rec.Source != mc.Address.String() {
		return nil
	}
	// A lock entry with no hashes binds nothing, unless the run adopted it
	// from this very install (a tool that does not lock modules installed
	// it): the installed package is then what the new entry records, as
	// tofu keeps it.
	if len(ml.Hashes) == 0 && (!r.adopted[pick.Call] || isGit(mc) && ml.Commit == "") {
		return nil
	}
	if len(ml.Hashes) > 0 && len(hash.Preferred(ml.Hashes)) == 0 {
		return nil // hashes of other schemes only: nothing to compare
	}
	root := filepath.Join(r.s.InstallDir, "modules", pick.Call)
	h1, sub, err := verifyInstalledModule(context.Background(), root, r.s.dir, rec, mc, ml)
	if err != nil {
		return nil
	}
	return &moduleFetch{pick: pick, call: mc, entry: cache.Entry{Dir: root, H1: h1, Hashes: []hash.Hash{h1}, Pin: cmp.Or(ml.Digest, ml.Commit)}, hit: true, locked: true, reused: true, loc: ml.Subdir, sub: sub}
}

// verifyInstalledModule checks the module installed for a call (its
// package in root, its record rec in modules.json, relative to the
// configuration directory dir) against the call's lock entry ml, and
// returns the package's h1: and the installed subdirectory: the version
// modules.json records must be the locked one; the module must be
// installed from the directory the lock binds (the location's "subdir",
// then the call's own "//subdir"); the package must hash to one of the
// entry's h1: hashes, when it records any of a scheme tflock computes; a
// git checkout (tofu keeps its .git) must be at the locked commit. It is
// what Init's keeping of an installed module and Check's verification
// share.
func verifyInstalledModule(ctx context.Context, root, dir string, rec ManifestRecord, mc *config.ModuleCall, ml *lockfile.ModuleLock) (hash.Hash, string, error) {
	if v := ml.Version; (v.IsZero() && rec.Version != "") || (!v.IsZero() && rec.Version != v.String()) {
		return "", "", fmt.Errorf("modules.json records version %q, the lock file %s", rec.Version, cmp.Or(v.String(), "none"))
	}
	sub, ok := installedSubdir(root, dir, rec)
	if !ok {
		return "", "", fmt.Errorf("modules.json records the directory %s, outside the module's package", rec.Dir)
	}
	if want := path.Join(ml.Subdir, callSubdir(mc)); sub != want {
		return "", "", fmt.Errorf("installed from the subdirectory %s of its package, where the lock file binds %s", subdirText(sub), subdirText(want))
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return "", "", fmt.Errorf("no package directory: %w", cmp.Or(err, error(fs.ErrNotExist)))
	}
	h1, err := hash.Options{Module: true}.H1Dir(ctx, root)
	if err != nil {
		return "", "", err
	}
	if want := hash.Preferred(ml.Hashes); len(want) > 0 && !slices.Contains(want, h1) {
		return "", "", fmt.Errorf("its package hashes to %s, which is not among the lock file's hashes", h1)
	}
	if ml.Commit != "" {
		// A git module: the checkout must be at the locked commit when
		// it says (tofu's keeps its .git; tflock's copy has none).
		if commit, err := gitcheckout.Commit(root); err == nil && commit != ml.Commit {
			return "", "", fmt.Errorf("its git checkout is at commit %s, the lock file records %s", commit, ml.Commit)
		}
	}
	return h1, sub, nil
}
