package assemble

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sync"
	"time"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/address"
	"github.com/tflock/tflock/source/registry"
)

// Dispatch is a [source.Source] that routes each package to the source of
// its kind: providers to Providers, registry modules to Registry, and remote
// modules by the kind of their address (git, OCI, HTTP archives). A package
// whose kind has no source gives an error wrapping [source.ErrNotFound].
//
// Dispatch is the one place where a module package's location is routed.
// When the source of a module package is a [source.ModuleLocator] (a
// module registry, whose download endpoint names where each version is;
// an HTTP address answered by X-Terraform-Get), Fetch asks it for the
// location and routes that in turn: a "git::" location to Git, an
// "oci://" one to OCI (with the location's ref, tag or digest as the
// package's Ref), an HTTP archive to the fetcher the locator reported
// with it (which knows the credentials it needs), or else to HTTP. A
// "//SUBDIR" of the location is reported in [source.Fetched.Subdir], and
// the [source.Fetched.Package] is the package asked for.
//
// It is a [source.ChecksumReporter]; a package whose source is not one gets
// no checksums (and no error). It is a [source.ArchiveFetcher]:
// FetchArchive routes as Fetch does and asks the source (or the module
// location's fetcher) it arrives at for the archive, or calls its Fetch
// when it is not an ArchiveFetcher.
type Dispatch struct {
	// Providers serves provider packages. Default: none.
	Providers source.Source
	// Registry serves module registry packages
	// ("HOST/NAMESPACE/NAME/SYSTEM"). Default: Providers.
	Registry source.Source
	// Git serves "git::" module packages, and registry modules located in
	// git. Default: none.
	Git source.Source
	// OCI serves "oci://" module packages, and registry modules located
	// in an OCI registry. Default: none.
	OCI source.Source
	// HTTP serves module archives over HTTP(S) ("https://host/mod.zip",
	// "https://host/mod?archive=tar.gz", X-Terraform-Get indirections).
	// Default: a [registry.ArchiveSource] with default [registry.Options]
	// (the standard HTTP client, TF_TOKEN_* credentials).
	HTTP source.Source
	// DefaultHost is not used: the registry host of a module address
	// without one is decided where the address is read (the
	// configuration reader, or [source.NewModulePackage]'s caller), and
	// a package that carries only its Source string is read by
	// [source.ModulePackage.Address] (OpenTofu's default host). Kept so
	// that programs which set it still build.
	//
	// Deprecated: it is not used; leave it out, and parse module
	// addresses with the default host that applies
	// ([address.ParseModuleSourceWith]).
	DefaultHost string
	// Remember, when positive, makes the Dispatch remember the version
	// lists and checksums it answers for that long
	// ([source.MemoizeFor]), shared by every run given this Dispatch: a
	// wrapper running many units asks each source once per package, and
	// a long-lived process sees a new release at most Remember after it
	// appears. Default 0: nothing is remembered beyond a run (each Init
	// remembers its own listings). [NewSources] sets it. Set it before
	// the first use.
	Remember time.Duration

	httpOnce    sync.Once
	defaultHTTP source.Source
	memoOnce    sync.Once
	memo        source.Source // MemoizeFor(raw, Remember), when Remember > 0
}

// raw is the Dispatch without its memory: what the memo asks.
type raw struct{ d *Dispatch }

func (r raw) String() string { return r.d.String() }
func (r raw) Versions(ctx context.Context, pkg source.Package) ([]source.Available, error) {
	return r.d.versions(ctx, pkg)
}
func (r raw) Fetch(ctx context.Context, pkg source.Package, dir string) (*source.Fetched, error) {
	return r.d.Fetch(ctx, pkg, dir)
}
func (r raw) Checksums(ctx context.Context, pkg source.Package) ([]hash.Record, error) {
	return r.d.checksums(ctx, pkg)
}

// remembered returns the memo when Remember asks for one, or nil.
func (d *Dispatch) remembered() source.Source {
	if d.Remember <= 0 {
		return nil
	}
	d.memoOnce.Do(func() { d.memo = source.MemoizeFor(raw{d}, d.Remember) })
	return d.memo
}

var (
	_ source.Source           = (*Dispatch)(nil)
	_ source.ChecksumReporter = (*Dispatch)(nil)
	_ source.ArchiveFetcher   = (*Dispatch)(nil)
)

// String names the source for messages.
func (d *Dispatch) String() string { return "dispatch" }

func (d *Dispatch) route(pkg source.Package) (source.Source, error) {
	switch p := pkg.(type) {
	case source.ProviderPackage:
		if d.Providers == nil {
			return nil, &source.Error{Package: pkg, Err: fmt.Errorf("%w: no provider source configured", source.ErrNotFound)}
		}
		return d.Providers, nil
	case source.ModulePackage:
		ms, err := p.Address()
		if err != nil {
			return nil, &source.Error{Package: pkg, Err: err}
		}
		var src source.Source
		kind := "registry"
		switch a := ms.(type) {
		case address.Registry:
			src = d.Registry
			if src == nil {
				src = d.Providers
			}
		case address.Remote:
			kind = string(a.Kind)
			switch a.Kind {
			case address.KindGit:
				src = d.Git
			case address.KindOCI:
				src = d.OCI
			case address.KindHTTP:
				src = d.httpSource()
			}
		default:
			return nil, &source.Error{Package: pkg, Err: fmt.Errorf("%w: local module paths are not packages", source.ErrNotFound)}
		}
		if src == nil {
			return nil, &source.Error{Package: pkg, Err: fmt.Errorf("%w: no source configured for %s modules", source.ErrNotFound, kind)}
		}
		return src, nil
	}
	return nil, &source.Error{Package: pkg, Err: fmt.Errorf("%w: unknown package type %T", source.ErrNotFound, pkg)}
}

// httpSource returns HTTP, or the default archive source.
func (d *Dispatch) httpSource() source.Source {
	if d.HTTP != nil {
		return d.HTTP
	}
	d.httpOnce.Do(func() { d.defaultHTTP = registry.NewArchiveSource(registry.Options{}) })
	return d.defaultHTTP
}

// preparer is a source that can make ahead of a Fetch the listing the
// Fetch will need ([git.Source.Prepare]).
type preparer interface {
	Prepare(ctx context.Context, pkg source.Package)
}

// Prepare routes pkg as Fetch does, and lets its source make ahead what
// fetching it will list, when the source can ([git.Source.Prepare]); it
// reports nothing, and returns when that is done. resolve/install's Init
// prepares the calls a level will fetch while it resolves the level.
func (d *Dispatch) Prepare(ctx context.Context, pkg source.Package) {
	if src, err := d.route(pkg); err == nil {
		if p, ok := src.(preparer); ok {
			p.Prepare(ctx, pkg)
		}
	}
}

// Versions implements [source.Lister].
func (d *Dispatch) Versions(ctx context.Context, pkg source.Package) ([]source.Available, error) {
	if m := d.remembered(); m != nil {
		return m.Versions(ctx, pkg)
	}
	return d.versions(ctx, pkg)
}

func (d *Dispatch) versions(ctx context.Context, pkg source.Package) ([]source.Available, error) {
	src, err := d.route(pkg)
	if err != nil {
		return nil, err
	}
	return src.Versions(ctx, pkg)
}

// Fetch implements [source.Fetcher]; a module package whose source is a
// [source.ModuleLocator] is fetched from the location it reports.
func (d *Dispatch) Fetch(ctx context.Context, pkg source.Package, dir string) (*source.Fetched, error) {
	return d.fetch(ctx, pkg, dir, false, 0)
}

// FetchArchive implements [source.ArchiveFetcher]: as Fetch, asking the
// source the package is routed to for its archive.
func (d *Dispatch) FetchArchive(ctx context.Context, pkg source.Package, dir string) (*source.Fetched, error) {
	return d.fetch(ctx, pkg, dir, true, 0)
}

// maxLocations bounds a chain of module locations that name other
// locators.
const maxLocations = 5

func (d *Dispatch) fetch(ctx context.Context, pkg source.Package, dir string, archive bool, depth int) (*source.Fetched, error) {
	src, err := d.route(pkg)
	if err != nil {
		return nil, err
	}
	p, isModule := pkg.(source.ModulePackage)
	loc, ok := src.(source.ModuleLocator)
	if !isModule || !ok {
		return source.FetchWith(ctx, src, pkg, dir, archive)
	}
	l, err := loc.ModuleLocation(ctx, p)
	if err != nil {
		return nil, err
	}
	f, err := d.fetchLocation(ctx, p, l, dir, archive, depth)
	if err != nil {
		return nil, err
	}
	f.Package = p
	return f, nil
}

// fetchLocation fetches the module package p from its location l.
func (d *Dispatch) fetchLocation(ctx context.Context, p source.ModulePackage, l source.ModuleLocation, dir string, archive bool, depth int) (*source.Fetched, error) {
	r, err := l.Remote()
	if err != nil {
		return nil, &source.Error{Package: p, Err: fmt.Errorf("%w: %q: %v", registry.ErrUnsupportedLocation, address.Redact(l.Address), err)}
	}
	if r.Kind == address.KindHTTP && l.Archive != nil {
		f, err := source.FetchWith(ctx, l.Archive, p, dir, archive)
		if err != nil {
			return nil, err
		}
		return locatedSubdir(f, p, l, "")
	}
	at, err := source.NewModulePackage(r)
	if err != nil {
		return nil, &source.Error{Package: p, Err: fmt.Errorf("%w: %q: %v", registry.ErrUnsupportedLocation, address.Redact(l.Address), err)}
	}
	switch r.Kind {
	case address.KindGit:
		at.Ref = r.Ref
	case address.KindOCI:
		at.Ref = r.Tag
		if r.Digest != "" {
			at.Ref = r.Digest
		}
	case address.KindHTTP:
		if depth >= maxLocations {
			return nil, &source.Error{Package: p, Err: fmt.Errorf("%w: more than %d locations, at %s", registry.ErrUnsupportedLocation, maxLocations, address.Redact(l.Address))}
		}
	default:
		return nil, &source.Error{Package: p, Err: fmt.Errorf("%w: %s packages (%s) are not supported", registry.ErrUnsupportedLocation, r.Kind, address.Redact(l.Address))}
	}
	if _, err := d.route(at); err != nil {
		var se *source.Error
		if errors.As(err, &se) {
			err = se.Err
		}
		return nil, &source.Error{Package: p, Err: fmt.Errorf("the module package is at %s: %w", address.Redact(l.Address), err)}
	}
	f, err := d.fetch(ctx, at, dir, archive, depth+1)
	if err != nil {
		return nil, err
	}
	return locatedSubdir(f, p, l, r.Subdir)
}

// locatedSubdir sets f.Subdir to the subdirectory the location l names
// (above, then f's own below it) in the canonical form of
// [address.PackageSubdir], or refuses one that leads out of the package.
func locatedSubdir(f *source.Fetched, p source.ModulePackage, l source.ModuleLocation, above string) (*source.Fetched, error) {
	sub, err := address.PackageSubdir(path.Join(above, f.Subdir))
	if err != nil {
		return nil, &source.Error{Package: p, Err: fmt.Errorf("%w: %q: %v", registry.ErrUnsupportedLocation, address.Redact(l.Address), err)}
	}
	f.Subdir = sub
	return f, nil
}

// Checksums implements [source.ChecksumReporter].
func (d *Dispatch) Checksums(ctx context.Context, pkg source.Package) ([]hash.Record, error) {
	if m := d.remembered(); m != nil {
		return m.(source.ChecksumReporter).Checksums(ctx, pkg)
	}
	return d.checksums(ctx, pkg)
}

func (d *Dispatch) checksums(ctx context.Context, pkg source.Package) ([]hash.Record, error) {
	src, err := d.route(pkg)
	if err != nil {
		return nil, err
	}
	if cr, ok := src.(source.ChecksumReporter); ok {
		return cr.Checksums(ctx, pkg)
	}
	return nil, nil
}
