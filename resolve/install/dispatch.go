package install

import (
	"context"
	"fmt"
	"sync"

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
// It is a [source.ChecksumReporter]; a package whose source is not one gets
// no checksums (and no error).
type Dispatch struct {
	// Providers serves provider packages. Default: none.
	Providers source.Source
	// Registry serves module registry packages
	// ("HOST/NAMESPACE/NAME/SYSTEM"). Default: Providers.
	Registry source.Source
	// Git serves "git::" module packages. Default: none.
	Git source.Source
	// OCI serves "oci://" module packages. Default: none.
	OCI source.Source
	// HTTP serves module archives over HTTP(S) ("https://host/mod.zip",
	// "https://host/mod?archive=tar.gz", X-Terraform-Get indirections).
	// Default: a [registry.ArchiveSource] with default [registry.Options]
	// (the standard HTTP client, TF_TOKEN_* credentials) that hands git
	// and OCI locations named by X-Terraform-Get back to this Dispatch.
	HTTP source.Source
	// DefaultHost is the registry host of module addresses without one.
	// Default [address.DefaultRegistryHost].
	DefaultHost string

	httpOnce    sync.Once
	defaultHTTP source.Source
}

var (
	_ source.Source           = (*Dispatch)(nil)
	_ source.ChecksumReporter = (*Dispatch)(nil)
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
		ms, err := address.ParseModuleSourceWith(p.Source, address.Options{DefaultRegistryHost: d.DefaultHost})
		if err != nil {
			return nil, &source.Error{Package: pkg, Err: fmt.Errorf("%w: %v", source.ErrNotFound, err)}
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
	d.httpOnce.Do(func() { d.defaultHTTP = registry.NewArchiveSource(registry.Options{Remote: d}) })
	return d.defaultHTTP
}

// Versions implements [source.Lister].
func (d *Dispatch) Versions(ctx context.Context, pkg source.Package) ([]source.Available, error) {
	src, err := d.route(pkg)
	if err != nil {
		return nil, err
	}
	return src.Versions(ctx, pkg)
}

// Fetch implements [source.Fetcher].
func (d *Dispatch) Fetch(ctx context.Context, pkg source.Package, dir string) (*source.Fetched, error) {
	src, err := d.route(pkg)
	if err != nil {
		return nil, err
	}
	return src.Fetch(ctx, pkg, dir)
}

// Checksums implements [source.ChecksumReporter].
func (d *Dispatch) Checksums(ctx context.Context, pkg source.Package) ([]hash.Record, error) {
	src, err := d.route(pkg)
	if err != nil {
		return nil, err
	}
	if cr, ok := src.(source.ChecksumReporter); ok {
		return cr.Checksums(ctx, pkg)
	}
	return nil, nil
}
