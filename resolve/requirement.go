package resolve

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/internal/provaddr"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/address"
)

// DefaultRegistryHost is the registry host that provider source addresses
// and module registry addresses without a host name refer to, unless an
// option says otherwise. It is OpenTofu's default.
//
// Deprecated: use [address.DefaultRegistryHost], the one name of this
// host.
const DefaultRegistryHost = address.DefaultRegistryHost

// A Requirement is one demand on one package: a version constraint, and
// where it was stated.
//
// Package is a [source.ProviderPackage] with only Addr set, or a
// [source.ModulePackage] with Source (and Ref, for a module pinned by its
// source string) set. Versions and platforms are left unset.
type Requirement struct {
	// Package is the package demanded, with only its address (see above).
	Package source.Package
	// Constraints is the version constraint; the zero value allows any
	// version except pre-releases.
	Constraints versions.Constraints
	// Origin says where the requirement was stated.
	Origin Origin
	// Call is, for a module requirement, the call path of the module call
	// it selects a version for ("vpc", "app.vpc"). Empty for providers.
	Call string
	// LockSource is, for a module requirement, the source the lock file
	// records: the package address with its "//subdir" and without
	// download options. Empty means Package's Source without credentials
	// (address.StripCredentials): a lock file never holds one.
	LockSource string
	// Managed is set for a module call constrained by a tflock annotation
	// ([github.com/tflock/tflock/resolve/config.AnnotationPrefix]), whose git "ref" or OCI "tag" argument tflock
	// writes.
	Managed bool
	// ManagedTag is, for a Managed call, that "ref" or "tag" argument as the
	// source writes it now ("" when it has none).
	ManagedTag string
}

// String returns a one-line description: `module "app" (main.tf:3)
// requires registry.opentofu.org/hashicorp/aws >= 2.0.0`.
func (r Requirement) String() string {
	c := r.Constraints.String()
	if c == "" {
		c = "any version"
	}
	name := "<no package>"
	switch p := r.Package.(type) {
	case source.ProviderPackage:
		if !p.Addr.IsZero() {
			name = p.Addr.String()
		}
	case source.ModulePackage:
		name = p.ForDisplay()
	}
	if r.Call != "" {
		return fmt.Sprintf("%s requires module %q (%s) %s", r.Origin, r.Call, name, c)
	}
	return fmt.Sprintf("%s requires %s %s", r.Origin, name, c)
}

// Origin is where a [Requirement] comes from.
type Origin struct {
	// Module is the call path of the module whose configuration states the
	// requirement: "" for the root module, "app", "app.db".
	Module string
	// Range is the source range of the version argument, or of the
	// declaration when there is no version argument. Its Filename is the
	// file path as the reader was given it.
	Range hcl.Range
	// State is set for requirements that come from a state file rather
	// than from configuration; Range.Filename then names the state file
	// (when known) and Module is empty.
	State bool
}

// String returns the origin for messages: `module "app" (modules/app/main.tf:12)`,
// `root module (main.tf:3)`, `state (terraform.tfstate)`, or `caller` when
// nothing is known.
func (o Origin) String() string {
	var who string
	switch {
	case o.State:
		who = "state"
	case o.Module != "":
		who = fmt.Sprintf("module %q", o.Module)
	case o.Range.Filename != "":
		who = "root module"
	default:
		return "caller"
	}
	switch {
	case o.Range.Filename == "":
		return who
	case o.State || o.Range.Start.Line == 0:
		return fmt.Sprintf("%s (%s)", who, o.Range.Filename)
	}
	return fmt.Sprintf("%s (%s:%d)", who, o.Range.Filename, o.Range.Start.Line)
}

// ModuleSourceKind classifies a module source string.
type ModuleSourceKind int

const (
	// ModuleSourceLocal is a path in the same package: "./x" or "../x".
	// Local modules are never locked.
	ModuleSourceLocal ModuleSourceKind = iota
	// ModuleSourceRegistry is a module registry address:
	// "[host/]namespace/name/system[//subdir]".
	ModuleSourceRegistry
	// ModuleSourceRemote is any other remote source: git, OCI, HTTP
	// archives, and the go-getter shorthands ("github.com/org/repo").
	ModuleSourceRemote
)

// String returns "local", "registry" or "remote".
func (k ModuleSourceKind) String() string {
	switch k {
	case ModuleSourceLocal:
		return "local"
	case ModuleSourceRegistry:
		return "registry"
	case ModuleSourceRemote:
		return "remote"
	}
	return fmt.Sprintf("ModuleSourceKind(%d)", int(k))
}

// ClassifyModuleSource tells local, registry and other remote module source
// strings apart, as source/address parses them. A string that does not
// parse is reported as remote.
func ClassifyModuleSource(s string) ModuleSourceKind {
	ms, err := source.ModulePackage{Source: s}.Address()
	if err != nil {
		return ModuleSourceRemote
	}
	return ClassifyModuleAddress(ms)
}

// ClassifyModuleAddress is [ClassifyModuleSource] for a source address
// already parsed (with whatever default registry host applies).
func ClassifyModuleAddress(ms address.ModuleSource) ModuleSourceKind {
	switch ms.(type) {
	case address.Local:
		return ModuleSourceLocal
	case address.Registry:
		return ModuleSourceRegistry
	}
	return ModuleSourceRemote
}

// ParseProviderSource parses a provider source address. An address without
// a host name ("hashicorp/aws", or a bare type "aws", which means
// "hashicorp/aws") is on defaultHost ([address.DefaultRegistryHost] when
// empty). Legacy addresses ("-/aws"), which OpenTofu refuses when it
// installs, are rejected.
//
// Deprecated: use [address.ParseProviderSourceWith], tflock's one public
// provider-address parser, and refuse an address whose Kind is
// [address.ProviderLegacy] where a namespace is needed.
func ParseProviderSource(s, defaultHost string) (tfaddr.Provider, error) {
	return provaddr.ParseNotLegacy(s, cmp.Or(defaultHost, address.DefaultRegistryHost))
}

// ProviderRequirements returns one requirement without a constraint for
// each distinct provider of addrs, sorted by address, all with the given
// origin: the way for a caller to say "these providers stay required" (for
// instance the providers of a state it read itself).
func ProviderRequirements(addrs []tfaddr.Provider, origin Origin) []Requirement {
	addrs = slices.DeleteFunc(slices.Clone(addrs), tfaddr.Provider.IsZero)
	slices.SortFunc(addrs, func(a, b tfaddr.Provider) int { return strings.Compare(a.String(), b.String()) })
	addrs = slices.Compact(addrs)
	reqs := make([]Requirement, 0, len(addrs))
	for _, a := range addrs {
		reqs = append(reqs, Requirement{Package: source.ProviderPackage{Addr: a}, Origin: origin})
	}
	return reqs
}
