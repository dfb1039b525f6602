package registry

import (
	"context"
	"fmt"
	"slices"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/internal/flight"
)

// Source speaks the provider and module registry protocols to whichever
// registry host each package address names. It implements [source.Source]
// [source.ChecksumReporter] and [source.ArchiveFetcher] and is safe for concurrent use. Service
// discovery, legacy address lookups and verified SHA256SUMS documents are
// cached for the life of the Source; download responses (one per provider,
// version and platform) for five minutes, since their URLs may expire.
type Source struct {
	o     Options
	c     *client
	d     *discovery
	rels  flight.Group[releaseKey, *release] // the memories: see NewSource
	metas flight.Group[metaKey, *downloadMeta]
	leg   flight.Group[string, tfaddr.Provider]
}

var (
	_ source.Source           = (*Source)(nil)
	_ source.ChecksumReporter = (*Source)(nil)
	_ source.ModuleLocator    = (*Source)(nil)
	_ source.ArchiveFetcher   = (*Source)(nil)
)

// NewSource returns a Source configured by opts (see [Options] for the
// defaults of zero fields).
func NewSource(opts Options) *Source {
	o := opts.withDefaults()
	s := &Source{o: o, c: newClient(o)}
	// A failure is never kept: the next caller asks again, and so does
	// each caller waiting for it, but for a download response's (kept
	// metaTTL when it succeeds), which is shared with those waiting
	// unless it is the cancellation of the caller that asked.
	s.rels.Retry = flight.RetryErrors
	s.leg.Retry = flight.RetryErrors
	s.metas.Retry, s.metas.Lifetime = flight.RetryContextErrors, metaTTL
	s.d = &discovery{c: s.c, o: &s.o}
	s.d.hosts.Retry = flight.RetryErrors
	return s
}

// Versions implements [source.Lister] for [source.ProviderPackage] and
// [source.ModulePackage] (registry module addresses only).
func (s *Source) Versions(ctx context.Context, pkg source.Package) ([]source.Available, error) {
	switch p := pkg.(type) {
	case source.ProviderPackage:
		return s.providerVersions(ctx, p)
	case source.ModulePackage:
		return s.moduleVersions(ctx, p)
	}
	return nil, &source.Error{Package: pkg, Err: fmt.Errorf("%w: unsupported package type %T", source.ErrNotFound, pkg)}
}

// Fetch implements [source.Fetcher]. A provider package is downloaded,
// checked against the registry's shasum and its signed SHA256SUMS, and
// extracted into dir. A module package is downloaded from the location the
// registry names when that is an HTTP archive; a git or OCI location gives
// an error wrapping [ErrUnsupportedLocation]: a dispatcher asks
// [Source.ModuleLocation] and routes it. On any error nothing is left in
// dir.
func (s *Source) Fetch(ctx context.Context, pkg source.Package, dir string) (*source.Fetched, error) {
	return s.fetch(ctx, pkg, dir, false)
}

// FetchArchive implements [source.ArchiveFetcher]: as Fetch, but a
// provider's zip, and a module's zip archive, is handed over unextracted
// (see the package documentation); a module's tar.gz is extracted.
func (s *Source) FetchArchive(ctx context.Context, pkg source.Package, dir string) (*source.Fetched, error) {
	return s.fetch(ctx, pkg, dir, true)
}

func (s *Source) fetch(ctx context.Context, pkg source.Package, dir string, handOver bool) (*source.Fetched, error) {
	switch p := pkg.(type) {
	case source.ProviderPackage:
		return s.fetchProvider(ctx, p, dir, handOver)
	case source.ModulePackage:
		return s.fetchModule(ctx, p, dir, handOver)
	}
	return nil, &source.Error{Package: pkg, Err: fmt.Errorf("%w: unsupported package type %T", source.ErrNotFound, pkg)}
}

// Checksums implements [source.ChecksumReporter]. For a provider version it
// returns the zh: hash of every file in the release's signed SHA256SUMS,
// and, when the registry sends OpenTofu's "packages" field, every hash it
// lists for every platform, each with its provenance. Nothing is
// downloaded but metadata. If pkg has no platform, the current platform's
// download metadata is asked for, or the first platform the registry
// lists. Module packages have no origin checksums: the result is empty (or
// an error if the registry does not know the module or version).
func (s *Source) Checksums(ctx context.Context, pkg source.Package) ([]hash.Record, error) {
	switch p := pkg.(type) {
	case source.ProviderPackage:
		return s.providerChecksums(ctx, p)
	case source.ModulePackage:
		// The module protocol vouches for no checksums; still report an
		// unknown module or version as such.
		list, err := s.moduleVersions(ctx, p)
		if err != nil {
			return nil, err
		}
		if !p.Version.IsZero() && !slices.ContainsFunc(list, func(a source.Available) bool { return a.Version == p.Version }) {
			return nil, &source.Error{Package: p, Err: source.ErrVersionNotFound}
		}
		return nil, nil
	}
	return nil, &source.Error{Package: pkg, Err: fmt.Errorf("%w: unsupported package type %T", source.ErrNotFound, pkg)}
}
