package lockfile

import (
	"fmt"
	"slices"
	"strings"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
)

// ChangeKind says how one provider or module lock differs between two files.
type ChangeKind int

const (
	// Added: the lock is only in the new file.
	Added ChangeKind = iota + 1
	// Removed: the lock is only in the old file.
	Removed
	// Upgraded: the new version is higher.
	Upgraded
	// Downgraded: the new version is lower.
	Downgraded
	// Repinned: a module's version is unchanged but its source, commit or
	// digest changed (for example a moved git tag).
	Repinned
	// ConstraintsChanged: the version and pin are unchanged but the
	// recorded constraints differ.
	ConstraintsChanged
	// HashesChanged: only the hash set differs.
	HashesChanged
)

// String returns the kind as a lower-case word, such as "upgraded".
func (k ChangeKind) String() string {
	switch k {
	case Added:
		return "added"
	case Removed:
		return "removed"
	case Upgraded:
		return "upgraded"
	case Downgraded:
		return "downgraded"
	case Repinned:
		return "repinned"
	case ConstraintsChanged:
		return "constraints changed"
	case HashesChanged:
		return "hashes changed"
	}
	return fmt.Sprintf("ChangeKind(%d)", int(k))
}

// Change is one difference between two lock files, for a provider (Module
// is "") or a module call (Provider is the zero value). Kind is the most
// significant difference; the other fields say everything that changed.
type Change struct {
	Kind     ChangeKind
	Provider tfaddr.Provider
	Module   string

	OldVersion, NewVersion         versions.Version
	OldConstraints, NewConstraints string
	// AddedHashes and RemovedHashes are the hash set difference, sorted.
	AddedHashes, RemovedHashes []hash.Hash
}

// Subject names what changed: the provider address for display
// ("hashicorp/aws" on the default registry) or `module "path"`.
func (c Change) Subject() string {
	if c.Module != "" {
		return fmt.Sprintf("module %q", c.Module)
	}
	if c.Provider.IsZero() {
		return "(unknown)"
	}
	return c.Provider.String()
}

// String describes the change in one line, such as
// "registry.opentofu.org/hashicorp/aws: upgraded 5.0.0 to 5.1.0".
func (c Change) String() string {
	var b strings.Builder
	b.WriteString(c.Subject())
	b.WriteString(": ")
	switch c.Kind {
	case Added:
		fmt.Fprintf(&b, "added %s", orNone(c.NewVersion))
	case Removed:
		fmt.Fprintf(&b, "removed %s", orNone(c.OldVersion))
	case Upgraded, Downgraded:
		fmt.Fprintf(&b, "%s %s to %s", c.Kind, orNone(c.OldVersion), orNone(c.NewVersion))
	case Repinned:
		fmt.Fprintf(&b, "repinned at %s", orNone(c.NewVersion))
	case ConstraintsChanged:
		fmt.Fprintf(&b, "constraints changed from %q to %q", c.OldConstraints, c.NewConstraints)
	default:
		b.WriteString(c.Kind.String())
	}
	if len(c.AddedHashes) > 0 || len(c.RemovedHashes) > 0 {
		fmt.Fprintf(&b, " (%s added, %d removed)", plural(len(c.AddedHashes), "hash", "hashes"), len(c.RemovedHashes))
	}
	return b.String()
}

// plural spells a count with the singular or the plural noun.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func orNone(v versions.Version) string {
	if v.IsZero() {
		return "(no version)"
	}
	return v.String()
}

// Changes lists the differences between two lock files: providers first,
// sorted by address, then modules, sorted by call path. Identical locks
// give no entry. Either file may be nil (no locks).
func Changes(old, new *File) []Change {
	if old == nil {
		old = New()
	}
	if new == nil {
		new = New()
	}
	var out []Change
	for _, p := range mergedProviderKeys(old, new) {
		o, n := old.providers[p], new.providers[p]
		c := Change{Provider: p}
		switch {
		case o == nil:
			c.Kind, c.NewVersion, c.NewConstraints, c.AddedHashes = Added, n.Version, n.Constraints, normalizeHashes(slices.Clone(n.Hashes))
		case n == nil:
			c.Kind, c.OldVersion, c.OldConstraints, c.RemovedHashes = Removed, o.Version, o.Constraints, normalizeHashes(slices.Clone(o.Hashes))
		default:
			c.OldVersion, c.NewVersion = o.Version, n.Version
			c.OldConstraints, c.NewConstraints = o.Constraints, n.Constraints
			c.AddedHashes, c.RemovedHashes = hashDiff(o.Hashes, n.Hashes)
			c.Kind = kindOf(o.Version, n.Version, false, o.Constraints != n.Constraints, len(c.AddedHashes)+len(c.RemovedHashes) > 0)
		}
		if c.Kind != 0 {
			out = append(out, c)
		}
	}
	for _, path := range mergedModuleKeys(old, new) {
		o, n := old.modules[path], new.modules[path]
		c := Change{Module: path}
		switch {
		case o == nil:
			c.Kind, c.NewVersion, c.NewConstraints, c.AddedHashes = Added, n.Version, n.Constraints, normalizeHashes(slices.Clone(n.Hashes))
		case n == nil:
			c.Kind, c.OldVersion, c.OldConstraints, c.RemovedHashes = Removed, o.Version, o.Constraints, normalizeHashes(slices.Clone(o.Hashes))
		default:
			c.OldVersion, c.NewVersion = o.Version, n.Version
			c.OldConstraints, c.NewConstraints = o.Constraints, n.Constraints
			c.AddedHashes, c.RemovedHashes = hashDiff(o.Hashes, n.Hashes)
			repinned := o.Source != n.Source || o.Commit != n.Commit || o.Digest != n.Digest
			c.Kind = kindOf(o.Version, n.Version, repinned, o.Constraints != n.Constraints, len(c.AddedHashes)+len(c.RemovedHashes) > 0)
		}
		if c.Kind != 0 {
			out = append(out, c)
		}
	}
	return out
}

func kindOf(o, n versions.Version, repinned, constraints, hashes bool) ChangeKind {
	switch {
	case o != n && (o.IsZero() || (!n.IsZero() && o.LessThan(n))):
		return Upgraded
	case o != n:
		return Downgraded
	case repinned:
		return Repinned
	case constraints:
		return ConstraintsChanged
	case hashes:
		return HashesChanged
	}
	return 0
}

func hashDiff(o, n []hash.Hash) (added, removed []hash.Hash) {
	os, ns := normalizeHashes(slices.Clone(o)), normalizeHashes(slices.Clone(n))
	for _, h := range ns {
		if _, found := slices.BinarySearch(os, h); !found {
			added = append(added, h)
		}
	}
	for _, h := range os {
		if _, found := slices.BinarySearch(ns, h); !found {
			removed = append(removed, h)
		}
	}
	return added, removed
}

func mergedProviderKeys(a, b *File) []tfaddr.Provider {
	var keys []tfaddr.Provider
	for k := range a.providers {
		keys = append(keys, k)
	}
	for k := range b.providers {
		if _, ok := a.providers[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, compareProviders)
	return keys
}

func mergedModuleKeys(a, b *File) []string {
	var keys []string
	for k := range a.modules {
		keys = append(keys, k)
	}
	for k := range b.modules {
		if _, ok := a.modules[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// Summary returns a report of changes for people: one line per change,
// then a note asking to review and commit the lock file, like the one
// OpenTofu prints after "tofu init" changes it. It returns "" for no
// changes.
func Summary(changes []Change) string {
	if len(changes) == 0 {
		return ""
	}
	var b strings.Builder
	for _, c := range changes {
		b.WriteString("- ")
		b.WriteString(c.String())
		b.WriteString("\n")
	}
	b.WriteString("\nThe dependency selections recorded in the .terraform.lock.hcl file have\n" +
		"changed. Review those changes and commit them to your version control\n" +
		"system if they represent changes you intended to make.\n")
	return b.String()
}

// Equal reports whether two files lock the same providers and modules with
// the same versions, constraints, pins and hash sets. Headers, warnings and
// kept unknown items are not compared.
func Equal(a, b *File) bool { return len(Changes(a, b)) == 0 }

// EqualIgnoringHashes is like [Equal] but ignores hash sets: it reports
// whether the two files select the same things.
func EqualIgnoringHashes(a, b *File) bool {
	for _, c := range Changes(a, b) {
		if c.Kind != HashesChanged {
			return false
		}
	}
	return true
}

// Merge recovers what a tool that does not know module locks dropped when
// it rewrote the file: it returns a copy of rewritten with every module
// lock, and every kept unknown top-level item, of previous that rewritten
// lacks. OpenTofu 1.12 warns about module blocks and loses them on its next
// write; merging the file it wrote with the file before restores them.
// Provider locks and the header come from rewritten alone.
func Merge(rewritten, previous *File) *File {
	out := rewritten.Clone()
	for path, m := range previous.modules {
		if _, ok := out.modules[path]; !ok {
			out.modules[path] = m.clone()
		}
	}
	for _, u := range previous.unknown {
		if !slices.Contains(out.unknown, u) {
			out.unknown = append(out.unknown, u)
		}
	}
	return out
}
