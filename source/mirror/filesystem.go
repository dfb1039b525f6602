package mirror

import (
	"context"
	"fmt"
	"os"
	"slices"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
	unpack "github.com/tflock/tflock/source/internal/archive"
	"github.com/tflock/tflock/source/internal/fsutil"
	"github.com/tflock/tflock/source/internal/provlayout"
)

// Filesystem is a provider mirror in a local directory, as OpenTofu's
// filesystem_mirror installation method reads it. Both layouts are read at
// once, in any mix:
//
//   - unpacked: HOST/NAMESPACE/TYPE/VERSION/OS_ARCH/ holding the package's
//     files;
//   - packed: HOST/NAMESPACE/TYPE/terraform-provider-TYPE_VERSION_OS_ARCH.zip.
//
// Host directory names are compared in their normalized form, namespace
// and type case-insensitively; entries whose names do not parse (a version
// that is not strict semver, a platform that is not "os_arch", a zip of
// another provider type) are ignored. When a package exists in both layouts
// the unpacked directory is used.
//
// Filesystem serves providers only: every module package is reported as
// not found. It is safe for concurrent use.
type Filesystem struct {
	// Limits bound a packed package: the total size of the files its zip
	// extracts to and its number of entries. The zero value applies the
	// defaults [source.Limits] states. Set it before the first use.
	Limits source.Limits

	dir string
}

var (
	_ source.Source           = (*Filesystem)(nil)
	_ source.ChecksumReporter = (*Filesystem)(nil)
	_ source.ArchiveFetcher   = (*Filesystem)(nil)
)

// NewFilesystem returns the filesystem mirror rooted at dir. A directory
// that does not exist is an empty mirror.
func NewFilesystem(dir string) *Filesystem {
	return &Filesystem{dir: dir}
}

// String returns the mirror's directory.
func (f *Filesystem) String() string { return f.dir }

// Entry is one provider package found in a filesystem mirror.
type Entry struct {
	// Package is the package: its address, version and platform.
	Package source.ProviderPackage
	// Path is the package directory (unpacked) or the zip file (packed).
	Path string
	// Packed is true for a zip archive.
	Packed bool
}

// Entries returns every package in the mirror, sorted by provider address,
// version, platform, with unpacked entries before packed ones.
func (f *Filesystem) Entries(ctx context.Context) ([]Entry, error) {
	return f.scan(ctx, nil)
}

// Providers returns the addresses of the providers the mirror holds at
// least one package of, sorted.
func (f *Filesystem) Providers(ctx context.Context) ([]tfaddr.Provider, error) {
	entries, err := f.scan(ctx, nil)
	if err != nil {
		return nil, err
	}
	var out []tfaddr.Provider
	for _, e := range entries {
		if len(out) == 0 || out[len(out)-1] != e.Package.Addr {
			out = append(out, e.Package.Addr)
		}
	}
	return out, nil
}

// scan reads the mirror, restricted to one provider when only is non-nil.
func (f *Filesystem) scan(ctx context.Context, only *tfaddr.Provider) ([]Entry, error) {
	found, err := provlayout.Scan(ctx, f.dir, only)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, len(found))
	for i, e := range found {
		out[i] = Entry(e)
	}
	return out, nil
}

func (f *Filesystem) errorf(pkg source.Package, sentinel error, format string, args ...any) error {
	return &source.Error{Source: f.dir, Package: pkg, Err: fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, args...))}
}

func (f *Filesystem) entriesFor(ctx context.Context, pkg source.Package) (source.ProviderPackage, []Entry, error) {
	if err := ctx.Err(); err != nil {
		return source.ProviderPackage{}, nil, err
	}
	p, ok := pkg.(source.ProviderPackage)
	if !ok {
		return p, nil, f.errorf(pkg, source.ErrNotFound, "a filesystem mirror holds providers only")
	}
	entries, err := f.scan(ctx, &p.Addr)
	if err != nil {
		return p, nil, &source.Error{Source: f.dir, Package: pkg, Err: err}
	}
	if len(entries) == 0 {
		return p, nil, f.errorf(pkg, source.ErrNotFound, "no package of this provider in the mirror")
	}
	return p, entries, nil
}

// Versions implements [source.Lister].
func (f *Filesystem) Versions(ctx context.Context, pkg source.Package) ([]source.Available, error) {
	_, entries, err := f.entriesFor(ctx, pkg)
	if err != nil {
		return nil, err
	}
	var out []source.Available
	for _, e := range entries {
		n := len(out)
		if n == 0 || out[n-1].Version != e.Package.Version {
			out = append(out, source.Available{Version: e.Package.Version})
			n++
		}
		if !slices.Contains(out[n-1].Platforms, e.Package.Platform) {
			out[n-1].Platforms = append(out[n-1].Platforms, e.Package.Platform)
		}
	}
	return out, nil
}

// find returns the entry for an exact package, preferring unpacked.
func (f *Filesystem) find(ctx context.Context, pkg source.Package) (Entry, error) {
	p, entries, err := f.entriesFor(ctx, pkg)
	if err != nil {
		return Entry{}, err
	}
	versionSeen := false
	for _, e := range entries {
		if e.Package.Version != p.Version {
			continue
		}
		versionSeen = true
		if e.Package.Platform == p.Platform {
			return e, nil
		}
	}
	if versionSeen {
		return Entry{}, &source.Error{Source: f.dir, Package: pkg, Err: &source.PlatformNotSupportedError{Package: p}}
	}
	return Entry{}, f.errorf(pkg, source.ErrVersionNotFound, "no version %s in the mirror", p.Version)
}

// Fetch implements [source.Fetcher]: it copies an unpacked package, or
// extracts a packed one, into dir. Hashes holds the h1: of dir, and for a
// packed package also the zh: of the zip.
func (f *Filesystem) Fetch(ctx context.Context, pkg source.Package, dir string) (*source.Fetched, error) {
	return f.fetch(ctx, pkg, dir, false)
}

// FetchArchive implements [source.ArchiveFetcher]: a packed provider is
// handed over as the mirror's zip file itself, which the caller only
// reads; an unpacked one is copied as by Fetch.
func (f *Filesystem) FetchArchive(ctx context.Context, pkg source.Package, dir string) (*source.Fetched, error) {
	return f.fetch(ctx, pkg, dir, true)
}

func (f *Filesystem) fetch(ctx context.Context, pkg source.Package, dir string, handOver bool) (*source.Fetched, error) {
	e, err := f.find(ctx, pkg)
	if err != nil {
		return nil, err
	}
	cleanup, err := fsutil.Prepare(dir)
	if err != nil {
		return nil, &source.Error{Source: f.dir, Package: pkg, Err: err}
	}
	fail := func(err error) (*source.Fetched, error) {
		cleanup()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &source.Error{Source: f.dir, Package: pkg, Err: fmt.Errorf("%s: %w", e.Path, err)}
	}
	got := &source.Fetched{Package: pkg, Dir: dir, Location: e.Path}
	if e.Packed && handOver {
		// The mirror's zip itself, read once by the caller (which
		// computes its zh: and h1:).
		info, err := os.Stat(e.Path)
		if err != nil {
			return fail(err)
		}
		return &source.Fetched{Package: pkg, Location: e.Path, Size: info.Size(), Archive: e.Path, Limits: f.Limits}, nil
	}
	if e.Packed {
		info, err := os.Stat(e.Path)
		if err != nil {
			return fail(err)
		}
		got.Size = info.Size()
		if err := unpack.ExtractZipFile(ctx, e.Path, dir, unpack.Options{Limits: f.Limits}); err != nil {
			return fail(err)
		}
		zh, err := hash.ZH(e.Path)
		if err != nil {
			return fail(err)
		}
		got.Hashes = append(got.Hashes, zh)
	} else if err := fsutil.CopyDir(ctx, e.Path, dir); err != nil {
		return fail(err)
	}
	h1, err := hash.H1Dir(dir)
	if err != nil {
		return fail(err)
	}
	got.Hashes = append([]hash.Hash{h1}, got.Hashes...)
	return got, nil
}

// Checksums implements [source.ChecksumReporter]: for pkg's version it
// reports the h1: of every platform's package in the mirror, and the zh: of
// every packed one, with the mirror's directory as provenance. A zip that
// is not a valid archive still has its zh: reported.
func (f *Filesystem) Checksums(ctx context.Context, pkg source.Package) ([]hash.Record, error) {
	p, entries, err := f.entriesFor(ctx, pkg)
	if err != nil {
		return nil, err
	}
	var out []hash.Record
	for _, e := range entries {
		if e.Package.Version != p.Version {
			continue
		}
		prov := hash.Provenance{Mirrors: []string{f.dir}, Platforms: []string{e.Package.Platform.String()}}
		if e.Packed {
			// Both hashes in one read; a zip that is not a valid archive
			// still has its zh:.
			if sum, err := hash.HashZip(e.Path); err == nil {
				out = append(out, hash.Record{Hash: sum.ZH, Provenance: prov}, hash.Record{Hash: sum.H1, Provenance: prov})
			} else if zh, err := hash.ZH(e.Path); err == nil {
				out = append(out, hash.Record{Hash: zh, Provenance: prov})
			}
			continue
		}
		h1, err := hash.H1Dir(e.Path)
		if err != nil {
			return nil, &source.Error{Source: f.dir, Package: pkg, Err: err}
		}
		out = append(out, hash.Record{Hash: h1, Provenance: prov})
	}
	if len(out) == 0 {
		return nil, f.errorf(pkg, source.ErrVersionNotFound, "no version %s in the mirror", p.Version)
	}
	return out, nil
}
