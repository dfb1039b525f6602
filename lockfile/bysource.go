package lockfile

import (
	"cmp"
	"iter"
	"slices"

	"github.com/hashicorp/hcl/v2/hclwrite"

	"github.com/tflock/tflock/resolve/versions"
)

// ModuleCall is a module call of the configuration, as [File.BindModules]
// needs it.
type ModuleCall struct {
	// Path is the call path, such as "vpc" or "vpc.nested".
	Path string
	// Source is the source its lock records (see [ModuleLock].Source),
	// such as "registry.opentofu.org/terraform-aws-modules/vpc/aws".
	Source string
	// Constraints is the call's version constraint; the zero value allows
	// any version except pre-releases.
	Constraints versions.Constraints
}

// SourceModules returns the module locks keyed by source address rather
// than by call, read from blocks in the form of OpenTofu's module-locking
// RFC PR #3540 and not yet given to calls by [File.BindModules]: their
// Path is "". They are sorted by Source, then Version. The results are the
// stored locks.
func (f *File) SourceModules() iter.Seq[*ModuleLock] {
	return func(yield func(*ModuleLock) bool) {
		for _, m := range f.sortedBySource() {
			if !yield(m) {
				return
			}
		}
	}
}

func (f *File) sortedBySource() []*ModuleLock {
	list := slices.Clone(f.bySource)
	slices.SortStableFunc(list, compareBySource)
	return list
}

func compareBySource(a, b *ModuleLock) int {
	return cmp.Or(cmp.Compare(a.Source, b.Source), a.Version.Compare(b.Version))
}

// RemoveSourceModule removes the lock keyed by the given source address
// and version, if any, and reports whether there was one.
func (f *File) RemoveSourceModule(source string, v versions.Version) bool {
	n := len(f.bySource)
	match := func(m *ModuleLock) bool { return m.Source == source && m.Version == v }
	f.bySource = slices.DeleteFunc(f.bySource, match)
	f.bound = slices.DeleteFunc(f.bound, match)
	return len(f.bySource) != n
}

// BindModules gives the locks keyed by source address (see
// [File.SourceModules]) to the module calls they apply to, as locks keyed
// by call path: a call without a lock of its own gets a copy of the lock
// of its Source whose Version its Constraints allow (of several, the one
// whose recorded constraints are the call's, else the newest). The locks
// keyed by source that some call got are then no longer written (nor
// listed by [File.SourceModules], nor compared by [Equal]), so that the
// file is written in tflock's form; the others stay. They still serve
// later calls: an installer that discovers calls as it reads nested
// modules may call BindModules again with the new ones. It returns the
// call paths that got a lock, in the order of calls.
//
// A lock file in that form does not say which calls a lock was made for,
// so an installer calls BindModules once it knows the configuration's
// calls, before it reads their locks.
func (f *File) BindModules(calls []ModuleCall) []string {
	f.init()
	var bound []string
	used := map[*ModuleLock]bool{}
	all := append(f.sortedBySource(), f.bound...)
	for _, c := range calls {
		if c.Path == "" || f.modules[c.Path] != nil {
			continue
		}
		want := c.Constraints.String()
		var best *ModuleLock
		for _, m := range all {
			if m.Source != c.Source || !c.Constraints.Allows(m.Version) {
				continue
			}
			switch {
			case best == nil,
				m.Constraints == want && best.Constraints != want,
				(m.Constraints == want) == (best.Constraints == want) && m.Version.Compare(best.Version) > 0:
				best = m
			}
		}
		if best == nil {
			continue
		}
		used[best] = true
		l := best.clone()
		l.Path = c.Path
		f.SetModule(l)
		bound = append(bound, c.Path)
	}
	f.bySource = slices.DeleteFunc(f.bySource, func(m *ModuleLock) bool {
		if used[m] {
			f.bound = append(f.bound, m)
		}
		return used[m]
	})
	return bound
}

// writeBySource writes a lock keyed by source address in the form of RFC
// PR #3540: version, constraints (if any), hashes (if any), then kept
// unknown items.
func writeBySource(parent *hclwrite.Body, m *ModuleLock) {
	body := parent.AppendNewBlock("module", []string{m.Source}).Body()
	writeSelection(body, m.Version, canonicalConstraints(m.Constraints, versions.ParseModuleConstraints), m.Hashes, m.Unknown)
}

// equalBySource reports whether two files hold the same locks keyed by
// source address (hashes compared unless ignoreHashes).
func equalBySource(a, b *File, ignoreHashes bool) bool {
	la, lb := a.sortedBySource(), b.sortedBySource()
	return slices.EqualFunc(la, lb, func(x, y *ModuleLock) bool {
		return x.Source == y.Source && x.Version == y.Version && x.Constraints == y.Constraints &&
			(ignoreHashes || slices.Equal(normalizeHashes(slices.Clone(x.Hashes)), normalizeHashes(slices.Clone(y.Hashes))))
	})
}
