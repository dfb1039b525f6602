package resolve

import (
	"cmp"
	"slices"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
)

// lockView is what the solver needs from a lock file.
type lockView struct {
	providers map[tfaddr.Provider]versions.Version
	modules   map[string]*lockfile.ModuleLock
}

// lockedVersion returns the version the lock file records for a module
// call, if its entry applies to the call ([ModuleLockApplies]) and has a
// version; else the zero Version.
func (v lockView) lockedVersion(call string, pkg source.ModulePackage, lockSource string) versions.Version {
	ml := v.modules[call]
	if !ModuleLockApplies(ml, pkg, lockSource) {
		return versions.Version{}
	}
	return ml.Version
}

// ModuleLockApplies reports whether ml, the lock file's entry for a module
// call, was made for what the call asks for now: the same lock source, the
// same git "ref" or OCI "tag" argument as written (or none on both sides)
// and, for a call pinned by an OCI "digest" argument, that digest. pkg and
// lockSource are the call's [Requirement].Package and LockSource ("" for
// pkg.Source). Versions are not compared: whether a locked version still
// suits the call's constraints is the solver's decision.
//
// An entry that does not apply is a changed requirement: the call is
// resolved again, its recorded hashes, commit and digest do not bind what
// is fetched, and a read-only run refuses it. This is the one place that
// decides it. A nil ml never applies.
func ModuleLockApplies(ml *lockfile.ModuleLock, pkg source.ModulePackage, lockSource string) bool {
	if ml == nil {
		return false
	}
	w := WrittenPin(pkg)
	return ml.Source == cmp.Or(lockSource, pkg.Source) && ml.Ref == w.Ref && ml.Tag == w.Tag && (w.Digest == "" || ml.Digest == w.Digest)
}

// WrittenPin returns what a module call's source pins by itself, as
// written: its git "ref" (Ref), its OCI "tag" (Tag) or its OCI "digest"
// (Digest); at most one is set, and none for a call selected by a version,
// the default branch or OCI's implied "latest". pkg is the call's
// [Requirement].Package. Source and Commit are left empty. A git ref never
// holds ":", an OCI digest always does.
func WrittenPin(pkg source.ModulePackage) lockfile.ModulePin {
	var w lockfile.ModulePin
	switch pkg.RefArgument() {
	case "ref":
		w.Ref = pkg.Ref
	case "digest":
		w.Digest = pkg.Ref
	case "tag":
		w.Tag = pkg.Ref
	}
	return w
}

func viewLock(f *lockfile.File) lockView {
	v := lockView{providers: map[tfaddr.Provider]versions.Version{}, modules: map[string]*lockfile.ModuleLock{}}
	if f == nil {
		return v
	}
	for p := range f.Providers() {
		if !p.Version.IsZero() {
			v.providers[p.Addr] = p.Version
		}
	}
	for m := range f.Modules() {
		v.modules[m.Path] = m
	}
	return v
}

// Apply writes the selection into the lock file f: for every provider and
// module pick, its version and its constraints (canonical form), and for a
// module its git ref or OCI tag as written. Hashes, and a module's commit
// and digest, are kept when the package and version are unchanged (for a
// module: its entry still applies, see [ModuleLockApplies]) and dropped
// otherwise (the installer records new ones).
// Providers and modules that the selection no longer requires are removed.
// Built-in providers are never written; the entries of dev overrides and
// unmanaged providers are left as they are. A provider picked by
// predecessor translation gets a new entry without hashes, and the
// predecessor's entry goes (no longer required). A module pinned by its
// source address keeps its hashes and commit or digest while its lock
// source is unchanged: the lock source has no ref, so the installer must
// compare what it fetches with them and replace them when the ref moved
// on purpose. Unknown blocks and attributes
// that f keeps are not touched.
func (s *Selection) Apply(f *lockfile.File) {
	keepP, keepM := s.Update(f)
	var dropP []tfaddr.Provider
	for p := range f.Providers() {
		if !keepP[p.Addr] {
			dropP = append(dropP, p.Addr)
		}
	}
	for _, a := range dropP {
		f.RemoveProvider(a)
	}

	var dropM []string
	for m := range f.Modules() {
		if !keepM[m.Path] {
			dropM = append(dropM, m.Path)
		}
	}
	slices.Sort(dropM)
	for _, p := range dropM {
		f.RemoveModule(p)
	}
}

// Update is [Selection.Apply] without the removals: it writes the
// selection's picks into f, as Apply does, and leaves every other entry of
// f as it is. A dependency bot that re-locks one package uses it. It
// returns the providers and module calls the picks concern.
func (s *Selection) Update(f *lockfile.File) (providers map[tfaddr.Provider]bool, modules map[string]bool) {
	providers = map[tfaddr.Provider]bool{}
	for _, p := range s.Providers {
		switch p.Reason {
		case Builtin:
			continue
		case Unmanaged:
			providers[p.Addr] = true
			continue
		}
		providers[p.Addr] = true
		var pl lockfile.ProviderLock
		if old := f.Provider(p.Addr); old != nil {
			pl = *old
			if old.Version != p.Version {
				pl.Hashes = nil
			}
		}
		pl.Addr, pl.Version, pl.Constraints = p.Addr, p.Version, p.Constraints.String()
		// Every value is the solver's (a parsed address, a version, the
		// canonical constraint string) or f's own entry's, which the
		// setter takes as it was read: it has nothing to refuse.
		_ = f.SetProvider(&pl)
	}
	modules = map[string]bool{}
	for _, m := range s.Modules {
		modules[m.Call] = true
		var ml lockfile.ModuleLock
		if old := f.Module(m.Call); old != nil {
			ml = *old
			if !ModuleLockApplies(old, m.Package, m.LockSource) || old.Version != m.Package.Version {
				ml.Hashes, ml.Commit, ml.Digest = nil, "", ""
			}
		}
		ml.Path, ml.Source, ml.Version, ml.Constraints = m.Call, m.LockSource, m.Package.Version, m.Constraints.String()
		w := WrittenPin(m.Package)
		ml.Ref, ml.Tag = w.Ref, w.Tag
		// As for providers: the solver's values or f's own entry's.
		_ = f.SetModule(&ml)
	}
	return providers, modules
}
