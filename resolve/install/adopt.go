package install

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/address"
	"github.com/tflock/tflock/source/git"
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
func (r *run) adoptInstalled(calls []*resolve.ModuleCall) {
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
		switch {
		case rec.Version != "":
			v, err := versions.Parse(rec.Version)
			if err != nil || !q.Constraints.Allows(v) {
				continue
			}
			ml.Version = v
		case isGit(mc):
			commit, err := r.installedCommit(rec.Dir)
			if err != nil {
				continue
			}
			ml.Commit = commit
		default:
			continue
		}
		if r.locked == r.prev {
			r.locked = r.prev.Clone()
		}
		r.locked.SetModule(ml)
		if r.adopted == nil {
			r.adopted = map[string]bool{}
		}
		r.adopted[mc.Path] = true
	}
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

func isGit(mc *resolve.ModuleCall) bool {
	a, ok := mc.Address.(address.Remote)
	return ok && a.Kind == address.KindGit
}

// installedCommit reads the commit of the git checkout holding the module
// directory dir (as modules.json spells it, relative to the configuration
// directory): dir itself or, for a "//subdir" source, a parent of it
// inside the modules directory.
func (r *run) installedCommit(dir string) (string, error) {
	modules := filepath.Join(r.s.InstallDir, "modules")
	d := filepath.Join(r.s.dir, filepath.FromSlash(dir))
	for {
		commit, err := git.CheckoutCommit(d)
		if err == nil || !errors.Is(err, git.ErrNoCheckout) {
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
