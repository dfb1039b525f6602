package resolve

import (
	"slices"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve/versions"
)

// lockView is what the solver needs from a lock file.
type lockView struct {
	providers map[tfaddr.Provider]versions.Version
	modules   map[string]lockedModule
}

type lockedModule struct {
	source  string
	version versions.Version
}

func viewLock(f *lockfile.File) lockView {
	v := lockView{providers: map[tfaddr.Provider]versions.Version{}, modules: map[string]lockedModule{}}
	if f == nil {
		return v
	}
	for p := range f.Providers() {
		if !p.Version.IsZero() {
			v.providers[p.Addr] = p.Version
		}
	}
	for m := range f.Modules() {
		v.modules[m.Path] = lockedModule{source: m.Source, version: m.Version}
	}
	return v
}

// Apply writes the selection into the lock file f: for every provider and
// module pick, its version and its constraints (canonical form). Hashes,
// and a module's commit and digest, are kept when the package and version
// are unchanged and dropped otherwise (the installer records new ones).
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
		f.SetProvider(&pl)
	}
	modules = map[string]bool{}
	for _, m := range s.Modules {
		modules[m.Call] = true
		var ml lockfile.ModuleLock
		if old := f.Module(m.Call); old != nil {
			ml = *old
			if old.Source != m.LockSource || old.Version != m.Package.Version {
				ml.Hashes, ml.Commit, ml.Digest = nil, "", ""
			}
		}
		ml.Path, ml.Source, ml.Version, ml.Constraints = m.Call, m.LockSource, m.Package.Version, m.Constraints.String()
		f.SetModule(&ml)
	}
	return providers, modules
}
