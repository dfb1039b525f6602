package cache

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/internal/flock"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/address"
	"github.com/tflock/tflock/source/internal/display"
	"github.com/tflock/tflock/source/internal/fsutil"
)

// Options configure a [Cache]. The zero value is ready to use.
type Options struct {
	// Events receives cache hits (from [Cache.Fill]), lock waits and
	// damaged-entry warnings. Nil discards them.
	Events source.Events
	// TrustEntries skips every check of an entry when it is used. By
	// default (false) an entry is checked on use and a damaged one is
	// replaced: an entry whose files are, by their metadata (device,
	// inode, size, modification time, mode), the files verified when it
	// was stored is used without being read; any other is hashed again.
	// Providers installed by resolve/install share their files with the
	// cache entry (hard links where the file system allows): an installed
	// file edited in place edits the entry too, which the default check
	// catches and TrustEntries does not.
	TrustEntries bool
	// Reverify hashes every entry each time it is used, whatever its
	// metadata says: for a cache whose files may have been changed by
	// someone who also restored their modification times. See also
	// [Reverify] for one call. Ignored when TrustEntries is set.
	Reverify bool
	// Remote is a tier shared by many machines (an OCI registry: package
	// ocitier) consulted on a local miss before the origin, and written
	// through after an origin fetch is verified. What it returns is
	// verified like an origin download; it is asked only for packages
	// whose lock hashes can verify it. Its failures are warnings (the
	// first one is reported), never errors. Default nil: no remote tier.
	Remote Remote
	// PollInterval is how often a process waiting for another process's
	// lock on a package tries again. Zero or less means 20ms.
	PollInterval time.Duration
}

// Cache is an open cache directory. It is safe for concurrent use by many
// goroutines, and the directory is safe for concurrent use by many
// processes.
type Cache struct {
	dir   string
	opts  Options
	locks *flock.Locker

	remoteWarned atomic.Bool // a remote tier failure has been reported
	remoteMisses sync.Map    // identities the remote tier did not serve
	verified     *sync.Map   // identity → memo of what this Cache fetched and verified itself (shared by every ForSource view)
	scope        any         // the source a module memo must name to be served (ForSource)

	mkMu sync.Mutex
	made bool // the subdirectories exist
}

// memo is what the in-process memory holds of a package this Cache
// fetched and verified itself: the entry, and for a module the scope
// (the source) of the view that fetched it.
type memo struct {
	e     Entry
	scope any
}

// ForSource returns a view of the Cache for runs that fetch through src:
// the same directory, options, locks and in-process memory, except that
// a module this process fetched and verified itself, which the memory
// serves without the caller's hashes (a new selection before it is
// locked, fetched once for concurrent runs), is served only to views of
// the same src. A program that runs several units with one Cache (a
// wrapper, a bot) whose sources may answer one module address from two
// origins (another CLI configuration, a host override) so never gets one
// unit's module from another's origin: modules have no origin checksums
// that would catch it. Across sources, as across processes, only an h1:
// the caller names finds a module. A src that is not a pointer shares
// with no other view. Providers are shared by every view: a new provider
// selection the cache serves is checked against its origin's checksums by
// the installer. The view's list of packages its remote tier did not
// serve is its own. resolve/install takes a view for each Init,
// LockProvider and LockModule, of the run's Options.Source.
func (c *Cache) ForSource(src source.Source) *Cache {
	if c == nil {
		return nil
	}
	var scope any = new(byte) // shares with no other view
	if src != nil && reflect.TypeOf(src).Kind() == reflect.Pointer {
		scope = src
	}
	return &Cache{dir: c.dir, opts: c.opts, locks: c.locks, verified: c.verified, scope: scope}
}

// remember keeps e, which this Cache fetched and verified itself, for pkg
// under key in the in-process memory.
func (c *Cache) remember(pkg source.Package, key string, e Entry, replace bool) {
	m := memo{e: e}
	if isModule(pkg) {
		m.scope = c.scope
	}
	if replace {
		c.verified.Store(key, m)
		return
	}
	c.verified.LoadOrStore(key, m)
}

// recall returns what the in-process memory holds for pkg, if this view
// may be served it: a module only if the view that fetched it had this
// view's scope (ForSource).
func (c *Cache) recall(pkg source.Package) (Entry, bool) {
	v, ok := c.verified.Load(identity(pkg))
	if !ok {
		return Entry{}, false
	}
	m := v.(memo)
	if isModule(pkg) && m.scope != c.scope {
		return Entry{}, false
	}
	return m.e, true
}

// MismatchError is the cause [Cache.Fill] reports when what was fetched
// matches none of the hashes it was asked to match. It wraps
// [source.ErrChecksumMismatch] and a [*hash.MismatchError] with the same
// hashes.
type MismatchError struct {
	// Got are the hashes of what was fetched.
	Got []hash.Hash
	// Want are the hashes it had to match one of.
	Want []hash.Hash
}

// Error lists the hashes of what was fetched and the checksums it had to match.
func (e *MismatchError) Error() string {
	return fmt.Sprintf("checksum mismatch: the fetched package hashes to %s, which matches none of the expected checksums %s", joinHashes(e.Got), joinHashes(e.Want))
}

// Unwrap returns [source.ErrChecksumMismatch] and a [*hash.MismatchError].
func (e *MismatchError) Unwrap() []error {
	return []error{source.ErrChecksumMismatch, &hash.MismatchError{Got: e.Got, Want: e.Want}}
}

// ErrEmptyPackage is wrapped by the error [Cache.Fill] returns when a
// provider package holds no files.
var ErrEmptyPackage = errors.New("the package holds no files")

// emptyH1 is the h1: of a directory with no files.
const emptyH1 = hash.Hash("h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=")

// Entry is a package in the cache.
type Entry struct {
	// Dir is the entry's directory. Treat it as read-only: it is shared.
	Dir string
	// H1 is the entry's h1: hash, which is also its name.
	H1 hash.Hash
	// Hashes are all the hashes recorded for the package when it was
	// fetched: its h1: and, for a provider zip, its zh:.
	Hashes []hash.Hash
	// Pin is the commit or digest the package was fetched at, if any.
	Pin string
	// Location is where the package was fetched from (no credentials).
	Location string
	// Subdir is the subdirectory of the package that the origin pointed
	// at (a module registry's download location ending in //SUBDIR), as the
	// fetcher reported it in [source.Fetched.Subdir].
	Subdir string
	// Origin are the hashes the package's origin vouched for when it was
	// fetched ([source.Fetched.Origin]: a registry's signed zh: of every
	// platform, a trusted mirror's hashes), as the index recorded them:
	// also on a hit, so that a host can show and record them without
	// asking the origin again. They are information, not authority: the
	// index is a file anyone who can write to the cache can change, so
	// nothing here trusts a package more for them (resolve/install asks
	// the origin for a new selection found in the cache); the lock file
	// stays the authority. Nil when the source vouched for nothing, or the
	// index was written by a version that did not record them.
	Origin []hash.Record
	// Provenance says what vouched for this package: the provenance of
	// those of Origin that are the package's own hashes (signed by which
	// keys, reported by which registries or mirrors, trusted mirrors
	// among them, for which platforms), and VerifiedLocally, which the
	// cache always did (alone when Origin is nil). Information, as Origin.
	Provenance hash.Provenance
	// Warnings are the warnings of the fetch that filled the entry
	// ([source.Fetched.Warnings]); nil on a hit.
	Warnings []string
}

// FetchFunc brings a package into dir, or hands over its archive
// ([source.Fetched.Archive], which the cache extracts and hashes in one
// read; or, as the context it is given allows
// ([source.WithArchiveInMemory]), a small archive in memory,
// [source.Fetched.ArchiveData], which the cache releases once read). It
// is what [Cache.Fill] and [Cache.Hash] call on a miss, usually
// [source.FetchArchive] of a source. As a [source.Fetcher]'s, dir may not
// exist yet: [Cache.Fill] makes it, empty; [Cache.Hash] does not, so
// that an archive handed over there needs no directory made and removed
// around it (a source then downloads it as the file dir itself). A
// FetchFunc that writes into dir makes it first.
type FetchFunc func(ctx context.Context, dir string) (*source.Fetched, error)

// Open opens (creating if needed) the cache in dir. It returns an
// *[UnsafePathError] when one of the cache's own subdirectories is a
// symbolic link or not a directory: the cache never follows one out of
// dir (dir itself may be a link).
func Open(dir string, opts Options) (*Cache, error) {
	if dir == "" {
		return nil, errors.New("cache: no directory given")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 20 * time.Millisecond
	}
	c := &Cache{dir: abs, opts: opts, locks: &flock.Locker{MinPoll: opts.PollInterval, MaxPoll: opts.PollInterval}, verified: new(sync.Map)}
	if err := c.checkDirs(); err != nil {
		return nil, err
	}
	c.sweep()
	return c, nil
}

// sweep removes what killed processes left in tmp/ (a real directory:
// Open checked it): a fill or index file whose package lock nobody holds
// (the system released a killed holder's lock, so no one is writing it),
// damaged entries being thrown away, and stat records being written that
// no live process holds (flock.SweepTemps). It removes only names the
// cache makes, and follows no link: a link in tmp/ is removed, not what
// it points to, and no mode outside tmp/ is changed.
func (c *Cache) sweep() {
	tmp := filepath.Join(c.dir, "tmp")
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	for _, e := range entries {
		p := filepath.Join(tmp, e.Name())
		switch kind, key, ok := parseTempName(e.Name()); {
		case ok && kind == "damaged":
			removeTree(p)
		case ok && kind == "hash":
			// Cache.Hash holds no lock file: what it leaves is
			// debris once no write has touched it for a while.
			if info, err := os.Lstat(p); err == nil && time.Since(info.ModTime()) > hashTempGrace {
				removeTree(p)
			}
		case ok:
			lockPath := c.lockPath(key)
			if checkOwn(lockPath, false) != nil {
				continue
			}
			unlock, free, err := c.locks.TryLock(lockPath)
			if err != nil || !free {
				continue
			}
			removeTree(p)
			unlock()
		}
	}
	flock.SweepTemps(tmp, statTempPrefix+"*", statTempGrace)
}

// tempName is the prefix of a temporary file or directory in tmp/ made
// while holding the lock of the package whose key name is keyName:
// "fill-KEYNAME-" or "index-KEYNAME-"; or by [Cache.Hash], which holds
// this process's lock only: "hash-KEYNAME-" (swept once older than
// hashTempGrace).
func tempName(kind, keyName string) string { return kind + "-" + keyName + "-" }

// hashTempGrace is how long a sweep leaves a temporary file or directory
// of [Cache.Hash] ("hash-...") after its last change: Hash holds no lock
// file that tells a live one from a killed one's, and a live one writes
// its archive (mtime renewed with each write) and then reads it at once.
const hashTempGrace = time.Hour

// parseTempName reads a name made from tempName (kind "fill", "index" or "hash",
// with the key name), or "damaged-..." (kind "damaged", no key).
func parseTempName(name string) (kind, keyName string, ok bool) {
	if strings.HasPrefix(name, "damaged-") {
		return "damaged", "", true
	}
	kind, rest, found := strings.Cut(name, "-")
	if !found || (kind != "fill" && kind != "index" && kind != "hash") {
		return "", "", false
	}
	keyName, _, found = strings.Cut(rest, "-")
	if !found || len(keyName) != sha256.Size*2 {
		return "", "", false
	}
	if _, err := hex.DecodeString(keyName); err != nil {
		return "", "", false
	}
	return kind, keyName, true
}

func removeTree(p string) {
	_ = makeWritable(p)
	_ = os.RemoveAll(p)
}

// Dir returns the cache's directory.
func (c *Cache) Dir() string { return c.dir }

// Lookup finds pkg in the cache without fetching anything. want are the
// hashes recorded for pkg (for example in a lock file); an entry is returned
// only if its h1: is one of them: what the cache's index says of a package
// is no authority (see the package documentation's threat model). Only
// what this Cache fetched and verified itself, in this process, is found
// by a zh: or without any hash. It returns ok == false on a miss.
//
// A module package is found by an h1: in want alone, whatever identity
// stored it (the contents are the same). A provider package is found only
// under its own identity (address, version and platform): a lock file's
// hashes cover every platform, so an h1: in want does not tell which
// platform's package an entry holds.
//
// Lookup is a query and reports no [source.EventCacheHit]; [Cache.Fill]
// reports one each time it serves a package from the cache. With a
// [Options.Remote] tier, a local miss that the tier can serve (verified as
// [Cache.Fill] verifies it) fills the local cache and is found.
func (c *Cache) Lookup(ctx context.Context, pkg source.Package, want []hash.Hash) (Entry, bool, error) {
	if err := ctx.Err(); err != nil {
		return Entry{}, false, err
	}
	e, ok := c.lookup(ctx, pkg, want)
	if !ok {
		e, ok = c.lookupRemote(ctx, pkg, want)
	}
	return e, ok, nil
}

// Fill returns the cache entry for pkg, calling fetch to bring it in on a
// miss. want are the hashes recorded for pkg: what fetch brings must match
// one of them (when want holds any h1: or zh:), else nothing is stored and
// the error wraps [source.ErrChecksumMismatch]. hit reports whether the
// entry was already there; an entry is served as [Cache.Lookup] finds it.
//
// Only one caller fetches a given package at a time, across goroutines and
// processes; the others wait and then find the entry.
func (c *Cache) Fill(ctx context.Context, pkg source.Package, want []hash.Hash, fetch FetchFunc) (e Entry, hit bool, err error) {
	e, hit, unlock, err := c.hitOrLock(ctx, pkg, want, c.lookup, false)
	if err != nil || hit {
		return e, hit, err
	}
	defer unlock()
	e, err = c.fill(ctx, pkg, identity(pkg), want, fetch)
	return e, false, err
}

// hitOrLock returns pkg's entry when the cache has one that matches want
// (reporting the hit), else takes the package's lock (across goroutines
// and processes) and returns its unlock function: the caller then brings
// the package in. Another holder may have filled it while we waited for
// the lock, so the cache is looked at again once it is held. With local
// set, the lock is this process's only (see [Cache.lock]).
func (c *Cache) hitOrLock(ctx context.Context, pkg source.Package, want []hash.Hash, lookup func(context.Context, source.Package, []hash.Hash) (Entry, bool), local bool) (Entry, bool, func(), error) {
	hit := func(e Entry) (Entry, bool, func(), error) {
		source.EmitContext(ctx, c.opts.Events, source.Event{Kind: source.EventCacheHit, Package: pkg, Detail: e.H1.String()})
		return e, true, nil, nil
	}
	if e, ok := lookup(ctx, pkg, want); ok {
		return hit(e)
	}
	if err := c.makeDirs(); err != nil {
		return Entry{}, false, nil, err
	}
	unlock, err := c.lock(ctx, pkg, identity(pkg), local)
	if err != nil {
		return Entry{}, false, nil, err
	}
	if e, ok := lookup(ctx, pkg, want); ok {
		unlock()
		return hit(e)
	}
	return Entry{}, false, unlock, nil
}

func (c *Cache) fill(ctx context.Context, pkg source.Package, key string, want []hash.Hash, fetch FetchFunc) (Entry, error) {
	work, err := os.MkdirTemp(filepath.Join(c.dir, "tmp"), tempName("fill", keyName(key)))
	if err != nil {
		return Entry{}, fmt.Errorf("cache: %w", err)
	}
	defer os.RemoveAll(work)
	if e, ok := c.fillRemote(ctx, pkg, key, want, work); ok {
		return e, nil
	}
	pkgDir := filepath.Join(work, "pkg")
	if err := os.Mkdir(pkgDir, 0o755); err != nil {
		return Entry{}, fmt.Errorf("cache: %w", err)
	}
	// The source may hand over the package's archive instead of its files
	// (source.ArchiveFetcher): then the archive is read once, here, and
	// the files stored are the files hashed.
	f, err := fetch(source.WithArchiveInMemory(ctx), pkgDir)
	if err != nil {
		return Entry{}, err
	}
	if f == nil {
		f = &source.Fetched{}
	}
	defer release(f)
	e, err := c.publish(ctx, pkg, key, want, work, pkgDir, f)
	if err != nil {
		return Entry{}, err
	}
	c.writeThrough(ctx, pkg, e, f, work)
	return e, nil
}

// publish verifies what a fill brought (f: files in pkgDir, or an archive
// to extract under work) against want and publishes it as an entry.
//
// An archive still arriving (f.Pending) is read as it comes, and its
// download has ended before anything is published.
func (c *Cache) publish(ctx context.Context, pkg source.Package, key string, want []hash.Hash, work, pkgDir string, f *source.Fetched) (Entry, error) {
	var err error
	var h1 hash.Hash
	var computed []hash.Hash // what this fill computed: h1, and zh of an archive
	if hasArchive(f) {
		content := filepath.Join(work, "content")
		sum, err := unpack(ctx, f, content, isModule(pkg))
		if err != nil {
			return Entry{}, &source.Error{Source: f.Location, Package: pkg, Err: err}
		}
		pkgDir, h1 = content, sum.H1
		computed = []hash.Hash{sum.H1}
		if !isModule(pkg) {
			computed = append(computed, sum.ZH)
		}
	} else {
		if isModule(pkg) {
			// Whatever the source, a module package is stored (and so
			// installed) without the version-control metadata its h1:
			// leaves out: the tree installed is the tree hashed.
			if err := fsutil.RemoveVCSMetadata(pkgDir); err != nil {
				return Entry{}, fmt.Errorf("cache: %w", err)
			}
		}
		if h1, err = h1Dir(pkgDir, isModule(pkg)); err != nil {
			return Entry{}, &source.Error{Source: "cache " + c.dir, Package: pkg, Err: err}
		}
		computed = []hash.Hash{h1}
	}
	hashes, err := checkFetched(pkg, f, computed, want)
	if err != nil {
		return Entry{}, err
	}
	sub, err := address.PackageSubdir(f.Subdir)
	if err != nil {
		return Entry{}, &source.Error{Source: f.Location, Package: pkg, Err: err}
	}
	obj := c.objectDir(h1)
	if err := os.Rename(pkgDir, obj); err != nil {
		// Content-addressed: an existing entry of that name has the same
		// contents, unless damaged, in which case it is replaced.
		if _, statErr := os.Stat(obj); statErr != nil {
			return Entry{}, fmt.Errorf("cache: publishing %s: %w", pkg.ForDisplay(), err)
		}
		if !c.opts.TrustEntries && !c.usable(ctx, obj, h1, isModule(pkg)) {
			if err := os.Rename(pkgDir, obj); err != nil {
				return Entry{}, fmt.Errorf("cache: publishing %s: %w", pkg.ForDisplay(), err)
			}
			c.recordStat(obj, h1)
		}
	} else {
		// The files were hashed as they were written, in a directory
		// of this fill's own: what they are now is what was verified.
		c.recordStat(obj, h1)
	}
	e := Entry{Dir: obj, H1: h1, Hashes: hashes, Pin: f.Pin, Location: display.StripCredentials(f.Location), Subdir: sub}.fetched(f)
	if !indexed(pkg) {
		return e, nil
	}
	c.remember(pkg, key, e, true)
	if err := c.writeIndex(key, e); err != nil {
		return Entry{}, err
	}
	return e, nil
}

// lookup finds a usable entry: one named by an h1: in want, which the
// entry is checked to hash to (see usable). The index is no authority: it
// says which entry a package identity was filled with, which nothing in
// the cache can prove, so it never makes an entry be served under an
// identity the hashes wanted do not name, and the hashes an entry is
// served with are its h1: alone, never the hashes a record lists.
//
// A module's recorded hashes all describe that one package, so any entry
// named by one of them has the right contents, whatever identity filled
// it. A provider's recorded hashes cover every platform of its version
// (a lock file lists them together), so an entry named by one of them may
// be another platform's package: a provider entry is served only when its
// identity's index record (address, version, platform) names the same h1:.
// A want with no h1: (a lock entry of zh: hashes only, or none: a new
// selection) therefore finds nothing, and the package is fetched and
// verified, as OpenTofu does not take an unpacked cached package that its
// lock file's hashes cannot verify.
func (c *Cache) lookup(ctx context.Context, pkg source.Package, want []hash.Hash) (Entry, bool) {
	module := isModule(pkg)
	var rec indexRecord
	haveRec := false
	if indexed(pkg) {
		rec, haveRec = c.readIndex(identity(pkg))
	}
	bound, isBound := boundSubdir(pkg)
	for _, h := range want {
		if h.Scheme() != hash.SchemeH1 || (!module && (!haveRec || rec.H1 != h)) {
			continue
		}
		if haveRec && rec.H1 == h && isBound && rec.Subdir != bound {
			// This package's own record says its location named
			// another subdirectory than the lock binds: a miss, so that
			// the location is asked again.
			return Entry{}, false
		}
		if isBound && bound == "" && located(pkg) && !(haveRec && rec.H1 == h) {
			// The package root, which is also what a lock written before
			// subdirectories were recorded says: only this package's own
			// record (or its origin) can confirm that its registry's
			// location names no subdirectory; an entry filled under
			// another identity cannot.
			continue
		}
		if c.usable(ctx, c.objectDir(h), h, module) {
			e := Entry{Dir: c.objectDir(h), H1: h, Hashes: []hash.Hash{h}, Subdir: bound}
			if haveRec && rec.H1 == h && pinAgrees(pkg, rec.Pin) {
				e.Pin, e.Location, e.Subdir = rec.Pin, rec.Location, rec.Subdir
				return e.vouched(rec.origin(), rec.Hashes), true
			}
			return e.vouched(nil, nil), true
		}
	}
	// What this Cache fetched and verified itself, in this process, is
	// known without the index: concurrent fills of one package (without a
	// lock file's h1:) fetch it once.
	if e, ok := c.recall(pkg); ok {
		if e.Dir != "" && matches(e.Hashes, want) && c.usable(ctx, e.Dir, e.H1, module) {
			return e.hit(), true
		}
	}
	return Entry{}, false
}

// pinAgrees reports whether a pin an index record states may describe pkg:
// a package that names its commit or digest (a locked module) takes no
// other from the cache.
func pinAgrees(pkg source.Package, pin string) bool {
	m, ok := pkg.(source.ModulePackage)
	return !ok || m.Pin == "" || m.Pin == pin
}

// located reports whether a module package's location is named by its
// source ([source.ModulePackage.Located]).
func located(pkg source.Package) bool {
	m, ok := pkg.(source.ModulePackage)
	return ok && m.Located
}

// boundSubdir returns the subdirectory a module package's lock binds
// ([source.ModulePackage.BoundSubdir]), and whether one is bound.
func boundSubdir(pkg source.Package) (string, bool) {
	if m, ok := pkg.(source.ModulePackage); ok {
		return m.BoundSubdir()
	}
	return "", false
}

// usable reports whether the entry dir exists and (unless trusted) still
// hashes to its name; a damaged entry is moved away.
func (c *Cache) usable(ctx context.Context, dir string, h1 hash.Hash, module bool) bool {
	fi, err := os.Lstat(dir)
	if err != nil {
		return false
	}
	if !fi.IsDir() {
		// Not an entry the cache published (a link planted in objects/
		// would have the entry read from outside the cache).
		c.discard(dir)
		return false
	}
	if module && fsutil.HasVCSMetadata(dir) {
		// Stored by an older version, before module entries were kept
		// free of what their h1: leaves out: installing it would install
		// version-control metadata.
		c.discard(dir)
		source.Emit(c.opts.Events, source.Event{Kind: source.EventWarning, Detail: fmt.Sprintf("cache entry %s held version-control metadata and has been discarded", h1)})
		return false
	}
	if c.opts.TrustEntries {
		return true
	}
	if !c.reverify(ctx) && c.unchanged(dir, h1) {
		return true
	}
	got, err := h1Dir(dir, module)
	if err == nil && got == h1 {
		c.recordStat(dir, h1)
		return true
	}
	c.discard(dir)
	source.EmitContext(ctx, c.opts.Events, source.Event{Kind: source.EventWarning, Detail: fmt.Sprintf("cache entry %s was damaged and has been discarded", h1)})
	return false
}

// makeDirs creates the cache's subdirectories the first time something is
// written: Open creates only the cache's own directory, so that a run that
// stores nothing (a providers lock answered from a registry's checksums)
// makes no other change on disk.
func (c *Cache) makeDirs() error {
	c.mkMu.Lock()
	defer c.mkMu.Unlock()
	if c.made {
		return nil
	}
	for _, sub := range ownDirs {
		if err := os.Mkdir(filepath.Join(c.dir, sub), 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("cache: %w", err)
		}
	}
	// Made now or found: each must be a directory of the cache's own, not
	// a link that would make every fill and record land elsewhere.
	if err := c.checkDirs(); err != nil {
		return err
	}
	c.made = true
	return nil
}

// discard moves a damaged entry out of the objects directory (one rename,
// so no reader sees it half removed) and removes it.
func (c *Cache) discard(dir string) {
	if c.makeDirs() != nil {
		return
	}
	_ = os.Remove(filepath.Join(c.dir, "stat", filepath.Base(dir)+".json"))
	dst := filepath.Join(c.dir, "tmp", "damaged-"+randomSuffix())
	if err := os.Rename(dir, dst); err == nil {
		removeTree(dst)
	}
}

func (c *Cache) objectDir(h1 hash.Hash) string {
	b, err := base64.StdEncoding.DecodeString(h1.Value())
	if err != nil {
		// Not a valid h1: still gives a stable name that cannot escape
		// objects/ and will never exist.
		sum := sha256.Sum256([]byte(h1))
		return filepath.Join(c.dir, "objects", "invalid-"+hex.EncodeToString(sum[:]))
	}
	return filepath.Join(c.dir, "objects", "h1-"+base64.RawURLEncoding.EncodeToString(b))
}

// indexRecord is the JSON stored in index/.
type indexRecord struct {
	Package  string      `json:"package"`
	H1       hash.Hash   `json:"h1"`
	Hashes   []hash.Hash `json:"hashes"`
	Pin      string      `json:"pin,omitempty"`
	Location string      `json:"location,omitempty"`
	Subdir   string      `json:"subdir,omitempty"`
	// Origin is Entry.Origin (provenance.go).
	Origin []originRecord `json:"origin,omitempty"`
}

func (c *Cache) indexPath(key string) string {
	return filepath.Join(c.dir, "index", keyName(key)+".json")
}

func (c *Cache) readIndex(key string) (indexRecord, bool) {
	b, err := readRecord(c.indexPath(key))
	if err != nil {
		return indexRecord{}, false
	}
	var r indexRecord
	if err := json.Unmarshal(b, &r); err != nil || r.Package != key || r.H1.Scheme() != hash.SchemeH1 {
		return indexRecord{}, false
	}
	if r.Subdir != "" && address.CheckPackageSubdir(r.Subdir) != nil {
		// A subdirectory that is not a clean relative path inside the
		// package is never used: the record is not.
		return indexRecord{}, false
	}
	return r, true
}

// writeIndex writes the index record of key for e, atomically (a
// temporary file in tmp/, renamed).
func (c *Cache) writeIndex(key string, e Entry) error {
	b, err := json.MarshalIndent(indexRecord{Package: key, H1: e.H1, Hashes: e.Hashes, Pin: e.Pin, Location: e.Location, Subdir: e.Subdir, Origin: indexOrigin(e.Origin)}, "", "  ")
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Join(c.dir, "tmp"), tempName("index", keyName(key)))
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("cache: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	if err := os.Rename(tmp.Name(), c.indexPath(key)); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	return nil
}

// identity is the cache key of a package: its canonical string plus, for a
// module, the ref its source names (kept even beside a version) and the
// pin (a ref can move, a pin cannot), without the credentials a module
// address may carry, so that the key and the index record hold none and
// two addresses that differ only by credentials are one package.
func identity(pkg source.Package) string {
	s := pkg.String()
	if m, ok := pkg.(source.ModulePackage); ok {
		if m.Ref != "" && !m.Version.IsZero() {
			s += "?ref=" + m.Ref
		}
		if m.Pin != "" {
			s += " @" + m.Pin
		}
	}
	return display.StripCredentials(s)
}

// indexed reports whether the index may answer for pkg: not for a module
// named only by a ref or by nothing (a branch, a default branch, an OCI
// tag), whose content changes when the name moves on. Such a module is
// found by the hashes the caller wants, or fetched; but a
// [source.ModulePackage.Located] one (an HTTP address answered by
// X-Terraform-Get) has a record, so that its own record (naming the h1:
// wanted) can confirm that its location named the root.
func indexed(pkg source.Package) bool {
	m, ok := pkg.(source.ModulePackage)
	return !ok || !m.Version.IsZero() || m.Pin != "" || m.Located
}

func keyName(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

func isModule(pkg source.Package) bool {
	_, ok := pkg.(source.ModulePackage)
	return ok
}

// matches reports whether have satisfies want: true when want holds no hash
// of a computable scheme (trust on first use), else when one is in have.
func matches(have, want []hash.Hash) bool {
	checkable := false
	for _, w := range want {
		if w.Scheme() != hash.SchemeH1 && w.Scheme() != hash.SchemeZH {
			continue
		}
		checkable = true
		if slices.Contains(have, w) {
			return true
		}
	}
	return !checkable
}

func joinHashes(hs []hash.Hash) string {
	s := ""
	for i, h := range hs {
		if i > 0 {
			s += ", "
		}
		s += h.String()
	}
	return s
}

func randomSuffix() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func makeWritable(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
}
