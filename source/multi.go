package source

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
)

// Selector restricts a [Source] to the packages its patterns select, like one
// installation method of OpenTofu's provider_installation block. A package is
// handled when no Exclude pattern matches it and, if Include has patterns of
// the package's kind (provider or module), one of them matches it. Exclusions
// take priority over inclusions. Include patterns of one kind do not restrict
// the other kind: a selector whose Include lists only provider patterns still
// handles every module.
//
// A Selector is itself a [Source]: for a package it does not handle it
// reports an error wrapping [ErrNotFound] without asking Source. [Multi]
// skips such sources without calling them.
type Selector struct {
	// Source is the selected source. It must not be nil.
	Source Source
	// Include, when it holds patterns of a package's kind, limits the
	// selector to the packages they match. Default: everything.
	Include []Pattern
	// Exclude lists patterns of packages the selector never handles.
	// Default: none.
	Exclude []Pattern
	// Name is how errors refer to the source. Default: the source's own
	// String method if it has one, else its Go type.
	Name string
}

var (
	_ Source           = Selector{}
	_ ChecksumReporter = Selector{}
	_ ArchiveFetcher   = Selector{}
)

// Handles reports whether the selector's patterns select pkg.
func (s Selector) Handles(pkg Package) bool {
	for _, p := range s.Exclude {
		if p.Match(pkg) {
			return false
		}
	}
	_, isModule := pkg.(ModulePackage)
	restricted := false
	for _, p := range s.Include {
		if p.isModule() != isModule {
			continue
		}
		restricted = true
		if p.Match(pkg) {
			return true
		}
	}
	return !restricted
}

// String returns the selector's display name.
func (s Selector) String() string {
	if s.Name != "" {
		return s.Name
	}
	return displayName(s.Source)
}

// Versions implements [Lister].
func (s Selector) Versions(ctx context.Context, pkg Package) ([]Available, error) {
	if !s.Handles(pkg) {
		return nil, &Error{Source: s.String(), Package: pkg, Err: fmt.Errorf("%w: excluded by the source's patterns", ErrNotFound)}
	}
	return s.Source.Versions(ctx, pkg)
}

// Fetch implements [Fetcher].
func (s Selector) Fetch(ctx context.Context, pkg Package, dir string) (*Fetched, error) {
	return s.fetch(ctx, pkg, dir, false)
}

// FetchArchive implements [ArchiveFetcher] with the selected source's
// FetchArchive, or its Fetch when it is not an ArchiveFetcher.
func (s Selector) FetchArchive(ctx context.Context, pkg Package, dir string) (*Fetched, error) {
	return s.fetch(ctx, pkg, dir, true)
}

func (s Selector) fetch(ctx context.Context, pkg Package, dir string, archive bool) (*Fetched, error) {
	if !s.Handles(pkg) {
		return nil, &Error{Source: s.String(), Package: pkg, Err: fmt.Errorf("%w: excluded by the source's patterns", ErrNotFound)}
	}
	return FetchWith(ctx, s.Source, pkg, dir, archive)
}

// Checksums implements [ChecksumReporter]. When the selected source is not
// a ChecksumReporter, it reports no hashes and no error.
func (s Selector) Checksums(ctx context.Context, pkg Package) ([]hash.Record, error) {
	if !s.Handles(pkg) {
		return nil, &Error{Source: s.String(), Package: pkg, Err: fmt.Errorf("%w: excluded by the source's patterns", ErrNotFound)}
	}
	if cr, ok := s.Source.(ChecksumReporter); ok {
		return cr.Checksums(ctx, pkg)
	}
	return nil, nil
}

func displayName(src any) string {
	if st, ok := src.(fmt.Stringer); ok {
		return st.String()
	}
	return fmt.Sprintf("%T", src)
}

// MultiSource combines sources in priority order. Make one with [Multi].
type MultiSource struct {
	srcs []Source
}

var (
	_ Source           = (*MultiSource)(nil)
	_ ChecksumReporter = (*MultiSource)(nil)
	_ ArchiveFetcher   = (*MultiSource)(nil)
)

// Multi returns a source that consults srcs in order, as OpenTofu's
// provider_installation methods are consulted:
//
//   - Versions returns the union of the versions of every source that knows
//     the package, sorted ascending. A version that several sources list is
//     reported as the first of them lists it (its Platforms are the union).
//   - Fetch brings the package from the first source that has that version
//     (and platform); sources that report [ErrNotFound],
//     [ErrVersionNotFound] or [ErrPlatformNotSupported] are skipped.
//     FetchArchive ([ArchiveFetcher]) does the same with each source's
//     FetchArchive, or its Fetch when it is not an ArchiveFetcher.
//   - Checksums asks the first source that is a [ChecksumReporter] and
//     knows the package.
//
// Any other error from a source stops the search and is returned as is.
// Wrap a source in a [Selector] to give it include and exclude patterns; a
// source that is not a Selector is asked about every package.
func Multi(srcs ...Source) *MultiSource {
	return &MultiSource{srcs: slices.Clone(srcs)}
}

type handler interface{ Handles(Package) bool }

func (m *MultiSource) candidates(pkg Package) []Source {
	var out []Source
	for _, s := range m.srcs {
		if h, ok := s.(handler); ok && !h.Handles(pkg) {
			continue
		}
		out = append(out, s)
	}
	return out
}

// String describes the combined sources.
func (m *MultiSource) String() string {
	names := make([]string, len(m.srcs))
	for i, s := range m.srcs {
		names[i] = displayName(s)
	}
	return "multi(" + strings.Join(names, ", ") + ")"
}

// notFound is the error for a package that no candidate source has: its
// Source names the sources that were searched for pkg.
func (m *MultiSource) notFound(pkg Package) error {
	var names []string
	for _, s := range m.candidates(pkg) {
		names = append(names, displayName(s))
	}
	if len(names) == 0 {
		return &Error{Source: m.String(), Package: pkg, Err: &NotFoundError{Package: pkg, NoSources: len(m.srcs) == 0}}
	}
	return &Error{Source: "multi(" + strings.Join(names, ", ") + ")", Package: pkg, Err: &NotFoundError{Package: pkg, Sources: names}}
}

func isMiss(err error) bool {
	return errors.Is(err, ErrNotFound) || errors.Is(err, ErrVersionNotFound) || errors.Is(err, ErrPlatformNotSupported)
}

// Versions implements [Lister].
func (m *MultiSource) Versions(ctx context.Context, pkg Package) ([]Available, error) {
	byVersion := map[versions.Version]int{}
	var out []Available
	var notKnown error // a registry's answer that it does not know pkg
	for _, s := range m.candidates(pkg) {
		if err := ctx.Err(); err != nil {
			return nil, Canceled(err)
		}
		list, err := s.Versions(ctx, pkg)
		if err != nil {
			if errors.Is(err, ErrNotFound) {
				var nk *RegistryNotKnownError
				if notKnown == nil && errors.As(err, &nk) {
					notKnown = err
				}
				continue
			}
			return nil, err
		}
		for _, a := range list {
			if i, ok := byVersion[a.Version]; ok {
				if out[i].Platforms != nil && a.Platforms != nil {
					out[i].Platforms = unionPlatforms(out[i].Platforms, a.Platforms)
				}
				continue
			}
			byVersion[a.Version] = len(out)
			a.Platforms = slices.Clone(a.Platforms)
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		if notKnown != nil {
			// As OpenTofu: a registry's "not known" explains more than
			// "not found in any of the search locations".
			return nil, notKnown
		}
		return nil, m.notFound(pkg)
	}
	slices.SortStableFunc(out, func(a, b Available) int { return a.Version.Compare(b.Version) })
	return out, nil
}

func unionPlatforms(a, b []Platform) []Platform {
	out := slices.Clone(a)
	for _, p := range b {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(x, y Platform) int {
		switch {
		case x.LessThan(y):
			return -1
		case y.LessThan(x):
			return 1
		}
		return 0
	})
	return out
}

// Fetch implements [Fetcher].
func (m *MultiSource) Fetch(ctx context.Context, pkg Package, dir string) (*Fetched, error) {
	return m.fetch(ctx, pkg, dir, false)
}

// FetchArchive implements [ArchiveFetcher]: as Fetch, asking the source
// that has the package for its archive.
func (m *MultiSource) FetchArchive(ctx context.Context, pkg Package, dir string) (*Fetched, error) {
	return m.fetch(ctx, pkg, dir, true)
}

func (m *MultiSource) fetch(ctx context.Context, pkg Package, dir string, archive bool) (*Fetched, error) {
	var best error
	rank := func(err error) int {
		switch {
		case errors.Is(err, ErrPlatformNotSupported):
			return 3
		case errors.Is(err, ErrVersionNotFound):
			return 2
		case err != nil:
			return 1
		}
		return 0
	}
	for _, s := range m.candidates(pkg) {
		if err := ctx.Err(); err != nil {
			return nil, Canceled(err)
		}
		got, err := FetchWith(ctx, s, pkg, dir, archive)
		if err == nil {
			return got, nil
		}
		if !isMiss(err) {
			return nil, err
		}
		if rank(err) > rank(best) {
			best = err
		}
	}
	if best == nil {
		return nil, m.notFound(pkg)
	}
	return nil, best
}

// Checksums implements [ChecksumReporter]. It returns no hashes and no error
// when none of the sources is a ChecksumReporter, and an error wrapping
// [ErrNotFound] when none of those that are knows pkg.
func (m *MultiSource) Checksums(ctx context.Context, pkg Package) ([]hash.Record, error) {
	var miss error
	answered := false
	for _, s := range m.candidates(pkg) {
		if sel, ok := s.(Selector); ok {
			s = sel.Source
		} else if sel, ok := s.(*Selector); ok {
			s = sel.Source
		}
		cr, ok := s.(ChecksumReporter)
		if !ok {
			continue
		}
		recs, err := cr.Checksums(ctx, pkg)
		if err != nil {
			if isMiss(err) {
				if miss == nil {
					miss = err
				}
				continue
			}
			return nil, err
		}
		answered = true
		if len(recs) > 0 {
			return recs, nil
		}
	}
	if !answered && miss != nil {
		return nil, miss
	}
	return nil, nil
}
