// Package tflocksource is OpenTofu's provider source on tflock: an
// implementation of getproviders.Source whose versions, checks and
// downloads are tflock's (assemble.NewSources, source/cache), switched on
// by TOFU_TFLOCK=1. It is copied into a temporary copy of OpenTofu's
// source tree by tflock's internal/opentofu/run.sh; it is not part of
// tflock's own build.
package tflocksource

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	tfaddr "github.com/hashicorp/terraform-registry-address"
	"github.com/opentofu/svchost"
	"github.com/opentofu/svchost/disco"
	"github.com/opentofu/svchost/svcauth"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/assemble"
	"github.com/tflock/tflock/source/cache"

	"github.com/opentofu/opentofu/internal/addrs"
	"github.com/opentofu/opentofu/internal/collections"
	"github.com/opentofu/opentofu/internal/getproviders"
)

// On reports whether tflock serves OpenTofu's providers (TOFU_TFLOCK=1).
func On() bool { return os.Getenv("TOFU_TFLOCK") == "1" }

// Mode says which of tofu's provider sources tflock replaces.
type Mode int

// The modes.
const (
	// Installation: the CLI configuration's provider installation.
	Installation Mode = iota
	// Direct: each provider's origin registry alone ("providers lock").
	Direct
	// Mirror: the origin registries, for "providers mirror", whose
	// packages are archives written by [GetFile].
	Mirror
)

// Or returns tflock's source for mode when TOFU_TFLOCK=1, else tofu's
// own, given. A source tflock cannot build answers every call with the
// reason.
func Or(ctx context.Context, services *disco.Disco, mode Mode, tofu getproviders.Source) getproviders.Source {
	if !On() {
		return tofu
	}
	var creds svcauth.CredentialsSource
	if services != nil {
		creds = services.CredentialsSource()
	}
	s, err := New(ctx, creds, mode)
	if err != nil {
		return failed{err}
	}
	return s
}

// failed is a source that could not be built.
type failed struct{ err error }

func (f failed) AvailableVersions(context.Context, addrs.Provider) (getproviders.VersionList, getproviders.Warnings, error) {
	return nil, nil, f.err
}

func (f failed) PackageMeta(context.Context, addrs.Provider, getproviders.Version, getproviders.Platform) (getproviders.PackageMeta, error) {
	return getproviders.PackageMeta{}, f.err
}

func (f failed) ForDisplay(addrs.Provider) string { return "tflock" }

// Source is a getproviders.Source on tflock.
type Source struct {
	src   source.Source
	cache *cache.Cache
	mode  Mode

	mu       sync.Mutex
	warnings map[string][]string // registry warnings by provider address
}

var _ getproviders.Source = (*Source)(nil)

// New returns the source tofu's CLI configuration describes
// (provider_installation, or the implied mirrors and direct installation),
// or in the modes Direct and Mirror each provider's origin registry alone
// (as "providers lock" and "providers mirror" ask). tflock reads the same CLI
// configuration files tofu read; creds are tofu's own credentials
// (credentials blocks, helpers, TF_TOKEN_ variables). The cache is
// TOFU_TFLOCK_CACHE, or "tflock-opentofu" in the user's cache directory.
func New(ctx context.Context, creds svcauth.CredentialsSource, mode Mode) (*Source, error) {
	s := &Source{mode: mode, warnings: map[string][]string{}}
	opts := assemble.SourcesOptions{
		Events: source.EventsFunc(s.event),
	}
	if creds != nil {
		opts.Credentials = credentials{ctx: ctx, src: creds}
	}
	srcs, diags := assemble.NewSources(ctx, opts)
	if diags.HasErrors() {
		return nil, fmt.Errorf("tflock: %s", diags.Error())
	}
	s.src = srcs.Source
	if mode != Installation {
		s.src = &assemble.Dispatch{Providers: srcs.Source.Registry, Remember: assemble.DefaultRemember}
	}
	dir := os.Getenv("TOFU_TFLOCK_CACHE")
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return nil, fmt.Errorf("tflock: no cache directory: %w", err)
		}
		dir = filepath.Join(base, "tflock-opentofu")
	}
	c, err := cache.Open(dir, cache.Options{})
	if err != nil {
		return nil, fmt.Errorf("tflock: %w", err)
	}
	s.cache = c
	return s, nil
}

// event keeps the sources' warnings for the provider they concern, for
// AvailableVersions to return.
func (s *Source) event(e source.Event) {
	if e.Kind != source.EventWarning {
		return
	}
	p, ok := e.Package.(source.ProviderPackage)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := p.Addr.String()
	s.warnings[k] = append(s.warnings[k], e.Detail)
}

// credentials are tofu's credentials as tflock asks for them.
type credentials struct {
	ctx context.Context
	src svcauth.CredentialsSource
}

// Token implements registry.Credentials.
func (c credentials) Token(host string) (string, bool) {
	h, err := svchost.ForComparison(host)
	if err != nil {
		return "", false
	}
	hc, err := c.src.ForHost(c.ctx, h)
	if err != nil || hc == nil {
		return "", false
	}
	if t, ok := hc.(interface{ Token() string }); ok && t.Token() != "" {
		return t.Token(), true
	}
	return "", false
}

// pkgOf is the tflock package of a provider (version and platform unset
// when zero).
func pkgOf(p addrs.Provider) (source.ProviderPackage, error) {
	a, err := tfaddr.ParseProviderSource(p.String())
	if err != nil {
		return source.ProviderPackage{}, fmt.Errorf("tflock cannot name provider %s: %w", p, err)
	}
	return source.ProviderPackage{Addr: a}, nil
}

// ForDisplay implements getproviders.Source.
func (s *Source) ForDisplay(p addrs.Provider) string {
	if s.mode != Installation {
		return p.Hostname.ForDisplay()
	}
	return "tflock (" + p.Hostname.ForDisplay() + ")"
}

// AvailableVersions implements getproviders.Source.
func (s *Source) AvailableVersions(ctx context.Context, p addrs.Provider) (getproviders.VersionList, getproviders.Warnings, error) {
	pkg, err := pkgOf(p)
	if err != nil {
		return nil, nil, err
	}
	avail, err := s.src.Versions(ctx, pkg)
	s.mu.Lock()
	warnings := s.warnings[pkg.Addr.String()]
	delete(s.warnings, pkg.Addr.String())
	s.mu.Unlock()
	var nf *source.NotFoundError
	if errors.As(err, &nf) && nf.NoSources {
		// As tofu's installation source with no method: no versions.
		return nil, warnings, nil
	}
	if err != nil {
		return nil, warnings, tofuError(err, p, getproviders.Version{}, getproviders.Platform{})
	}
	var out getproviders.VersionList
	for _, a := range avail {
		v, err := getproviders.ParseVersion(a.Version.String())
		if err != nil {
			continue
		}
		out = append(out, v)
	}
	out.Sort()
	return out, warnings, nil
}

// PackageMeta implements getproviders.Source. It checks what the version
// list says (the platform listed, a plugin protocol tofu speaks), as
// tofu's registry source does before any download; the package itself is
// fetched, checked and cached by the location's install step.
func (s *Source) PackageMeta(ctx context.Context, p addrs.Provider, v getproviders.Version, target getproviders.Platform) (getproviders.PackageMeta, error) {
	pkg, err := pkgOf(p)
	if err != nil {
		return getproviders.PackageMeta{}, err
	}
	tv, err := versions.Parse(v.String())
	if err != nil {
		return getproviders.PackageMeta{}, err
	}
	pkg.Version = tv
	pkg.Platform = source.Platform{OS: target.OS, Arch: target.Arch}
	avail, err := s.src.Versions(ctx, source.ProviderPackage{Addr: pkg.Addr})
	if err != nil {
		return getproviders.PackageMeta{}, tofuError(err, p, v, target)
	}
	i := slices.IndexFunc(avail, func(a source.Available) bool { return a.Version == tv })
	if i < 0 {
		return getproviders.PackageMeta{}, getproviders.ErrPlatformNotSupported{Provider: p, Version: v, Platform: target}
	}
	a := avail[i]
	if len(a.Platforms) > 0 && !slices.Contains(a.Platforms, pkg.Platform) {
		return getproviders.PackageMeta{}, getproviders.ErrPlatformNotSupported{Provider: p, Version: v, Platform: target}
	}
	var protocols getproviders.VersionList
	for _, pr := range a.Protocols {
		if pv, err := getproviders.ParseVersion(pr); err == nil {
			protocols = append(protocols, pv)
		}
	}
	protocols.Sort()
	if len(a.Protocols) > 0 && !slices.ContainsFunc(a.Protocols, supported) {
		e := getproviders.ErrProtocolNotSupported{Provider: p, Version: v}
		for _, o := range avail {
			if slices.ContainsFunc(o.Protocols, supported) && o.Version.Prerelease() == "" {
				if sv, err := getproviders.ParseVersion(o.Version.String()); err == nil && sv.GreaterThan(e.Suggestion) {
					e.Suggestion = sv
				}
			}
		}
		return getproviders.PackageMeta{}, e
	}
	meta := getproviders.PackageMeta{
		Provider:         p,
		Version:          v,
		ProtocolVersions: protocols,
		TargetPlatform:   target,
		Filename:         fmt.Sprintf("terraform-provider-%s_%s_%s.zip", p.Type, v, target),
		Location:         Location{s: s, pkg: pkg},
	}
	if s.mode == Mirror {
		// "providers mirror" downloads an HTTP location itself: GetFile
		// does it here, and the authentication reports what it found.
		a := &mirrorAuth{l: Location{s: s, pkg: pkg}}
		meta.Location = getproviders.PackageHTTPURL{URL: a.l.String()}
		meta.Authentication = a
	}
	return meta, nil
}

// supported reports whether tofu speaks a plugin protocol ("5.0", "6").
func supported(protocol string) bool {
	major, _, _ := strings.Cut(protocol, ".")
	return major == "5" || major == "6"
}

// Location is a package that tflock brings: through its cache, checked
// against the lock file's hashes, with the provenance of its hashes.
type Location struct {
	s   *Source
	pkg source.ProviderPackage
}

var _ getproviders.PackageLocation = Location{}

// String implements getproviders.PackageLocation.
func (l Location) String() string {
	return "tflock:" + l.pkg.Addr.String() + "/" + l.pkg.Version.String() + "/" + l.pkg.Platform.String()
}

// fill brings the package into tflock's cache, checked against allowed.
func (l Location) fill(ctx context.Context, allowed []getproviders.Hash) (cache.Entry, error) {
	var want []hash.Hash
	for _, h := range allowed {
		if th, err := hash.ParseHash(h.String()); err == nil {
			want = append(want, th)
		}
	}
	e, _, err := l.s.cache.Fill(ctx, l.pkg, want, func(ctx context.Context, tmp string) (*source.Fetched, error) {
		return source.FetchArchive(ctx, l.s.src, l.pkg, tmp)
	})
	if err != nil {
		var mm *cache.MismatchError
		if errors.As(err, &mm) && len(want) > 0 {
			return e, fmt.Errorf("the current package for %s %s doesn't match any of the checksums previously recorded in the dependency lock file; for more information: https://opentofu.org/docs/language/files/dependency-lock/#checksum-verification", l.pkg.Addr, l.pkg.Version)
		}
		return e, err
	}
	return e, nil
}

// InstallProviderPackage implements getproviders.PackageLocation: the
// package is filled into tflock's cache (or found there) and its verified
// tree copied to targetDir.
func (l Location) InstallProviderPackage(ctx context.Context, meta getproviders.PackageMeta, targetDir string, allowed []getproviders.Hash) (*getproviders.PackageAuthenticationResult, error) {
	e, err := l.fill(ctx, allowed)
	if err != nil {
		return nil, tofuError(err, meta.Provider, meta.Version, meta.TargetPlatform)
	}
	if err := os.RemoveAll(targetDir); err != nil {
		return nil, err
	}
	if err := cache.CopyDir(targetDir, e.Dir); err != nil {
		_ = os.RemoveAll(targetDir)
		return nil, fmt.Errorf("tflock: installing %s %s to %s: %w", meta.Provider, meta.Version, targetDir, err)
	}
	return authResult(e, meta.TargetPlatform), nil
}

// authResult is the entry's provenance as tofu's installer reads it: the
// origin's records (signing keys, origin registry, trusted mirror,
// platform) and the entry's own hashes, verified locally.
func authResult(e cache.Entry, target getproviders.Platform) *getproviders.PackageAuthenticationResult {
	ds := getproviders.HashDispositions{}
	get := func(h hash.Hash) *getproviders.HashDisposition {
		gh, err := getproviders.ParseHash(h.String())
		if err != nil {
			return nil
		}
		d := ds[gh]
		if d == nil {
			d = &getproviders.HashDisposition{}
			ds[gh] = d
		}
		return d
	}
	for _, r := range e.Origin {
		d := get(r.Hash)
		if d == nil {
			continue
		}
		if len(r.Provenance.SignedBy) > 0 {
			if d.SignedByGPGKeyIDs == nil {
				d.SignedByGPGKeyIDs = collections.NewSet[string]()
			}
			for _, k := range r.Provenance.SignedBy {
				d.SignedByGPGKeyIDs[k] = struct{}{}
			}
		}
		d.ReportedByRegistry = d.ReportedByRegistry || len(r.Provenance.Registries) > 0
		d.ReportedByTrustedMirror = d.ReportedByTrustedMirror || len(r.Provenance.TrustedMirrors) > 0
		if len(r.Provenance.Platforms) == 1 {
			if pl, err := getproviders.ParsePlatform(r.Provenance.Platforms[0]); err == nil {
				d.Platform = &pl
			}
		}
	}
	for _, h := range e.Hashes {
		if d := get(h); d != nil {
			d.VerifiedLocally = true
			pl := target
			d.Platform = &pl
		}
	}
	return getproviders.NewPackageAuthenticationResult(ds)
}

// mirrorAuth is the authentication of a "providers mirror" package: the
// origin records of the download GetFile made, and the archive's own zh:
// hash, computed here.
type mirrorAuth struct {
	l      Location
	origin []hash.Record
}

// AuthenticatePackage implements getproviders.PackageAuthentication.
func (a *mirrorAuth) AuthenticatePackage(loc getproviders.PackageLocation) (*getproviders.PackageAuthenticationResult, error) {
	archive, ok := loc.(getproviders.PackageLocalArchive)
	if !ok {
		return nil, fmt.Errorf("tflock: cannot authenticate %s", loc)
	}
	zh, err := getproviders.PackageHashLegacyZipSHA(archive)
	if err != nil {
		return nil, err
	}
	own := hash.Hash(zh.String())
	if !slices.ContainsFunc(a.origin, func(r hash.Record) bool { return r.Hash == own }) {
		return nil, fmt.Errorf("archive has incorrect checksum %s", zh)
	}
	platform := getproviders.Platform{OS: a.l.pkg.Platform.OS, Arch: a.l.pkg.Platform.Arch}
	return authResult(cache.Entry{Origin: a.origin, Hashes: []hash.Hash{own}}, platform), nil
}

// GetFile writes the archive of meta's package to path, when meta comes
// from a tflock source in the Mirror mode ("providers mirror"); else it
// calls tofu's download.
func GetFile(ctx context.Context, meta getproviders.PackageMeta, path string, tofu func() error) error {
	a, ok := meta.Authentication.(*mirrorAuth)
	if !ok {
		return tofu()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(path), ".tflock-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	got, err := source.FetchArchive(ctx, a.l.s.src, a.l.pkg, tmp)
	if err != nil {
		return tofuError(err, meta.Provider, meta.Version, meta.TargetPlatform)
	}
	if got.Pending != nil {
		if err := got.Pending.Wait(); err != nil {
			return err
		}
	}
	if got.Archive == "" {
		return fmt.Errorf("tflock: the source of %s gave no archive", meta.Provider)
	}
	// Copied, not renamed, so that the file has the mode tofu's own
	// download gives it (0666 less the umask).
	if err := copyFile(path, got.Archive); err != nil {
		return err
	}
	a.origin = got.Origin
	return nil
}

// copyFile copies the file src to a new file dst.
func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// tofuError is err as tofu's installer and UI recognise it: tflock's typed
// errors become getproviders' error types, with tofu's words.
func tofuError(err error, p addrs.Provider, v getproviders.Version, target getproviders.Platform) error {
	var (
		notKnown    *source.RegistryNotKnownError
		notFound    *source.NotFoundError
		platform    *source.PlatformNotSupportedError
		protocol    *source.ProtocolNotSupportedError
		noProviders *source.HostNoProvidersError
		unreachable *source.HostUnreachableError
		unauth      *source.UnauthorizedError
		query       *source.QueryFailedError
		canceled    *source.CanceledError
	)
	host := func(h string) svchost.Hostname {
		if n, err := svchost.ForComparison(h); err == nil {
			return n
		}
		return p.Hostname
	}
	mirror := func(m string) *url.URL {
		if m == "" {
			return nil
		}
		u, err := url.Parse(m)
		if err != nil {
			return &url.URL{Path: m}
		}
		return u
	}
	switch {
	case errors.As(err, &canceled), errors.Is(err, context.Canceled):
		return getproviders.ErrRequestCanceled{}
	case errors.As(err, &notKnown):
		return getproviders.ErrRegistryProviderNotKnown{Provider: p}
	case errors.As(err, &notFound):
		return getproviders.ErrProviderNotFound{Provider: p, Sources: notFound.Sources}
	case errors.As(err, &platform):
		return getproviders.ErrPlatformNotSupported{Provider: p, Version: v, Platform: target, MirrorURL: mirror(platform.Mirror)}
	case errors.As(err, &protocol):
		e := getproviders.ErrProtocolNotSupported{Provider: p, Version: v}
		if !protocol.Suggestion.IsZero() {
			e.Suggestion, _ = getproviders.ParseVersion(protocol.Suggestion.String())
		}
		return e
	case errors.As(err, &noProviders):
		return getproviders.ErrHostNoProviders{Hostname: host(noProviders.Host), HasOtherVersion: noProviders.HasOtherVersion}
	case errors.As(err, &unreachable):
		return getproviders.ErrHostUnreachable{Hostname: host(unreachable.Host), Wrapped: unreachable.Err}
	case errors.As(err, &unauth):
		return getproviders.ErrUnauthorized{Hostname: host(unauth.Host), HaveCredentials: unauth.HaveCredentials}
	case errors.As(err, &query):
		return getproviders.ErrQueryFailed{Provider: p, Wrapped: query.Err, MirrorURL: mirror(query.Mirror)}
	}
	return err
}
