// Package providercache installs provider packages into OpenTofu's on-disk
// layout, so that tofu finds them there afterwards, and reads installed
// packages back.
//
// # Layout
//
// A provider package is a directory
//
//	ROOT/HOSTNAME/NAMESPACE/TYPE/VERSION/OS_ARCH/
//
// holding the provider's files, among them an executable whose name starts
// with "terraform-provider-TYPE". ROOT is ".terraform/providers" in a
// configuration's working directory ([DefaultDir]), or a shared plugin
// cache directory (plugin_cache_dir). With a shared cache, packages are
// installed in the cache and linked from the working directory, as tofu
// does ([Dir.LinkFrom]).
//
// Only unpacked directories count as installed: zip archives that happen to
// lie in the tree are ignored, as tofu ignores them.
package providercache

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/internal/fsutil"
	"github.com/tflock/tflock/source/internal/provlayout"
)

// DefaultDir is where tofu installs a configuration's providers, relative
// to its working directory.
var DefaultDir = filepath.Join(".terraform", "providers")

// ErrNotInstalled is wrapped by the error [Dir.Get] returns for a package
// that is not installed.
var ErrNotInstalled = errors.New("provider package not installed")

// Dir is a provider installation directory in OpenTofu's layout. Its
// methods are safe for concurrent use; concurrent installs of the same
// package leave one complete copy.
type Dir struct {
	root string
}

// NewDir returns the installation directory rooted at root; it is created
// when a package is first installed.
func NewDir(root string) *Dir {
	return &Dir{root: root}
}

// Root returns the directory's root.
func (d *Dir) Root() string { return d.root }

// PackageDir returns the directory where pkg is (or would be) installed.
func (d *Dir) PackageDir(pkg source.ProviderPackage) string {
	return filepath.Join(d.root, pkg.Addr.Hostname.String(), pkg.Addr.Namespace, pkg.Addr.Type, pkg.Version.String(), pkg.Platform.String())
}

func checkPackage(pkg source.ProviderPackage) error {
	if pkg.Addr.IsZero() || pkg.Version.IsZero() || pkg.Platform.IsZero() {
		return fmt.Errorf("provider package %q needs an address, a version and a platform", pkg.String())
	}
	return nil
}

// Installed is a provider package installed in a [Dir].
type Installed struct {
	// Package is the installed package: its address, version and platform.
	Package source.ProviderPackage
	// Dir is the package directory (it may be a symbolic link into a
	// shared cache).
	Dir string
}

// Executable returns the path of the provider's executable: the first file
// (by name) in the package directory whose name starts with
// "terraform-provider-TYPE" (and ends with ".exe" for windows packages).
// A package without one gives a *NoExecutableError.
func (i *Installed) Executable() (string, error) {
	entries, err := os.ReadDir(i.Dir)
	if err != nil {
		return "", &NoExecutableError{Package: i.Package, Dir: i.Dir, Err: err}
	}
	prefix := "terraform-provider-" + i.Package.Addr.Type
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		if i.Package.Platform.OS == "windows" && !strings.HasSuffix(strings.ToLower(name), ".exe") {
			continue
		}
		p := filepath.Join(i.Dir, name)
		info, err := os.Stat(p)
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		return p, nil
	}
	return "", &NoExecutableError{Package: i.Package, Dir: i.Dir}
}

// Hash returns the h1: hash of the installed package's files.
func (i *Installed) Hash() (hash.Hash, error) {
	dir, err := filepath.EvalSymlinks(i.Dir)
	if err != nil {
		return "", err
	}
	return hash.H1Dir(dir)
}

// NoExecutableError reports an installed package without a provider
// executable.
type NoExecutableError struct {
	// Package is the installed package: its address, version and platform.
	Package source.ProviderPackage
	// Dir is the installed package's directory.
	Dir string
	Err error // why the directory could not be read, if that was the cause
}

// Error names the package, its directory and the expected file name.
func (e *NoExecutableError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("provider %s: cannot read package directory %s: %v", e.Package.ForDisplay(), e.Dir, e.Err)
	}
	return fmt.Sprintf("provider %s: the package in %s has no executable file whose name starts with %q", e.Package.ForDisplay(), e.Dir, "terraform-provider-"+e.Package.Addr.Type)
}

// Unwrap returns the underlying error, if any.
func (e *NoExecutableError) Unwrap() error { return e.Err }

// Get returns the installed package pkg, or an error wrapping
// [ErrNotInstalled].
func (d *Dir) Get(pkg source.ProviderPackage) (*Installed, error) {
	if err := checkPackage(pkg); err != nil {
		return nil, err
	}
	p := d.PackageDir(pkg)
	if info, err := os.Stat(p); err == nil && info.IsDir() {
		return &Installed{Package: pkg, Dir: p}, nil
	}
	// Directory names written by hand may differ in case or host spelling
	// from the normalized address: look the package up by reading the tree.
	all, err := d.All(context.Background())
	if err == nil {
		for _, i := range all {
			if i.Package == pkg {
				return i, nil
			}
		}
	}
	return nil, fmt.Errorf("%w: %s in %s", ErrNotInstalled, pkg.ForDisplay(), d.root)
}

// All returns every installed package, sorted by address, version and
// platform. Entries whose names do not parse are ignored.
func (d *Dir) All(ctx context.Context) ([]*Installed, error) {
	entries, err := provlayout.Scan(ctx, d.root, nil)
	if err != nil {
		return nil, err
	}
	var out []*Installed
	for _, e := range entries {
		if e.Packed {
			continue
		}
		out = append(out, &Installed{Package: e.Package, Dir: e.Path})
	}
	return out, nil
}

// Install fetches pkg from src straight into the directory. The package is
// fetched into a temporary directory next to its final place and renamed
// into place once complete, replacing any previous copy, so that a reader
// never sees half a package. On error nothing is left.
func (d *Dir) Install(ctx context.Context, src source.Fetcher, pkg source.ProviderPackage) (*Installed, *source.Fetched, error) {
	if err := checkPackage(pkg); err != nil {
		return nil, nil, err
	}
	var fetched *source.Fetched
	inst, err := d.place(pkg, func(tmp string) error {
		var err error
		fetched, err = src.Fetch(ctx, pkg, tmp)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	fetched.Dir = inst.Dir
	return inst, fetched, nil
}

// InstallDir copies the package files in from (such as a
// [source.Fetched.Dir]) into the directory, as [Dir.Install] does.
func (d *Dir) InstallDir(ctx context.Context, pkg source.ProviderPackage, from string) (*Installed, error) {
	if err := checkPackage(pkg); err != nil {
		return nil, err
	}
	return d.place(pkg, func(tmp string) error { return fsutil.CopyDir(ctx, from, tmp) })
}

// InstallFromCache installs pkg from a package-cache entry at from, as
// [Dir.InstallDir] does, with each file hard-linked to the entry's where
// the file system allows it (else copied): neither the cache entry nor the
// installed package is ever written, so they may share their contents, and
// a large provider is installed without writing it again.
func (d *Dir) InstallFromCache(ctx context.Context, pkg source.ProviderPackage, from string) (*Installed, error) {
	if err := checkPackage(pkg); err != nil {
		return nil, err
	}
	return d.place(pkg, func(tmp string) error { return fsutil.LinkDir(ctx, from, tmp) })
}

// LinkFrom makes pkg, installed in the shared cache, available in d: a
// symbolic link to the cache's package directory (relative when possible),
// or a copy where links cannot be made. This is how tofu uses its plugin
// cache directory.
func (d *Dir) LinkFrom(ctx context.Context, cache *Dir, pkg source.ProviderPackage) (*Installed, error) {
	from, err := cache.Get(pkg)
	if err != nil {
		return nil, err
	}
	target := d.PackageDir(pkg)
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return nil, err
	}
	absFrom, err := filepath.Abs(from.Dir)
	if err != nil {
		return nil, err
	}
	absTarget, err := filepath.Abs(target)
	if err != nil {
		return nil, err
	}
	link := absFrom
	if rel, err := filepath.Rel(filepath.Dir(absTarget), absFrom); err == nil {
		link = rel
	}
	tmpDir, err := os.MkdirTemp(filepath.Dir(target), ".link-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmpDir)
	tmp := filepath.Join(tmpDir, "link")
	if err := os.Symlink(link, tmp); err == nil {
		if err := replace(tmp, target); err != nil {
			return nil, err
		}
		return &Installed{Package: pkg, Dir: target}, nil
	}
	return d.InstallDir(ctx, pkg, from.Dir)
}

// replace renames tmp (a directory or a symbolic link) to target,
// moving any existing target aside first and removing it afterwards, so
// that target is at all times either the old or the new copy. When
// another installer renames its copy into place at the same time, one of
// the copies wins; they hold the same package.
func replace(tmp, target string) error {
	var err error
	for range 3 {
		if err = os.Rename(tmp, target); err == nil {
			return nil
		}
		if _, lerr := os.Lstat(target); lerr != nil {
			continue // gone meanwhile: try again
		}
		trash, terr := os.MkdirTemp(filepath.Dir(target), ".old-")
		if terr != nil {
			return terr
		}
		old := filepath.Join(trash, "pkg")
		if rerr := os.Rename(target, old); rerr != nil {
			os.RemoveAll(trash)
			continue
		}
		err = os.Rename(tmp, target)
		os.RemoveAll(trash)
		if err == nil {
			return nil
		}
	}
	return err
}

// place fills a temporary directory with fill and renames it to pkg's
// package directory.
func (d *Dir) place(pkg source.ProviderPackage, fill func(tmp string) error) (*Installed, error) {
	target := d.PackageDir(pkg)
	parent := filepath.Dir(target)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(parent, "."+pkg.Platform.String()+".tmp-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	if err := fill(tmp); err != nil {
		return nil, err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, err
	}
	if err := replace(tmp, target); err != nil {
		return nil, err
	}
	return &Installed{Package: pkg, Dir: target}, nil
}

// InstallCached installs pkg into d through the shared plugin cache, as
// tofu does with plugin_cache_dir. When the cache already holds pkg and its
// h1: hash is one of want (or want is empty), d links to it and the
// returned Fetched is nil. Otherwise pkg is fetched from src into the cache
// (replacing a cached copy that does not match), then linked.
//
// Verifying what was fetched against the lock file remains the caller's
// work; want only decides whether the cached copy may be reused.
func (d *Dir) InstallCached(ctx context.Context, cache *Dir, src source.Fetcher, pkg source.ProviderPackage, want []hash.Hash) (*Installed, *source.Fetched, error) {
	if cached, err := cache.Get(pkg); err == nil {
		if len(want) == 0 {
			inst, err := d.LinkFrom(ctx, cache, pkg)
			return inst, nil, err
		}
		if h, err := cached.Hash(); err == nil && slices.Contains(want, h) {
			inst, err := d.LinkFrom(ctx, cache, pkg)
			return inst, nil, err
		}
	}
	_, fetched, err := cache.Install(ctx, src, pkg)
	if err != nil {
		return nil, nil, err
	}
	inst, err := d.LinkFrom(ctx, cache, pkg)
	if err != nil {
		return nil, nil, err
	}
	return inst, fetched, nil
}
