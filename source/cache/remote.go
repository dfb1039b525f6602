package cache

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/address"
	"github.com/tflock/tflock/source/internal/archive"
)

// Remote is a tier shared by many machines behind the local cache, such as
// an OCI registry (package ocitier). The cache never trusts it: what Get
// brings is verified exactly as a download from the package's origin.
type Remote interface {
	// Get writes the archive (a zip) the tier holds for pkg to the file
	// path, which does not exist yet, whole or not at all. want are the
	// hashes pkg must match (a lock file's, or the origin's signed
	// checksums on a first install); the tier may find the package by
	// them (a module by its h1:). A miss is an error wrapping
	// [source.ErrNotFound].
	Get(ctx context.Context, pkg source.Package, want []hash.Hash, path string) (RemoteArchive, error)
	// Put stores the archive at path for pkg. a.Hashes are the verified
	// hashes of the package: its h1: and, for a provider, the zh: of the
	// zip at path.
	Put(ctx context.Context, pkg source.Package, a RemoteArchive, path string) error
}

// RemoteArchive describes a package archive in a [Remote] tier.
type RemoteArchive struct {
	// Hashes: for Put, the package's verified h1: (and zh:); from Get,
	// what the tier checked while reading (the zh: of the bytes written),
	// which the cache still verifies against the package's hashes.
	Hashes []hash.Hash
	// Subdir is the subdirectory of a module package that its origin
	// designated as the module's root, as in [source.Fetched.Subdir].
	Subdir string
	// Location is where Get read the archive from, without credentials.
	Location string
}

// Tiered reports whether the cache has a remote tier behind it
// ([Options.Remote]): a caller that can learn the checksums a package's
// origin vouches for before filling it then passes them as Fill's want,
// so that the tier's copy, verifiable against them, can serve a package
// no lock file records yet.
func (c *Cache) Tiered() bool { return c.opts.Remote != nil }

// remoteServes reports whether the remote tier may be asked for pkg: only
// when want holds a hash that what it returns can be verified by (a
// module's h1:, which also names it there; any h1: or zh: of a provider).
// A package nothing vouches for yet is fetched from its origin.
func remoteServes(pkg source.Package, want []hash.Hash) bool {
	for _, h := range want {
		if h.Scheme() == hash.SchemeH1 || (!isModule(pkg) && h.Scheme() == hash.SchemeZH) {
			return true
		}
	}
	return false
}

// lookupRemote fills pkg from the remote tier for [Cache.Lookup], under
// the package's lock, when the tier can serve it.
func (c *Cache) lookupRemote(ctx context.Context, pkg source.Package, want []hash.Hash) (Entry, bool) {
	if c.opts.Remote == nil || !remoteServes(pkg, want) {
		return Entry{}, false
	}
	key := identity(pkg)
	if _, missed := c.remoteMisses.Load(key); missed {
		return Entry{}, false
	}
	if c.makeDirs() != nil {
		return Entry{}, false
	}
	unlock, err := c.lock(ctx, pkg, key, false)
	if err != nil {
		return Entry{}, false
	}
	defer unlock()
	if e, ok := c.lookup(ctx, pkg, want); ok {
		return e, true
	}
	work, err := os.MkdirTemp(filepath.Join(c.dir, "tmp"), tempName("fill", keyName(key)))
	if err != nil {
		return Entry{}, false
	}
	defer os.RemoveAll(work)
	return c.fillRemote(ctx, pkg, key, want, work)
}

// fillRemote tries to fill pkg from the remote tier, in work/remote. What
// the tier returns is published only if it passes the verification an
// origin download passes; otherwise (a miss, a failure, a mismatch) ok is
// false and the caller goes to the origin.
func (c *Cache) fillRemote(ctx context.Context, pkg source.Package, key string, want []hash.Hash, work string) (Entry, bool) {
	if c.opts.Remote == nil || !remoteServes(pkg, want) {
		return Entry{}, false
	}
	if _, missed := c.remoteMisses.Load(key); missed {
		return Entry{}, false
	}
	dir := filepath.Join(work, "remote")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return Entry{}, false
	}
	archive := filepath.Join(dir, "package.zip")
	ra, err := c.opts.Remote.Get(ctx, pkg, want, archive)
	if err != nil {
		if !errors.Is(err, source.ErrNotFound) {
			c.remoteFailed(ctx, "reading", err)
		}
		c.remoteMisses.Store(key, true) // asked once per run (per Cache)
		return Entry{}, false
	}
	if reason := remoteSubdirRefused(pkg, ra.Subdir); reason != "" {
		source.EmitContext(ctx, c.opts.Events, source.Event{Kind: source.EventWarning, Package: pkg,
			Detail: fmt.Sprintf("the remote cache tier's copy of %s was not used: %s; fetching it from its origin", pkg.ForDisplay(), reason)})
		c.remoteMisses.Store(key, true)
		return Entry{}, false
	}
	f := &source.Fetched{Package: pkg, Archive: archive, Location: ra.Location, Subdir: ra.Subdir}
	for _, h := range ra.Hashes {
		if h.Scheme() == hash.SchemeZH && !isModule(pkg) {
			f.Hashes = append(f.Hashes, h)
		}
	}
	if m, ok := pkg.(source.ModulePackage); ok {
		f.Pin = m.Pin // the tier is found by the lock's h1:, whose entry records the pin
	}
	e, err := c.publish(ctx, pkg, key, want, dir, "", f)
	if err != nil {
		source.EmitContext(ctx, c.opts.Events, source.Event{Kind: source.EventWarning, Package: pkg,
			Detail: fmt.Sprintf("the remote cache tier's copy of %s was refused (%v); fetching it from its origin", pkg.ForDisplay(), err)})
		return Entry{}, false
	}
	source.EmitContext(ctx, c.opts.Events, source.Event{Kind: source.EventCacheHit, Package: pkg, Detail: "remote tier " + e.Location})
	return e, true
}

// remoteSubdirRefused says why the subdirectory a remote tier's entry
// records for pkg may not be used, or "": it must be a clean relative path
// inside the package, and the one the lock binds, if it binds one.
func remoteSubdirRefused(pkg source.Package, subdir string) string {
	if subdir != "" {
		if err := address.CheckPackageSubdir(subdir); err != nil {
			return err.Error()
		}
	}
	if bound, ok := boundSubdir(pkg); ok && subdir != bound {
		return fmt.Sprintf("it records the subdirectory %q, and the lock file %q", subdir, bound)
	}
	return ""
}

// writeThrough stores what a fill (or [Cache.Hash]) fetched from an
// origin, verified, in the remote tier: a provider's zip as the origin delivered it (the zip whose
// zh: lock files record; a provider delivered unpacked is not written), a
// module as a deterministic zip of its entry. A failure is a warning.
func (c *Cache) writeThrough(ctx context.Context, pkg source.Package, e Entry, f *source.Fetched, work string) {
	if c.opts.Remote == nil {
		return
	}
	a := RemoteArchive{Hashes: e.Hashes, Subdir: e.Subdir}
	path := f.Archive
	if f.ArchiveData != nil && !isModule(pkg) {
		// An archive handed over in memory: written for the tier beside
		// the fill's work (Cache.Hash makes no work directory: the file
		// is the work path itself), removed with it.
		path = work
		if info, err := os.Stat(work); err == nil && info.IsDir() {
			path = filepath.Join(work, "remote-put.zip")
		}
		if err := os.WriteFile(path, f.ArchiveData, 0o600); err != nil {
			c.remoteFailed(ctx, "writing", err)
			return
		}
	}
	if isModule(pkg) {
		if e.Dir == "" {
			return // hashed only ([Cache.Hash]): no tree to zip
		}
		path = filepath.Join(work, "remote-put.zip")
		if err := writeZipFile(ctx, e.Dir, path); err != nil {
			if !errors.Is(err, archive.ErrNotArchivable) {
				c.remoteFailed(ctx, "writing", err)
			}
			return
		}
		a.Hashes = []hash.Hash{e.H1}
	}
	if path == "" {
		return
	}
	if err := c.opts.Remote.Put(ctx, pkg, a, path); err != nil {
		c.remoteFailed(ctx, "writing", err)
	}
}

func writeZipFile(ctx context.Context, dir, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := archive.WriteZip(ctx, dir, f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// remoteFailed warns, once per cache, that the remote tier failed: the
// run goes on from the origins.
func (c *Cache) remoteFailed(ctx context.Context, doing string, err error) {
	if !c.remoteWarned.CompareAndSwap(false, true) {
		return
	}
	source.EmitContext(ctx, c.opts.Events, source.Event{Kind: source.EventWarning,
		Detail: fmt.Sprintf("remote cache tier: %s failed (%v); going on with the origins", doing, err)})
}
