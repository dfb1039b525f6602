package source

import (
	"fmt"
	"strings"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source/address"
	"github.com/tflock/tflock/source/internal/display"
)

// Package identifies what a source is asked about: a [ProviderPackage] or a
// [ModulePackage]. The set is closed; no other type implements it.
type Package interface {
	// String returns a canonical, machine-readable identity.
	String() string
	// ForDisplay returns a short form for messages.
	ForDisplay() string
	isPackage()
}

// ProviderPackage is one provider release for one platform. For
// [Lister.Versions], only Addr matters.
type ProviderPackage struct {
	// Addr is the provider's address.
	Addr tfaddr.Provider
	// Version is the release's version; unset for [Lister.Versions].
	Version versions.Version
	// Platform is the platform of the package; the zero value for a lookup that does not care.
	Platform Platform
}

// ModulePackage is one module package. Source is the canonical package
// address without subdirectory, version or ref: a registry module address
// ("registry.opentofu.org/ns/name/system"), a git URL ("git::https://…"), an
// OCI repository ("oci://host/repo") or an HTTP archive URL.
//
// Source keeps the credentials the configuration gives (the user
// information of a URL, a git "sshkey" argument), since a fetcher needs
// them: String, the package's identity, holds them too. ForDisplay, every
// [Event] (see [Emit]) and the text of every [*Error] have them replaced
// by "REDACTED".
//
// A module selected by version has Version set. A module pinned by its source
// string (git "?ref=", OCI "?tag="/"?digest=") has Ref set and no Version.
// Pin, when set, is the commit or digest that the lock file recorded; a
// fetcher must check that what it brings has that identity.
//
// Subdir, when set, is the subdirectory of the package that the lock file
// records its location naming as the module (a module registry's
// "//SUBDIR"), in the canonical form of address.PackageSubdir, or
// [SubdirRoot] for the package root; "" when nothing binds it (the
// location says). A cache serves the package only with that subdirectory:
// a stored record or a remote tier's annotation naming another is not
// used. Like Pin, it is not part of String.
//
// Located, with Subdir, says that the package's location is named by its
// source (a module registry names each version's; an HTTP address may
// answer with X-Terraform-Get) and so may name a subdirectory: bound to the package root (which is also what a lock
// written before subdirectories were recorded says), such a package is
// served only from an entry whose own record (or origin) confirms the
// root, never from one filled under another identity.
//
// Addr is Source typed: the package's kind and address, decided once
// where the address was read (see [NewModulePackage]), with the default
// registry host that applied there. Nil when a caller set only Source:
// [ModulePackage.Address], the one reader of Source, parses it then.
// Every stage asks Address, never parses Source itself. A module
// package's identity is thus one value: its kind and package address
// (Addr), the subdirectory installed (Subdir) and its selector (Version,
// Ref, Pin).
type ModulePackage struct {
	// Source is the canonical package address, credentials kept (see above).
	Source string
	// Version is the selected version; unset for a module pinned by its source string.
	Version versions.Version
	// Ref is the ref, tag or digest of a module pinned by its source string, else "".
	Ref string
	// Pin is the commit or digest the lock file recorded, to be checked; "" for none.
	Pin string
	// Subdir is the package's module subdirectory the lock records; "" when nothing binds it.
	Subdir string
	// Located says that the package's location is named by its source (see above).
	Located bool
	// Addr is Source typed; nil when a caller set only Source (see above).
	Addr address.ModuleSource
}

// SubdirRoot is [ModulePackage.Subdir] bound to the package's root.
const SubdirRoot = "."

// BoundSubdir returns the subdirectory Subdir binds, "" for the root, and
// whether Subdir binds one at all.
func (m ModulePackage) BoundSubdir() (string, bool) {
	if m.Subdir == SubdirRoot {
		return "", true
	}
	return m.Subdir, m.Subdir != ""
}

func (ProviderPackage) isPackage() {}
func (ModulePackage) isPackage()   {}

// String returns "ADDR VERSION PLATFORM", leaving out unset parts.
func (p ProviderPackage) String() string {
	s := providerString(p.Addr, display.Provider)
	if !p.Version.IsZero() {
		s += " " + p.Version.String()
	}
	if !p.Platform.IsZero() {
		s += " " + p.Platform.String()
	}
	return s
}

// ForDisplay returns the provider's display address with version and
// platform. The version is written as for a module ([ModulePackage.ForDisplay])
// and in the lock file, without OpenTofu's "v" for providers: one
// progress output shows both.
func (p ProviderPackage) ForDisplay() string {
	s := providerString(p.Addr, display.ProviderShort)
	if !p.Version.IsZero() {
		s += " " + p.Version.String()
	}
	if !p.Platform.IsZero() {
		s += " (" + p.Platform.String() + ")"
	}
	return s
}

// providerString formats addr, or returns "(no provider)" for the zero
// address, whose tfaddr methods panic.
func providerString(addr tfaddr.Provider, format func(tfaddr.Provider) string) string {
	if addr.IsZero() {
		return "(no provider)"
	}
	return format(addr)
}

// String returns "SOURCE VERSION" or "SOURCE?ref=REF", leaving out unset parts.
func (m ModulePackage) String() string {
	switch {
	case !m.Version.IsZero():
		return m.Source + " " + m.Version.String()
	case m.Ref != "":
		return fmt.Sprintf("%s?ref=%s", m.Source, m.Ref)
	}
	return m.Source
}

// ForDisplay is String with the argument that pins the package named as
// the source address writes it ("?tag=" or "?digest=" for an OCI module,
// see [ModulePackage.RefArgument]) and the credentials the address may
// carry (user information of its URL, a git "sshkey" argument) replaced by
// "REDACTED".
func (m ModulePackage) ForDisplay() string {
	s := m.String()
	if m.Version.IsZero() && m.Ref != "" {
		s = fmt.Sprintf("%s?%s=%s", m.Source, m.RefArgument(), m.Ref)
	}
	return display.Redact(s)
}

// RefArgument names the source address argument Ref stands for: "ref"
// for a git module; for an OCI module (its [ModulePackage.Address] is of
// kind [address.KindOCI]), "digest" when Ref holds a ":" (every digest
// does, no tag can), "tag" otherwise. It returns "" when Ref is empty.
func (m ModulePackage) RefArgument() string {
	switch {
	case m.Ref == "":
		return ""
	case !m.isOCI():
		return "ref"
	case strings.Contains(m.Ref, ":"):
		return "digest"
	}
	return "tag"
}

// isOCI reports whether m is an OCI repository's package, by its typed
// address.
func (m ModulePackage) isOCI() bool {
	addr, err := m.Address()
	if err != nil {
		return false
	}
	r, ok := addr.(address.Remote)
	return ok && r.Kind == address.KindOCI
}

// redacted returns pkg with the credentials of a module address replaced
// by "REDACTED", so that both its String and its ForDisplay are fit for a
// message or an event.
func redacted(pkg Package) Package {
	if m, ok := pkg.(ModulePackage); ok {
		m.Source = display.Redact(m.Source)
		m.Ref = display.Redact(m.Ref)
		m.Addr = nil // the typed address keeps the credentials
		return m
	}
	return pkg
}
