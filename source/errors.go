package source

import (
	"context"
	"errors"
	"fmt"

	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source/internal/display"
)

// Sentinel errors. Sources wrap them (usually inside an [*Error]); callers
// branch with errors.Is.
var (
	// ErrNotFound: the source does not know the package at all.
	ErrNotFound = errors.New("package not found")
	// ErrVersionNotFound: the package exists but not at the asked version.
	ErrVersionNotFound = errors.New("version not found")
	// ErrPlatformNotSupported: the provider version has no build for the
	// asked platform.
	ErrPlatformNotSupported = errors.New("platform not supported")
	// ErrUnauthorized: the origin refused the credentials, or asked for some.
	ErrUnauthorized = errors.New("unauthorized")
	// ErrChecksumMismatch: what was downloaded does not match the checksum
	// the origin (or the lock file) vouches for.
	ErrChecksumMismatch = errors.New("checksum mismatch")
)

// Error gives a source error its context: which source, which package.
// Match its cause with errors.Is and errors.As through Unwrap. Its text
// never holds a credential; the Package field keeps the address as given.
type Error struct {
	Source  string  // the source, for display (a host name, a URL without credentials, a directory)
	Package Package // the package asked about; may be nil
	Err     error   // the cause
}

// Error returns "SOURCE: PACKAGE: CAUSE", leaving out unset parts (only
// CAUSE when it is one of the typed errors below that name the package
// and the host themselves, such as a [*RegistryNotKnownError]), with
// the credentials of every URL in it (the package's, or one the cause
// quotes) replaced by "REDACTED".
func (e *Error) Error() string {
	var msg string
	switch e.Err.(type) {
	case *RegistryNotKnownError, *PlatformNotSupportedError, *ProtocolNotSupportedError,
		*HostNoProvidersError, *HostUnreachableError, *UnauthorizedError, *QueryFailedError:
		// OpenTofu's words, which name the package and the host already.
		return display.Redact(e.Err.Error())
	}
	switch {
	case e.Package != nil && e.Source != "":
		msg = fmt.Sprintf("%s: %s: %v", e.Source, e.Package.ForDisplay(), e.Err)
	case e.Package != nil:
		msg = fmt.Sprintf("%s: %v", e.Package.ForDisplay(), e.Err)
	case e.Source != "":
		msg = fmt.Sprintf("%s: %v", e.Source, e.Err)
	default:
		msg = fmt.Sprint(e.Err)
	}
	return display.Redact(msg)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ErrProtocolNotSupported: the provider release speaks none of the plugin
// protocols OpenTofu and Terraform support (major versions 5 and 6).
// source/registry's ErrProtocolNotSupported is this same value.
var ErrProtocolNotSupported = errors.New("provider plugin protocol not supported")

// The typed errors below name each case an installer tells its user
// apart, as OpenTofu's provider installer does (its getproviders error
// types, whose words their Error methods keep). Each matches the sentinel
// that errors of its case matched before it existed (errors.Is), and
// unwraps to its cause where it has one. Sources return them inside an
// [*Error]; find one with errors.As.

// NotFoundError: none of the sources searched has the package, or no
// source is configured for it (OpenTofu's ErrProviderNotFound). It
// matches [ErrNotFound]. A registry that answered that it does not know
// the package gives a [*RegistryNotKnownError] instead.
type NotFoundError struct {
	// Package is the package asked for.
	Package Package
	// Sources names the sources searched, for display; empty when no
	// source is configured for the package (every one excludes it).
	Sources []string
	// NoSources is true when there was no source at all to search (a
	// provider installation with no method, as one holding only
	// dev_overrides): OpenTofu's installation source then lists no
	// versions, without an error, so that its installer reports that no
	// version matches, where a source that excludes the package reports
	// it not found.
	NoSources bool
}

// Error is OpenTofu's message: the package was not found in any of the
// search locations (adding that no source is configured for it when
// Sources is empty).
func (e *NotFoundError) Error() string {
	msg := fmt.Sprintf("%s %s was not found in any of the search locations", kindOf(e.Package), family(e.Package))
	if len(e.Sources) == 0 {
		msg += ": no source is configured for this package"
	}
	return msg
}

// Is makes the error match [ErrNotFound].
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// RegistryNotKnownError: a registry answered that it does not know the
// package (OpenTofu's ErrRegistryProviderNotKnown). It matches
// [ErrNotFound].
type RegistryNotKnownError struct {
	// Package is the package the registry does not know.
	Package Package
	Host    string // the registry, for display
	Err     error  // the registry's answer, or nil
}

// Error is OpenTofu's message, naming the registry and the package.
func (e *RegistryNotKnownError) Error() string {
	return fmt.Sprintf("%s registry %s does not have a %s named %s", kindOf(e.Package), e.Host, kindOf(e.Package), family(e.Package))
}

// Is makes the error match [ErrNotFound].
func (e *RegistryNotKnownError) Is(target error) bool { return target == ErrNotFound }

// Unwrap returns the registry's answer.
func (e *RegistryNotKnownError) Unwrap() error { return e.Err }

// PlatformNotSupportedError: the provider version has no package for the
// platform (OpenTofu's ErrPlatformNotSupported). It matches
// [ErrPlatformNotSupported].
type PlatformNotSupportedError struct {
	// Package is the provider, with the version and platform asked for.
	Package ProviderPackage
	// Mirror is the mirror that was asked in place of the provider's
	// registry (its URL or directory, for display), or "".
	Mirror string
	Err    error // the source's answer, or nil
}

// Error is OpenTofu's message, naming the provider, its version and the platform (and the
// mirror asked, if any).
func (e *PlatformNotSupportedError) Error() string {
	if e.Mirror != "" {
		return fmt.Sprintf("provider mirror %s does not have a package of %s %s for %s", e.Mirror, family(e.Package), e.Package.Version, e.Package.Platform)
	}
	return fmt.Sprintf("provider %s %s is not available for %s", family(e.Package), e.Package.Version, e.Package.Platform)
}

// Is makes the error match [ErrPlatformNotSupported].
func (e *PlatformNotSupportedError) Is(target error) bool { return target == ErrPlatformNotSupported }

// Unwrap returns the source's answer.
func (e *PlatformNotSupportedError) Unwrap() error { return e.Err }

// ProtocolNotSupportedError: the provider version speaks no plugin
// protocol OpenTofu supports (OpenTofu's ErrProtocolNotSupported). It
// matches [ErrProtocolNotSupported].
type ProtocolNotSupportedError struct {
	// Package is the provider, with the version asked for.
	Package   ProviderPackage
	Protocols []string // the protocols the release speaks
	// Suggestion is the newest version of the provider that speaks a
	// supported protocol, as the registry lists them; zero when none does.
	Suggestion versions.Version
}

// Error is OpenTofu's message, naming the provider and its version.
func (e *ProtocolNotSupportedError) Error() string {
	return fmt.Sprintf("provider %s %s is not supported by this version of OpenTofu", family(e.Package), e.Package.Version)
}

// Is makes the error match [ErrProtocolNotSupported].
func (e *ProtocolNotSupportedError) Is(target error) bool { return target == ErrProtocolNotSupported }

// HostNoProvidersError: the host of a provider address offers no provider
// registry (OpenTofu's ErrHostNoProviders). It matches [ErrNotFound],
// and source/registry's ErrNoService through its cause.
type HostNoProvidersError struct {
	// Host is the host of the provider address, for display.
	Host string
	// HasOtherVersion is true when the host offers another version of the
	// provider registry protocol than the one spoken here.
	HasOtherVersion bool
	Err             error // the discovery's answer
}

// Error is OpenTofu's message, naming the host (and saying whether another protocol
// version may work).
func (e *HostNoProvidersError) Error() string {
	if e.HasOtherVersion {
		return fmt.Sprintf("host %s does not support the provider registry protocol required by this OpenTofu version, but may be compatible with a different OpenTofu version", e.Host)
	}
	return fmt.Sprintf("host %s does not offer a OpenTofu provider registry", e.Host)
}

// Is makes the error match [ErrNotFound].
func (e *HostNoProvidersError) Is(target error) bool { return target == ErrNotFound }

// Unwrap returns the discovery's answer.
func (e *HostNoProvidersError) Unwrap() error { return e.Err }

// HostUnreachableError: the host could not be reached, or did not answer
// service discovery correctly (OpenTofu's ErrHostUnreachable).
type HostUnreachableError struct {
	// Host is the host that could not be reached, for display.
	Host string
	// Err is the cause: the connection's or the discovery's error.
	Err error
}

// Error names the host and the cause.
func (e *HostUnreachableError) Error() string {
	return fmt.Sprintf("could not connect to %s: %v", e.Host, e.Err)
}

// Unwrap returns the cause.
func (e *HostUnreachableError) Unwrap() error { return e.Err }

// UnauthorizedError: the host answered 401 or 403 (OpenTofu's
// ErrUnauthorized). It matches [ErrUnauthorized].
type UnauthorizedError struct {
	// Host is the host that refused, for display.
	Host string
	// HaveCredentials is true when the request carried credentials (they
	// were refused), false when it carried none (some are needed).
	HaveCredentials bool
	Err             error // the host's answer
}

// Error is OpenTofu's message, naming the host and saying whether credentials were sent.
func (e *UnauthorizedError) Error() string {
	if e.HaveCredentials {
		return fmt.Sprintf("host %s rejected the given authentication credentials", e.Host)
	}
	return fmt.Sprintf("host %s requires authentication credentials", e.Host)
}

// Is makes the error match [ErrUnauthorized].
func (e *UnauthorizedError) Is(target error) bool { return target == ErrUnauthorized }

// Unwrap returns the host's answer.
func (e *UnauthorizedError) Unwrap() error { return e.Err }

// QueryFailedError: a registry or mirror that exists failed to answer a
// query about the package (an unexpected status, a connection that
// failed after its retries, an answer that does not parse: OpenTofu's
// ErrQueryFailed). Errors.Is matches its cause.
type QueryFailedError struct {
	// Package is the package the query was about.
	Package Package
	// Mirror is the mirror that was asked in place of the provider's
	// registry (its URL, for display), or "".
	Mirror string
	// Err is the cause: the status, the connection's error or the parse error.
	Err error
}

// Error is OpenTofu's message, naming the registry or mirror, the package and the cause.
func (e *QueryFailedError) Error() string {
	if e.Mirror != "" {
		return fmt.Sprintf("failed to query provider mirror %s for %s: %v", e.Mirror, family(e.Package), e.Err)
	}
	return fmt.Sprintf("could not query %s registry for %s: %v", kindOf(e.Package), family(e.Package), e.Err)
}

// Unwrap returns the cause.
func (e *QueryFailedError) Unwrap() error { return e.Err }

// CanceledError: the call's context was cancelled (OpenTofu's
// ErrRequestCanceled). It matches [context.Canceled] through its cause.
type CanceledError struct {
	Err error // context.Canceled, or an error wrapping it
}

// Error is OpenTofu's message: "request canceled".
func (e *CanceledError) Error() string { return "request canceled" }

// Unwrap returns the cause.
func (e *CanceledError) Unwrap() error { return e.Err }

// Canceled returns err as a [*CanceledError] when it is (or wraps)
// context.Canceled and is not one already, else err unchanged.
func Canceled(err error) error {
	var ce *CanceledError
	if err == nil || !errors.Is(err, context.Canceled) || errors.As(err, &ce) {
		return err
	}
	return &CanceledError{Err: err}
}

// kindOf is "provider" or "module", as OpenTofu's messages name a package.
func kindOf(pkg Package) string {
	if _, ok := pkg.(ModulePackage); ok {
		return "module"
	}
	return "provider"
}

// family is the package's address without version or platform: a
// provider's full address (as OpenTofu's messages write it), a module's
// source for display.
func family(pkg Package) string {
	switch p := pkg.(type) {
	case ProviderPackage:
		return providerString(p.Addr, display.Provider)
	case ModulePackage:
		return display.Redact(p.Source)
	}
	return "(no package)"
}
