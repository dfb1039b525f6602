package resolve

import (
	"fmt"
	"strings"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/address"
)

// ConflictError reports that no available version satisfies every
// constraint on a package together, although each constraint alone
// allows some version. It lists every constraint, where it came from, and
// the versions that exist.
type ConflictError struct {
	// Package is the package whose constraints conflict.
	Package source.Package
	// Call is the module call path, for a module resolved on its own
	// (empty for providers and for unified modules).
	Call         string
	Requirements []Requirement // those with a constraint, in a stable order
	// Available lists the versions the source offers.
	Available []versions.Version
}

// Error implements error.
func (e *ConflictError) Error() string {
	return fmt.Sprintf("no version of %s satisfies all constraints: %s; available: %s",
		packageName(e.Package, e.Call), constraintList(e.Requirements), versionList(e.Available))
}

// NoMatchError reports that a single requirement allows none of the
// available versions of a package.
//
// For a module whose versions are tags (a git or OCI repository), Tags
// holds the names of the version tags seen, in version order, and the
// message lists them:
//
//	module "net": no tag of git::https://example.com/net.git matches ~> 2.0 (required by root module (main.tf:5)); tags seen: v1.0.0, v1.1.0
//
// Registry modules and providers list the available versions instead.
type NoMatchError struct {
	// Package is the package no version of which matches.
	Package source.Package
	Call    string // module call path, or empty
	// Requirement is the constraint, and where it came from, that matches nothing.
	Requirement Requirement
	// Available lists the versions the source offers.
	Available []versions.Version
	// Tags are the tag names Available are published under (the lister's
	// Available.Ref, or the version itself when the tag spells it so);
	// nil for packages whose versions are not tags.
	Tags []string
}

// Error implements error.
func (e *NoMatchError) Error() string {
	if len(e.Tags) > 0 {
		prefix := ""
		if e.Call != "" {
			prefix = fmt.Sprintf("module %q: ", e.Call)
		}
		c := e.Requirement.Constraints.String()
		if c == "" {
			c = "any release version"
		}
		return fmt.Sprintf("%sno tag of %s matches %s (required by %s); tags seen: %s",
			prefix, display(e.Package), c, e.Requirement.Origin, strings.Join(e.Tags, ", "))
	}
	return fmt.Sprintf("no available version of %s matches the constraint: %s; available: %s",
		packageName(e.Package, e.Call), constraintList([]Requirement{e.Requirement}), versionList(e.Available))
}

// NoVersionsError reports that the source knows a package but lists no
// versions of it.
type NoVersionsError struct {
	// Package is the package the source lists no versions of.
	Package source.Package
	// Requirements are the requirements on the package, naming who asked for it.
	Requirements []Requirement
}

// Error implements error. For a git or OCI module the message says that
// the repository has no tag that is a version.
func (e *NoVersionsError) Error() string {
	what := "no published versions"
	if tagged(e.Package) {
		what = "no tag that is a version"
	}
	return fmt.Sprintf("%s has %s (required by %s)", display(e.Package), what, originList(e.Requirements))
}

// UnknownPackageError reports that the source does not know a package. It
// wraps the source's error, which wraps [source.ErrNotFound].
type UnknownPackageError struct {
	// Package is the package the source does not know.
	Package source.Package
	// Requirements are the requirements on the package, naming who asked for it.
	Requirements []Requirement
	// Err is the source's error; it wraps [source.ErrNotFound].
	Err error
}

// Error implements error.
func (e *UnknownPackageError) Error() string {
	return fmt.Sprintf("unknown %s %s (required by %s): %v", packageKind(e.Package), display(e.Package), originList(e.Requirements), e.Err)
}

// Unwrap returns the source's error.
func (e *UnknownPackageError) Unwrap() error { return e.Err }

// ListError reports that asking the source for the versions of a package
// failed for another reason than the package being unknown.
type ListError struct {
	// Package is the package whose versions could not be listed.
	Package source.Package
	// Err is the source's error.
	Err error
}

// Error implements error.
func (e *ListError) Error() string {
	return fmt.Sprintf("listing the versions of %s: %v", display(e.Package), e.Err)
}

// Unwrap returns the source's error.
func (e *ListError) Unwrap() error { return e.Err }

// LockedMismatchError reports that the version of a provider in the lock
// file is no longer allowed by the configured constraints. As OpenTofu, the
// solver then asks for an explicit upgrade rather than choosing another
// version silently.
type LockedMismatchError struct {
	// Provider is the provider whose locked version no longer matches.
	Provider tfaddr.Provider
	// Locked is the version the lock file records.
	Locked      versions.Version
	Constraints versions.Constraints // all constraints together
	// Requirements are the constraints on the provider, naming where each came from.
	Requirements []Requirement
	// UpgradeCommand is the command the message advises
	// ([Options.UpgradeCommand]); "" reads "tofu init -upgrade".
	UpgradeCommand string
}

// Error implements error.
func (e *LockedMismatchError) Error() string {
	upgrade := e.UpgradeCommand
	if upgrade == "" {
		upgrade = "tofu init -upgrade"
	}
	return fmt.Sprintf("locked provider %s %s does not match configured version constraint %s; must use %s to allow selection of new versions (constraints: %s)",
		e.Provider, e.Locked, e.Constraints, upgrade, constraintList(e.Requirements))
}

// LockedUnavailableError reports that the locked version of a package is
// no longer offered by the source.
type LockedUnavailableError struct {
	// Package is the package whose locked version the source no longer offers.
	Package source.Package
	// Call is the module call path, or empty for a provider or a unified module.
	Call string
	// Locked is the version the lock file records.
	Locked versions.Version
	// Available lists the versions the source offers now.
	Available []versions.Version
}

// Error implements error.
func (e *LockedUnavailableError) Error() string {
	return fmt.Sprintf("the previously-selected version %s of %s is no longer available; available: %s; use an upgrade to select another version",
		e.Locked, packageName(e.Package, e.Call), versionList(e.Available))
}

// BuiltinConstraintError reports a version constraint on a built-in
// provider (terraform.io/builtin/...), which has only the version built
// into the program.
type BuiltinConstraintError struct {
	// Provider is the built-in provider (terraform.io/builtin/...).
	Provider tfaddr.Provider
	// Requirement is the version constraint on it, and where it came from.
	Requirement Requirement
}

// Error implements error.
func (e *BuiltinConstraintError) Error() string {
	return fmt.Sprintf("%s: built-in providers do not support explicit version constraints (%s requires %s)",
		e.Provider, e.Requirement.Origin, e.Requirement.Constraints)
}

// UnknownBuiltinError reports a built-in provider address
// (terraform.io/builtin/X) other than terraform.io/builtin/terraform, the
// only built-in provider OpenTofu has. The message is OpenTofu's.
type UnknownBuiltinError struct {
	// Provider is the unknown built-in provider address.
	Provider tfaddr.Provider
	// Requirements are the requirements on it, naming who asked for it.
	Requirements []Requirement
}

// Error implements error.
func (e *UnknownBuiltinError) Error() string {
	return fmt.Sprintf("%s: this OpenTofu release has no built-in provider named %q (required by %s)",
		e.Provider, e.Provider.Type, originList(e.Requirements))
}

func packageKind(p source.Package) string {
	if _, ok := p.(source.ModulePackage); ok {
		return "module"
	}
	return "provider"
}

func packageName(p source.Package, call string) string {
	if call != "" {
		return fmt.Sprintf("module %q (%s)", call, display(p))
	}
	return fmt.Sprintf("%s %s", packageKind(p), display(p))
}

// tagged reports whether p is a module whose versions are tags: a git or
// OCI repository.
func tagged(p source.Package) bool {
	m, ok := p.(source.ModulePackage)
	if !ok {
		return false
	}
	ms, err := m.Address()
	r, ok := ms.(address.Remote)
	return err == nil && ok && (r.Kind == address.KindGit || r.Kind == address.KindOCI)
}

// display names a package in messages: a provider by its full address
// (the host is never left out), a module by its source without
// credentials.
func display(p source.Package) string {
	switch p := p.(type) {
	case source.ProviderPackage:
		if p.Addr.IsZero() {
			return "<no provider>"
		}
		return p.Addr.String()
	case nil:
		return "<no package>"
	}
	return address.Redact(p.ForDisplay())
}

func constraintList(reqs []Requirement) string {
	parts := make([]string, 0, len(reqs))
	for _, r := range reqs {
		c := r.Constraints.String()
		if c == "" {
			c = "any version"
		}
		parts = append(parts, fmt.Sprintf("%s requires %s", r.Origin, c))
	}
	return strings.Join(parts, "; ")
}

func originList(reqs []Requirement) string {
	seen := map[string]bool{}
	var parts []string
	for _, r := range reqs {
		s := r.Origin.String()
		if !seen[s] {
			seen[s] = true
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return "caller"
	}
	return strings.Join(parts, ", ")
}

func versionList(vs []versions.Version) string {
	if len(vs) == 0 {
		return "none"
	}
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.String()
	}
	return strings.Join(parts, " ")
}
