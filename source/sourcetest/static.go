package sourcetest

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"sort"
	"strings"

	tfaddr "github.com/hashicorp/terraform-registry-address"
	"golang.org/x/mod/sumdb/dirhash"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/internal/fsutil"
)

// Static is an in-memory [source.Source] for tests: it serves the provider
// and module packages listed in its fields, with the file contents given.
// Fetch writes the files into the destination directory and reports their
// h1: hash; Checksums reports the h1: of every platform of a provider
// version, with the Static's Name as the registry that vouches for them.
//
// Fill the fields before first use and do not change them afterwards; a
// Static is then safe for concurrent use.
type Static struct {
	// Name is how errors and provenance refer to this source.
	// Default: "static".
	Name string
	// Providers are the provider packages served, one per version and
	// platform.
	Providers []StaticProvider
	// Modules are the module packages served, one per version (or ref).
	Modules []StaticModule
	// Archives makes FetchArchive hand each package over as a zip
	// archive (as a registry does), for tests of the code that extracts
	// it. Default false: FetchArchive extracts, as Fetch.
	Archives bool
}

// StaticProvider is one provider package of a [Static].
type StaticProvider struct {
	// Addr is the provider's address.
	Addr tfaddr.Provider
	// Version is the package's version.
	Version versions.Version
	// Platform is the package's platform.
	Platform source.Platform
	// Files maps slash-separated file names to contents.
	Files map[string]string
}

// StaticModule is one module package of a [Static]. A module published
// under a ref without a version (a git branch) has Ref set and a zero
// Version.
type StaticModule struct {
	// Source is the canonical package address, as in [source.ModulePackage.Source].
	Source string
	// Version is the package's version; zero for one published under a ref only.
	Version versions.Version
	// Ref is the name the version is published under at the origin (a git
	// tag or branch), reported in [source.Available.Ref]; optional.
	Ref string
	// Pin is the immutable identity reported in [source.Available.Pin] and
	// [source.Fetched.Pin]; optional.
	Pin string
	// Files maps slash-separated file names to contents.
	Files map[string]string
}

var (
	_ source.Source           = (*Static)(nil)
	_ source.ChecksumReporter = (*Static)(nil)
	_ source.ArchiveFetcher   = (*Static)(nil)
)

// String returns the Static's name.
func (s *Static) String() string {
	if s.Name == "" {
		return "static"
	}
	return s.Name
}

func (s *Static) errorf(pkg source.Package, sentinel error, format string, args ...any) error {
	return &source.Error{Source: s.String(), Package: pkg, Err: fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, args...))}
}

// Versions implements [source.Lister].
func (s *Static) Versions(ctx context.Context, pkg source.Package) ([]source.Available, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []source.Available
	switch pkg := pkg.(type) {
	case source.ProviderPackage:
		byVersion := map[versions.Version]int{}
		for _, p := range s.Providers {
			if p.Addr != pkg.Addr {
				continue
			}
			i, ok := byVersion[p.Version]
			if !ok {
				i = len(out)
				byVersion[p.Version] = i
				out = append(out, source.Available{Version: p.Version, Platforms: []source.Platform{}})
			}
			if !p.Platform.IsZero() && !slices.Contains(out[i].Platforms, p.Platform) {
				out[i].Platforms = append(out[i].Platforms, p.Platform)
			}
		}
		for i := range out {
			sort.Slice(out[i].Platforms, func(a, b int) bool { return out[i].Platforms[a].LessThan(out[i].Platforms[b]) })
		}
	case source.ModulePackage:
		for _, m := range s.Modules {
			if m.Source != pkg.Source || m.Version.IsZero() {
				continue
			}
			out = append(out, source.Available{Version: m.Version, Ref: m.Ref, Pin: m.Pin})
		}
	default:
		return nil, s.errorf(pkg, source.ErrNotFound, "unsupported package kind %T", pkg)
	}
	if len(out) == 0 && !s.knows(pkg) {
		return nil, s.errorf(pkg, source.ErrNotFound, "no such package in this source")
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Version.LessThan(out[b].Version) })
	return out, nil
}

// knows reports whether any entry, versioned or not, has pkg's family.
func (s *Static) knows(pkg source.Package) bool {
	switch pkg := pkg.(type) {
	case source.ProviderPackage:
		for _, p := range s.Providers {
			if p.Addr == pkg.Addr {
				return true
			}
		}
	case source.ModulePackage:
		for _, m := range s.Modules {
			if m.Source == pkg.Source {
				return true
			}
		}
	}
	return false
}

// lookup finds the files of an exact package.
func (s *Static) lookup(pkg source.Package) (files map[string]string, pin string, err error) {
	if !s.knows(pkg) {
		return nil, "", s.errorf(pkg, source.ErrNotFound, "no such package in this source")
	}
	switch pkg := pkg.(type) {
	case source.ProviderPackage:
		versionSeen := false
		for _, p := range s.Providers {
			if p.Addr != pkg.Addr || p.Version != pkg.Version {
				continue
			}
			versionSeen = true
			if p.Platform == pkg.Platform {
				return p.Files, "", nil
			}
		}
		if versionSeen {
			return nil, "", s.errorf(pkg, source.ErrPlatformNotSupported, "no package for platform %q", pkg.Platform.String())
		}
		return nil, "", s.errorf(pkg, source.ErrVersionNotFound, "no version %q", pkg.Version.String())
	case source.ModulePackage:
		for _, m := range s.Modules {
			if m.Source != pkg.Source {
				continue
			}
			if (!pkg.Version.IsZero() && m.Version == pkg.Version) || (pkg.Version.IsZero() && pkg.Ref != "" && m.Ref == pkg.Ref) {
				if pkg.Pin != "" && m.Pin != pkg.Pin {
					return nil, "", s.errorf(pkg, source.ErrChecksumMismatch, "the package is at %q, not at the pinned %q", m.Pin, pkg.Pin)
				}
				return m.Files, m.Pin, nil
			}
		}
		if pkg.Version.IsZero() {
			return nil, "", s.errorf(pkg, source.ErrVersionNotFound, "no ref %q", pkg.Ref)
		}
		return nil, "", s.errorf(pkg, source.ErrVersionNotFound, "no version %q", pkg.Version.String())
	}
	return nil, "", s.errorf(pkg, source.ErrNotFound, "unsupported package kind %T", pkg)
}

// Fetch implements [source.Fetcher]: it writes the package's files into dir.
func (s *Static) Fetch(ctx context.Context, pkg source.Package, dir string) (*source.Fetched, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	files, pin, err := s.lookup(pkg)
	if err != nil {
		return nil, err
	}
	cleanup, err := fsutil.Prepare(dir)
	if err != nil {
		return nil, &source.Error{Source: s.String(), Package: pkg, Err: err}
	}
	fail := func(err error) (*source.Fetched, error) {
		cleanup()
		return nil, &source.Error{Source: s.String(), Package: pkg, Err: err}
	}
	// A module package is written and hashed by the module rule: no
	// version-control metadata.
	_, module := pkg.(source.ModulePackage)
	var size int64
	for _, name := range sortedNames(files) {
		if module && hash.IsVCSMetadata(name) {
			continue
		}
		if err := ctx.Err(); err != nil {
			cleanup()
			return nil, err
		}
		perm := fileModeFor(name)
		if err := fsutil.WriteFile(dir, name, []byte(files[name]), perm); err != nil {
			return fail(err)
		}
		size += int64(len(files[name]))
	}
	h1, err := hash.Options{Module: module}.H1Dir(ctx, dir)
	if err != nil {
		return fail(err)
	}
	return &source.Fetched{
		Package:  pkg,
		Dir:      dir,
		Location: s.String() + ":" + pkg.String(),
		Size:     size,
		Hashes:   []hash.Hash{h1},
		Pin:      pin,
	}, nil
}

// FetchArchive implements [source.ArchiveFetcher]. With Archives set it
// writes the package's files into a zip archive in dir (each with the
// mode Fetch gives it) and hands that over, stating the archive's zh:;
// otherwise it is Fetch.
func (s *Static) FetchArchive(ctx context.Context, pkg source.Package, dir string) (*source.Fetched, error) {
	if !s.Archives {
		return s.Fetch(ctx, pkg, dir)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	files, pin, err := s.lookup(pkg)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range sortedNames(files) {
		if !fsutil.ValidName(name) {
			return nil, &source.Error{Source: s.String(), Package: pkg, Err: fmt.Errorf("invalid file name %q in package", name)}
		}
		fh := &zip.FileHeader{Name: name, Method: zip.Deflate}
		fh.SetMode(fileModeFor(name))
		w, err := zw.CreateHeader(fh)
		if err == nil {
			_, err = io.WriteString(w, files[name])
		}
		if err != nil {
			return nil, &source.Error{Source: s.String(), Package: pkg, Err: err}
		}
	}
	if err := zw.Close(); err != nil {
		return nil, &source.Error{Source: s.String(), Package: pkg, Err: err}
	}
	cleanup, err := fsutil.Prepare(dir)
	if err != nil {
		return nil, &source.Error{Source: s.String(), Package: pkg, Err: err}
	}
	f, err := fsutil.ArchiveFile(dir)
	if err == nil {
		_, err = f.Write(buf.Bytes())
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		cleanup()
		return nil, &source.Error{Source: s.String(), Package: pkg, Err: err}
	}
	return &source.Fetched{
		Package:  pkg,
		Location: s.String() + ":" + pkg.String(),
		Size:     int64(buf.Len()),
		Hashes:   []hash.Hash{hash.NewHash(hash.SchemeZH, sha256.Sum256(buf.Bytes()))},
		Pin:      pin,
		Archive:  f.Name(),
	}, nil
}

// fileModeFor makes provider executables executable, as a real package
// would have them.
func fileModeFor(name string) fs.FileMode {
	base := name[strings.LastIndexByte(name, '/')+1:]
	if strings.HasPrefix(base, "terraform-provider-") {
		return 0o755
	}
	return 0o644
}

// Checksums implements [source.ChecksumReporter]: for a provider it
// reports the h1: of every platform's package of pkg's version; for a
// module, the h1: of the package.
func (s *Static) Checksums(ctx context.Context, pkg source.Package) ([]hash.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []hash.Record
	switch p := pkg.(type) {
	case source.ProviderPackage:
		for _, sp := range s.Providers {
			if sp.Addr != p.Addr || sp.Version != p.Version {
				continue
			}
			h, err := H1(sp.Files)
			if err != nil {
				return nil, &source.Error{Source: s.String(), Package: pkg, Err: err}
			}
			out = append(out, hash.Record{Hash: h, Provenance: hash.Provenance{Registries: []string{s.String()}, Platforms: []string{sp.Platform.String()}}})
		}
		if len(out) == 0 {
			_, _, err := s.lookup(pkg)
			return nil, err // never nil: no entry has this version
		}
	default:
		files, _, err := s.lookup(pkg)
		if err != nil {
			return nil, err
		}
		h, err := H1(files)
		if err != nil {
			return nil, &source.Error{Source: s.String(), Package: pkg, Err: err}
		}
		out = append(out, hash.Record{Hash: h, Provenance: hash.Provenance{Registries: []string{s.String()}}})
	}
	return out, nil
}

// H1 returns the h1: hash that a directory holding files would have, by the
// provider rule (every file counts), computed with x/mod's dirhash as an
// independent check of the hash package. For a module package's files
// holding version-control metadata, leave those files out first.
func H1(files map[string]string) (hash.Hash, error) {
	for name := range files {
		if !fsutil.ValidName(name) {
			return "", fmt.Errorf("invalid file name %q in package", name)
		}
	}
	s, err := dirhash.Hash1(sortedNames(files), func(name string) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader([]byte(files[name]))), nil
	})
	if err != nil {
		return "", err
	}
	return hash.Hash(s), nil
}

func sortedNames(files map[string]string) []string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
