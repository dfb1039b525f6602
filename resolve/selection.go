package resolve

import (
	"fmt"
	"io"
	"slices"
	"strings"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/address"
)

// Reason says why the solver picked what it picked.
type Reason int

const (
	// Newest: the newest available version allowed by every constraint
	// (no usable lock entry).
	Newest Reason = iota
	// Locked: the version in the lock file, still allowed by every
	// constraint, kept.
	Locked
	// Upgraded: an upgrade was asked; the newest allowed version was
	// picked regardless of the lock file.
	Upgraded
	// Translated: the lock file held the predecessor address
	// (registry.terraform.io/hashicorp/X) and its version was carried over
	// to registry.opentofu.org/hashicorp/X.
	Translated
	// Relocked: a module's locked version (or source) no longer fits its
	// call; the newest allowed version was picked.
	Relocked
	// Builtin: a built-in provider; never looked up, never locked.
	Builtin
	// Unmanaged: a dev override or an unmanaged (reattached) provider;
	// never looked up, and its lock entry is left as it is.
	Unmanaged
	// Pinned: a module pinned by its source string (git ref, OCI tag or
	// digest) or a remote module without versions; nothing to resolve.
	Pinned
)

var reasonNames = [...]string{"newest", "locked", "upgraded", "translated", "relocked", "builtin", "unmanaged", "pinned"}

// String returns the reason as one lower-case word.
func (r Reason) String() string {
	if r >= 0 && int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return fmt.Sprintf("Reason(%d)", int(r))
}

// ProviderPick is the selection for one provider.
type ProviderPick struct {
	// Addr is the provider's address.
	Addr tfaddr.Provider
	// Version is the selected version; zero for built-in and unmanaged
	// providers.
	Version versions.Version
	// Constraints is the intersection of every requirement's constraint:
	// what the lock file records as "constraints".
	Constraints versions.Constraints
	// Requirements are all requirements on this provider, sorted by origin.
	Requirements []Requirement
	// Reason says why Version was selected.
	Reason Reason
	// DevOverride is true for an Unmanaged provider that a dev override
	// of the CLI configuration names (and that is not reattached too).
	DevOverride bool
	// Locked is the version the lock file held before (for Translated, the
	// predecessor's), or zero.
	Locked versions.Version
	// Available is the number of versions the source listed.
	Available int
}

// ModulePick is the selection for one module call.
type ModulePick struct {
	Call string // call path: "vpc", "app.vpc"
	// Package is the module package: Source, and Version or Ref. For a
	// version picked from the lister's list with another reason than
	// Locked, Pin is the commit or digest the lister reported for that
	// version (source.Available.Pin), or empty; a fetcher then checks that
	// what it brings has that identity, and a git source can still bring a
	// version whose tag is gone upstream from its cache. A Locked pick
	// leaves Pin empty: the lock file's commit or digest is the one to
	// check. Ref stays empty for a version pick, since a source refuses a
	// package with both a Version and a Ref; see Tag.
	Package source.ModulePackage
	// Tag is the name the picked version is published under at its origin
	// (source.Available.Ref: a git tag "v1.2.0", an OCI tag "1.2.0_build")
	// when the lister reported one; empty otherwise.
	Tag string
	// LockSource is the source the lock file records for the call (see
	// [Requirement].LockSource); never empty.
	LockSource string
	// Constraints is the call's constraint (in unification mode, the
	// intersection over every call of the same source).
	Constraints versions.Constraints
	// Requirements are the requirements on the call (in unification mode,
	// on every call of the same source).
	Requirements []Requirement
	// Reason says why the package was selected.
	Reason Reason
	// Locked is the version the lock file held before, or zero.
	Locked versions.Version
	// Available is the number of versions the source listed.
	Available int
}

// Selection is the result of [Resolve]: one pick per provider, one per
// remote module call, each with the reason it was made.
type Selection struct {
	Providers []ProviderPick // sorted by address
	Modules   []ModulePick   // sorted by call path
}

// Provider returns the pick for addr, or nil.
func (s *Selection) Provider(addr tfaddr.Provider) *ProviderPick {
	for i := range s.Providers {
		if s.Providers[i].Addr == addr {
			return &s.Providers[i]
		}
	}
	return nil
}

// Module returns the pick for the module call path, or nil.
func (s *Selection) Module(call string) *ModulePick {
	for i := range s.Modules {
		if s.Modules[i].Call == call {
			return &s.Modules[i]
		}
	}
	return nil
}

// Explain writes one paragraph per pick, saying what was picked and why.
func (s *Selection) Explain(w io.Writer) error {
	var b strings.Builder
	for i := range s.Providers {
		b.WriteString(s.Providers[i].Explain())
		b.WriteString("\n")
	}
	for i := range s.Modules {
		b.WriteString(s.Modules[i].Explain())
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Brief says why the provider was picked in a word or a few, for a
// progress line such as "- Selected hashicorp/aws v5.1.0 (locked)": the
// reason's word, except that an upgrade says what it did to the locked
// version ("upgraded from 5.0.0", "downgraded from 5.2.0", "already the
// newest"; "newest" when nothing was locked), and a dev override says
// "dev override" (an unmanaged, reattached provider "unmanaged").
func (p *ProviderPick) Brief() string {
	if p.Reason == Unmanaged && p.DevOverride {
		return "dev override"
	}
	return briefReason(p.Reason, p.Version, p.Locked)
}

// Brief says why the module was picked, like [ProviderPick.Brief].
func (p *ModulePick) Brief() string {
	return briefReason(p.Reason, p.Package.Version, p.Locked)
}

func briefReason(r Reason, v, locked versions.Version) string {
	if r != Upgraded || v.IsZero() {
		return r.String()
	}
	switch {
	case locked.IsZero():
		return Newest.String()
	case locked == v:
		return "already the newest"
	case locked.LessThan(v):
		return "upgraded from " + locked.String()
	}
	return "downgraded from " + locked.String()
}

// Explain describes the pick: a first line "ADDR VERSION: why", then one
// line per requirement.
func (p *ProviderPick) Explain() string {
	var b strings.Builder
	fmt.Fprintf(&b, "provider %s", p.Addr)
	if !p.Version.IsZero() {
		fmt.Fprintf(&b, " %s", p.Version)
	}
	b.WriteString(": ")
	if p.Reason == Unmanaged && p.DevOverride {
		b.WriteString("dev override in the CLI configuration; not looked up, lock entry left as it is")
	} else {
		b.WriteString(explainReason(p.Reason, p.Version, p.Locked, p.Constraints, p.Available))
	}
	b.WriteString("\n")
	writeRequirements(&b, p.Requirements)
	return b.String()
}

// Explain describes the pick like [ProviderPick.Explain].
func (p *ModulePick) Explain() string {
	var b strings.Builder
	fmt.Fprintf(&b, "module %q %s", p.Call, address.Redact(p.Package.ForDisplay()))
	if p.Tag != "" {
		fmt.Fprintf(&b, " (tag %s)", p.Tag)
	}
	b.WriteString(": ")
	b.WriteString(explainReason(p.Reason, p.Package.Version, p.Locked, p.Constraints, p.Available))
	b.WriteString("\n")
	writeRequirements(&b, p.Requirements)
	return b.String()
}

func explainReason(r Reason, v, locked versions.Version, c versions.Constraints, available int) string {
	cs := c.String()
	if cs == "" {
		cs = "any version"
	}
	switch r {
	case Newest:
		return fmt.Sprintf("newest of %d available versions allowed by %s", available, cs)
	case Locked:
		return fmt.Sprintf("locked version kept; still allowed by %s", cs)
	case Upgraded:
		if !locked.IsZero() && locked != v {
			return fmt.Sprintf("upgrade asked: newest of %d available versions allowed by %s (was %s)", available, cs, locked)
		}
		return fmt.Sprintf("upgrade asked: newest of %d available versions allowed by %s", available, cs)
	case Translated:
		return fmt.Sprintf("locked version of the predecessor registry.terraform.io address carried over; allowed by %s", cs)
	case Relocked:
		if locked.IsZero() {
			return fmt.Sprintf("lock entry was for another source; newest of %d available versions allowed by %s", available, cs)
		}
		return fmt.Sprintf("locked version %s no longer allowed; newest of %d available versions allowed by %s", locked, available, cs)
	case Builtin:
		return "built-in provider; not looked up, not locked"
	case Unmanaged:
		return "unmanaged provider (TF_REATTACH_PROVIDERS); not looked up, lock entry left as it is"
	case Pinned:
		return "pinned by its source address; no version to resolve"
	}
	return r.String()
}

func writeRequirements(b *strings.Builder, reqs []Requirement) {
	for _, r := range reqs {
		c := r.Constraints.String()
		if c == "" {
			c = "any version"
		}
		fmt.Fprintf(b, "  %s requires %s\n", r.Origin, c)
	}
}

// sortRequirements orders requirements by origin (state last), then by
// constraint text, for stable messages.
func sortRequirements(reqs []Requirement) {
	slices.SortStableFunc(reqs, func(a, b Requirement) int {
		if a.Origin.State != b.Origin.State {
			if a.Origin.State {
				return 1
			}
			return -1
		}
		if c := strings.Compare(a.Origin.Module, b.Origin.Module); c != 0 {
			return c
		}
		if c := strings.Compare(a.Origin.Range.Filename, b.Origin.Range.Filename); c != 0 {
			return c
		}
		if c := a.Origin.Range.Start.Line - b.Origin.Range.Start.Line; c != 0 {
			return c
		}
		return strings.Compare(a.Constraints.String(), b.Constraints.String())
	})
}
