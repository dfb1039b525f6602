package lockfile

import (
	"cmp"
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
	// Repinned: a module's source, ref, tag, commit or digest changed
	// with its version unchanged (an edited "ref" argument, a branch that
	// moved on, a moved git tag), or the module gained or lost its
	// version.
	Repinned
	// ConstraintsChanged: the version and pin are unchanged but the
	// recorded constraints differ.
	ConstraintsChanged
	// HashesChanged: only the hash set differs.
	HashesChanged
	// Rerecorded: a module lock the old file lacked, recorded again for
	// the version (or commit) that was installed already, as
	// .terraform/modules/modules.json says: the selection was kept, not
	// made. [Changes] never reports it; an installer that kept the
	// installed selection sets it in place of Added.
	Rerecorded
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
	case Rerecorded:
		return "re-recorded"
	}
	return fmt.Sprintf("ChangeKind(%d)", int(k))
}

// Change is one difference between two lock files, for a provider (Module
// is "") or a module call (Provider is the zero value). Kind is the most
// significant difference; the other fields say everything that changed.
type Change struct {
	// Kind is the most significant difference.
	Kind ChangeKind
	// Provider is the address of the provider that changed, or the zero
	// value for a module.
	Provider tfaddr.Provider
	// Module is the call path of the module that changed, or "" for a
	// provider.
	Module string

	// OldVersion and NewVersion are the versions before and after; the
	// zero Version where there is none (an added or removed lock, or a
	// module without a version).
	OldVersion, NewVersion versions.Version
	// OldConstraints and NewConstraints are the recorded constraint
	// strings before and after ("" for none).
	OldConstraints, NewConstraints string
	// OldPin and NewPin are, for a module, what identifies its package
	// beside the version, before and after; the zero value where there is
	// no lock, and always for a provider.
	OldPin, NewPin ModulePin
	// AddedHashes and RemovedHashes are the hash set difference, sorted.
	AddedHashes, RemovedHashes []hash.Hash
}

// ModulePin is what a module lock records of its package beside the
// version and constraints: the fields of [ModuleLock] of the same names.
type ModulePin struct {
	// Source is [ModuleLock.Source]: the canonical package address.
	Source string
	// Subdir is [ModuleLock.Subdir]: the package's module subdirectory, "" for its root.
	Subdir string
	// Ref is [ModuleLock.Ref]: the git source's "ref" argument as written, or "".
	Ref string
	// Tag is [ModuleLock.Tag]: the OCI source's "tag" argument as written, or "".
	Tag string
	// Commit is [ModuleLock.Commit]: the full git commit fetched, or "" for non-git.
	Commit string
	// Digest is [ModuleLock.Digest]: the OCI manifest digest, or "" for non-OCI.
	Digest string
}

// Pin returns the lock's source, ref, tag, commit and digest.
func (m *ModuleLock) Pin() ModulePin {
	return ModulePin{Source: m.Source, Subdir: m.Subdir, Ref: m.Ref, Tag: m.Tag, Commit: m.Commit, Digest: m.Digest}
}

// diff describes what differs between two pins, in the order source, ref,
// tag, commit, digest: "ref v1.0.0 -> v1.1.0, commit 0123... -> 4567...",
// with "(none)" for an empty value; "" when they are equal.
func (o ModulePin) diff(n ModulePin) string {
	var parts []string
	for _, f := range []struct{ name, o, n string }{
		{"source", o.Source, n.Source},
		{"subdir", o.Subdir, n.Subdir},
		{"ref", o.Ref, n.Ref},
		{"tag", o.Tag, n.Tag},
		{"commit", o.Commit, n.Commit},
		{"digest", o.Digest, n.Digest},
	} {
		if f.o != f.n {
			parts = append(parts, fmt.Sprintf("%s %s -> %s", f.name, cmp.Or(f.o, "(none)"), cmp.Or(f.n, "(none)")))
		}
	}
	return strings.Join(parts, ", ")
}

// Subject names what changed: the fully-qualified provider address, as the
// lock file writes it, or `module "path"`.
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
// "registry.opentofu.org/hashicorp/aws: upgraded 5.0.0 to 5.1.0 (2 hashes
// added, 2 removed)" or `module "net": repinned: ref v1.0.0 -> v1.1.0,
// commit 0123... -> 4567... (1 hash added, 1 removed)`. A repinned module
// names each part of its pin that changed. The hash counts are left out for an added or removed
// lock, and a count of zero is not written.
func (c Change) String() string {
	var b strings.Builder
	b.WriteString(c.Subject())
	b.WriteString(": ")
	switch c.Kind {
	case Added:
		fmt.Fprintf(&b, "added %s", orNone(c.NewVersion))
	case Rerecorded:
		b.WriteString("re-recorded")
		if !c.NewVersion.IsZero() {
			fmt.Fprintf(&b, " %s", c.NewVersion)
		}
		if c.NewPin.Commit != "" {
			fmt.Fprintf(&b, " at commit %s", c.NewPin.Commit)
		}
		b.WriteString(", as installed")
		return b.String()
	case Removed:
		fmt.Fprintf(&b, "removed %s", orNone(c.OldVersion))
	case Upgraded, Downgraded:
		fmt.Fprintf(&b, "%s %s to %s", c.Kind, orNone(c.OldVersion), orNone(c.NewVersion))
	case Repinned:
		switch {
		case c.OldVersion != c.NewVersion:
			fmt.Fprintf(&b, "repinned from %s to %s", orNone(c.OldVersion), orNone(c.NewVersion))
		case c.NewVersion.IsZero():
			b.WriteString("repinned")
		default:
			fmt.Fprintf(&b, "repinned at %s", c.NewVersion)
		}
		if d := c.OldPin.diff(c.NewPin); d != "" {
			b.WriteString(": " + d)
		}
	case ConstraintsChanged:
		fmt.Fprintf(&b, "constraints changed from %q to %q", c.OldConstraints, c.NewConstraints)
	default:
		b.WriteString(c.Kind.String())
	}
	// The hashes of an added or removed lock are all new or all gone: no
	// news. Otherwise say what the hash set gained and lost.
	if c.Kind == Added || c.Kind == Removed {
		return b.String()
	}
	switch a, r := len(c.AddedHashes), len(c.RemovedHashes); {
	case a > 0 && r > 0:
		fmt.Fprintf(&b, " (%s added, %d removed)", plural(a, "hash", "hashes"), r)
	case a > 0:
		fmt.Fprintf(&b, " (%s added)", plural(a, "hash", "hashes"))
	case r > 0:
		fmt.Fprintf(&b, " (%s removed)", plural(r, "hash", "hashes"))
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
		if c, ok := diffLock(Change{Provider: p}, providerState(old.providers[p]), providerState(new.providers[p])); ok {
			out = append(out, c)
		}
	}
	for _, path := range mergedModuleKeys(old, new) {
		if c, ok := diffLock(Change{Module: path}, moduleState(old.modules[path]), moduleState(new.modules[path])); ok {
			out = append(out, c)
		}
	}
	return out
}

// lockState is what Changes compares of a provider or module lock:
// constraints in normalized form, as the writer writes them.
type lockState struct {
	version     versions.Version
	constraints string
	hashes      []hash.Hash
	pin         ModulePin // a module's
}

func providerState(p *ProviderLock) *lockState {
	if p == nil {
		return nil
	}
	return &lockState{version: p.Version, constraints: canonicalConstraints(p.Constraints, versions.ParseConstraints), hashes: p.Hashes}
}

func moduleState(m *ModuleLock) *lockState {
	if m == nil {
		return nil
	}
	return &lockState{version: m.Version, constraints: canonicalConstraints(m.Constraints, versions.ParseModuleConstraints), hashes: m.Hashes, pin: m.Pin()}
}

// diffLock fills in c for a lock that is in the old file (o), the new
// file (n) or both, and reports whether anything differs.
func diffLock(c Change, o, n *lockState) (Change, bool) {
	switch {
	case o == nil:
		c.Kind, c.NewVersion, c.NewConstraints, c.NewPin, c.AddedHashes = Added, n.version, n.constraints, n.pin, normalizeHashes(slices.Clone(n.hashes))
	case n == nil:
		c.Kind, c.OldVersion, c.OldConstraints, c.OldPin, c.RemovedHashes = Removed, o.version, o.constraints, o.pin, normalizeHashes(slices.Clone(o.hashes))
	default:
		c.OldVersion, c.NewVersion = o.version, n.version
		c.OldPin, c.NewPin = o.pin, n.pin
		c.OldConstraints, c.NewConstraints = o.constraints, n.constraints
		c.AddedHashes, c.RemovedHashes = hashDiff(o.hashes, n.hashes)
		c.Kind = kindOf(o.version, n.version, o.pin != n.pin, o.constraints != n.constraints, len(c.AddedHashes)+len(c.RemovedHashes) > 0)
	}
	return c, c.Kind != 0
}

// kindOf classifies a change of a lock that both files have. A module that
// gains or loses its version (a switch between a version constraint and a
// bare git ref or OCI digest) has no order to compare, so it is Repinned.
func kindOf(o, n versions.Version, repinned, constraints, hashes bool) ChangeKind {
	switch {
	case o != n && (o.IsZero() || n.IsZero()):
		return Repinned
	case o != n && o.LessThan(n):
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

// Summary returns a report of changes for people: one line per change
// ([Change.String]), then a note asking to review and commit the lock file.
// When only providers changed, the note is the one OpenTofu prints after
// "tofu init" changes the file, word for word; when modules changed, it
// names them. It returns "" for no changes.
func Summary(changes []Change) string { return SummaryBy("OpenTofu", changes) }

// SummaryBy is [Summary] spoken by another tool: "Terraform" gives the note
// terraform 1.11 prints after "terraform init" changes the file, word for
// word for providers alone (its text is OpenTofu's with its name).
func SummaryBy(tool string, changes []Change) string {
	if len(changes) == 0 {
		return ""
	}
	var b strings.Builder
	providers, modules := false, false
	for _, c := range changes {
		b.WriteString("- ")
		b.WriteString(c.String())
		b.WriteString("\n")
		if c.Module != "" {
			modules = true
		} else {
			providers = true
		}
	}
	b.WriteString("\n")
	b.WriteString(changedNote(tool, providers, modules))
	return b.String()
}

// changedNote is the request to review and commit a changed lock file.
// For providers alone it is OpenTofu 1.12.6's text
// (internal/command/views/init.go, InitHuman.LockFileChanged) with its
// line breaks; otherwise it says which kinds of selections changed.
func changedNote(tool string, providers, modules bool) string {
	const rest = "in the .terraform.lock.hcl file. Review those changes and commit them to your\n" +
		"version control system if they represent changes you intended to make.\n"
	switch {
	case modules && providers:
		return tool + " has made some changes to the provider and module dependency selections\nrecorded " + rest
	case modules:
		return tool + " has made some changes to the module dependency selections recorded\n" + rest
	}
	return tool + " has made some changes to the provider dependency selections recorded\n" + rest
}

// Equal reports whether two files lock the same providers and modules with
// the same versions, constraints, pins and hash sets, including the module
// locks keyed by source address ([File.SourceModules]). Headers, warnings
// and kept unknown items are not compared.
func Equal(a, b *File) bool { return len(Changes(a, b)) == 0 && equalBySource(a, b, false) }

// EqualIgnoringHashes is like [Equal] but ignores hash sets: it reports
// whether the two files select the same things.
func EqualIgnoringHashes(a, b *File) bool {
	if !equalBySource(a, b, true) {
		return false
	}
	for _, c := range Changes(a, b) {
		if c.Kind != HashesChanged {
			return false
		}
	}
	return true
}

// Merge recovers what a tool that does not know module locks dropped when
// it rewrote the file: it returns a copy of rewritten with every module
// lock (by call path, or keyed by source address), and every kept unknown
// top-level item, of previous that rewritten lacks. OpenTofu 1.12 warns about module blocks and loses them on its next
// write; merging the file it wrote with the file before restores them.
// Provider locks and the header come from rewritten alone. A nil file is
// an empty one.
func Merge(rewritten, previous *File) *File {
	if rewritten == nil {
		rewritten = New()
	}
	if previous == nil {
		previous = New()
	}
	out := rewritten.Clone()
	for path, m := range previous.modules {
		if _, ok := out.modules[path]; !ok {
			out.modules[path] = m.clone()
		}
	}
	for _, m := range previous.bySource {
		if !slices.ContainsFunc(out.bySource, func(o *ModuleLock) bool { return compareBySource(o, m) == 0 }) {
			out.bySource = append(out.bySource, m.clone())
		}
	}
	for _, u := range previous.unknown {
		if !slices.Contains(out.unknown, u) {
			out.unknown = append(out.unknown, u)
		}
	}
	return out
}
