package install

import (
	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/lockfile"
)

// readOnlyHashesWarning is the warning of a read-only run that would only
// add hashes: with OpenTofu's words ([WordsFor]), OpenTofu's text.
func readOnlyHashesWarning(w Words) string {
	return "Provider lock file not updated: changes to the provider selections were detected, but not saved in the .terraform.lock.hcl file. To record these selections, " + w.Remedy(Remedy{Kind: RemedyWritable}) + "."
}

// ModulesNotLockedWarning begins the warning of a read-only run
// ([Options.ReadOnly]) or a [Check] against a lock file that records no
// module at all: module locking is not adopted yet (a lock file written by
// tofu or terraform), so the configuration's module calls are accepted
// unlocked, as those tools accept them, rather than refused. The warning
// goes on to say why and what to do, in the run's words ([Options.Words]).
const ModulesNotLockedWarning = "Module dependency locks not adopted"

// modulesNotLockedWarning is the whole warning, with its remedy: run
// without read-only (Init), or run init (Check).
func modulesNotLockedWarning(w Words, remedy RemedyKind) string {
	return ModulesNotLockedWarning + ": the lock file records no modules, so the module calls were accepted as the configuration's version constraints allow and not locked. To lock them, " + w.Remedy(Remedy{Kind: remedy, Modules: true}) + "."
}

// modulesAdopted reports whether a lock file records module locks at all.
// A lock file without any (one written by tofu or terraform, or by tflock
// for a configuration without remote modules) has not adopted module
// locking: read-only runs do not require its module calls to be locked.
func modulesAdopted(lf *lockfile.File) bool {
	for range lf.Modules() {
		return true
	}
	return false
}

// unverifiable reports whether a module lock records no hash tflock can
// compute (h1:, zh:): none at all, or only of other schemes.
func unverifiable(ml *lockfile.ModuleLock) bool {
	return ml != nil && len(hash.Preferred(ml.Hashes)) == 0
}

// readOnlyVerdict sorts the changes a read-only run would make to prev:
// refused are the changes of a dependency selection (they fail the run),
// and the hashes of a module whose entry records none that tflock can
// check (nothing bound what was installed); the warnings say what is
// accepted but not recorded (hashes only, and module calls when prev has
// adopted no module locking).
//
// A provider whose entry records only hashes of other schemes is accepted
// with the hashes warning, as tofu 1.12 installs it ("unauthenticated")
// and warns that the lock file was not updated.
func readOnlyVerdict(prev *lockfile.File, changes []lockfile.Change, w Words) (refused []lockfile.Change, warnings []string) {
	adopted := modulesAdopted(prev)
	hashes, modules := false, false
	for _, c := range changes {
		switch {
		case c.Module != "" && !adopted:
			modules = true
		case c.Kind == lockfile.HashesChanged && c.Module != "" && unverifiable(prev.Module(c.Module)):
			refused = append(refused, c)
		case c.Kind == lockfile.HashesChanged:
			hashes = true
		default:
			refused = append(refused, c)
		}
	}
	if len(refused) > 0 {
		return refused, nil
	}
	if hashes {
		warnings = append(warnings, readOnlyHashesWarning(w))
	}
	if modules {
		warnings = append(warnings, modulesNotLockedWarning(w, RemedyWritable))
	}
	return nil, warnings
}

// changesModules reports whether any of the changes is a module's.
func changesModules(changes []lockfile.Change) bool {
	for _, c := range changes {
		if c.Module != "" {
			return true
		}
	}
	return false
}
