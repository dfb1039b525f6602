package source

import (
	"fmt"

	"github.com/tflock/tflock/source/address"
)

// NewModulePackage returns the module package that addr, a registry or
// remote module source address parsed where it was read (with the
// default registry host that applies there), names: its Source is
// addr.Package() and its Addr the typed package address, without
// subdirectory or selector. The caller sets Version, Ref, Pin and
// Subdir. A package built this way and one built from its Source string
// alone have the same identity ([ModulePackage.Address]).
//
// It returns an error for a [address.Local] address, which names no
// package.
func NewModulePackage(addr address.ModuleSource) (ModulePackage, error) {
	if addr == nil {
		return ModulePackage{}, fmt.Errorf("no module source address")
	}
	// The package address is addr's own, typed: not its string parsed
	// again.
	var pkg address.ModuleSource
	switch a := addr.(type) {
	case address.Registry:
		pkg = a.PackageAddr()
	case address.Remote:
		pkg = a.PackageAddr()
	default:
		return ModulePackage{}, fmt.Errorf("module source %q is a local path, not a package", addr.String())
	}
	return ModulePackage{Source: addr.Package(), Addr: pkg}, nil
}

// Address returns the typed package address of m: m.Addr when the
// package was built by [NewModulePackage] (or carries the Addr of one),
// else m.Source parsed. It is the one place where a module package's
// Source string is read: every source, the solver, the cache and the
// installer ask it rather than parse Source again.
//
// A registry address in Source without a host ("NAMESPACE/NAME/SYSTEM")
// is on OpenTofu's default registry host, [address.DefaultRegistryHost]:
// a caller that means another default (Terraform's) builds the package
// with [NewModulePackage] from an address parsed with that default, or
// writes the host. An address that does not parse is an error wrapping
// [ErrNotFound]. A source refuses a kind of address it does not serve (a
// [address.Local] path names no package), or a package address with a
// subdirectory, itself. A package whose Addr and Source (when set) name
// two different package addresses is refused (an error wrapping
// [ErrNotFound]): it would be fetched under one name and cached, locked
// and reported under the other.
func (m ModulePackage) Address() (address.ModuleSource, error) {
	if m.Addr != nil {
		if m.Source != "" && m.Addr.Package() != m.Source {
			// One package, one name: the cache, the tier and the
			// messages name it by Source, the sources fetch by Addr.
			return nil, fmt.Errorf("%w: module package names two addresses: %q (Addr) and %q (Source)", ErrNotFound, address.Redact(m.Addr.Package()), address.Redact(m.Source))
		}
		return m.Addr, nil
	}
	return parseModulePackage(m.Source)
}

// parseModulePackage parses src, a module package address.
func parseModulePackage(src string) (address.ModuleSource, error) {
	ms, err := address.ParseModuleSource(src)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotFound, err)
	}
	return ms, nil
}

// Remote returns the typed location l names: l.Addr when the locator set
// it, else l.Address parsed, which must be a remote (git, OCI, HTTP, ...)
// address. It is the one place where a location string is read.
func (l ModuleLocation) Remote() (address.Remote, error) {
	if l.Addr.Kind != "" {
		return l.Addr, nil
	}
	return ParseLocation(l.Address)
}

// ParseLocation parses loc, a module package location that a locator
// read from its origin (a module registry's download answer, an
// X-Terraform-Get header), as a remote module source address.
func ParseLocation(loc string) (address.Remote, error) {
	return address.ParseRemote(loc)
}
