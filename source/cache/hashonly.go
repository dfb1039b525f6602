package cache

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/internal/display"
)

// Hash returns the hashes of pkg without storing its files: an entry's
// hashes when the cache has pkg, or the hashes an earlier Hash of this
// Cache computed for it (hit is then true), else the hashes of what fetch
// brings, checked as [Cache.Fill] checks them (against want, and against
// what the source states). An archive the source hands over
// (source.ArchiveFetcher) is hashed as it is read, without writing its
// files anywhere: this is how "providers lock" learns the h1: of the
// packages of platforms other than this machine's, which nothing here
// will install. Nothing is written to the cache's directory (no entry,
// no index record): the hashes are remembered in this process only, so
// that the next Hash of the package by this Cache downloads nothing; a
// [Cache.Fill] of it still fetches it, and so does a Hash in another
// process. (A record on disk would only confirm an h1: its reader already
// has, since the index is no authority — see [Cache.Lookup] — and on
// some file systems each new file costs as much as a small package's
// download.) The returned Entry has a Dir only when the cache holds the
// package's files.
//
// Unlike Fill, Hash serialises only the work of this process on pkg: it
// makes no lock file, and two processes may hash pkg at once, each on
// its own (see the package's Concurrency section).
func (c *Cache) Hash(ctx context.Context, pkg source.Package, want []hash.Hash, fetch FetchFunc) (e Entry, hit bool, err error) {
	// This process's lock only: no lock file is made (on some file
	// systems a new file costs as much as the download of a small
	// package). Two processes may then hash one package at once; the work
	// is idempotent: each downloads and checks the package, and each may
	// write the same archive through to the remote tier, which stores it
	// by its content. What Hash leaves in tmp/ is named "hash-...": another
	// process's sweep removes it only once it has not changed for
	// hashTempGrace (there is no lock to tell a live Hash from a killed
	// one).
	e, hit, unlock, err := c.hitOrLock(ctx, pkg, want, c.hashesOf, true)
	if err != nil || hit {
		return e, hit, err
	}
	defer unlock()
	key := identity(pkg)
	// Not made: a source that hands its archive over keeps a small one
	// in memory, or downloads it as that very file (fsutil.ArchiveFile),
	// with no directory made and removed around it; one that extracts
	// makes the directory. Under the package's lock, no other work of
	// this process takes the name; the random suffix keeps another
	// process's apart.
	work := filepath.Join(c.dir, "tmp", tempName("hash", keyName(key))+randomSuffix())
	defer os.RemoveAll(work)
	pkgDir := work // nothing else goes there
	f, err := fetch(source.WithArchiveInMemory(ctx), pkgDir)
	if err != nil {
		return Entry{}, false, err
	}
	if f == nil {
		f = &source.Fetched{}
	}
	defer release(f)
	var computed []hash.Hash
	if hasArchive(f) {
		o := archiveOptions(f, isModule(pkg))
		sum, err := readArchive(f, func(r io.ReaderAt, size int64) (hash.ZipSum, error) {
			return o.HashZipReader(ctx, r, size)
		})
		if err != nil {
			return Entry{}, false, &source.Error{Source: f.Location, Package: pkg, Err: err}
		}
		computed = []hash.Hash{sum.H1}
		if !isModule(pkg) {
			computed = append(computed, sum.ZH)
		}
	} else {
		// A fetch that brought no files may have made no directory
		// either: its package is then the empty tree, as before.
		if err := os.MkdirAll(pkgDir, 0o755); err != nil {
			return Entry{}, false, fmt.Errorf("cache: %w", err)
		}
		h1, err := h1Dir(pkgDir, isModule(pkg))
		if err != nil {
			return Entry{}, false, &source.Error{Source: "cache " + c.dir, Package: pkg, Err: err}
		}
		computed = []hash.Hash{h1}
	}
	hashes, err := checkFetched(pkg, f, computed, want)
	if err != nil {
		return Entry{}, false, err
	}
	e = Entry{H1: computed[0], Hashes: hashes, Pin: f.Pin, Location: display.StripCredentials(f.Location), Subdir: f.Subdir}.fetched(f)
	if indexed(pkg) {
		c.remember(pkg, key, e, false)
	}
	c.writeThrough(ctx, pkg, e, f, work)
	return e, false, nil
}

// hashesOf is lookup for Hash: an entry, or else the h1: the index
// records for pkg when want names it, with no Dir. A record is no
// authority (see lookup): it only confirms an h1: the caller has already,
// and otherwise the package is fetched and hashed.
func (c *Cache) hashesOf(ctx context.Context, pkg source.Package, want []hash.Hash) (Entry, bool) {
	if e, ok := c.lookup(ctx, pkg, want); ok {
		return e, true
	}
	if !indexed(pkg) {
		return Entry{}, false
	}
	if e, ok := c.recall(pkg); ok {
		if matches(e.Hashes, want) {
			return e.hit(), true
		}
	}
	rec, ok := c.readIndex(identity(pkg))
	if !ok || !slices.Contains(want, rec.H1) || !pinAgrees(pkg, rec.Pin) {
		return Entry{}, false
	}
	return Entry{H1: rec.H1, Hashes: []hash.Hash{rec.H1}, Pin: rec.Pin, Location: rec.Location, Subdir: rec.Subdir}.vouched(rec.origin(), rec.Hashes), true
}

// checkFetched checks what a fetch brought, whose own hashes are computed
// (its h1: first, then the zh: of its archive if any): a provider must not
// be empty, what the source stated must agree, and the result must match
// want. It returns every hash of the package, sorted.
func checkFetched(pkg source.Package, f *source.Fetched, computed, want []hash.Hash) ([]hash.Hash, error) {
	h1 := computed[0]
	if h1 == emptyH1 && !isModule(pkg) {
		// A provider package always holds its executable: an empty one
		// (a link that was not followed, a half-made mirror) is never
		// stored, installed or locked.
		return nil, &source.Error{Source: f.Location, Package: pkg, Err: ErrEmptyPackage}
	}
	hashes := slices.Clone(computed)
	for _, h := range f.Hashes {
		switch {
		case slices.Contains(computed, h):
		case h.Scheme() == hash.SchemeH1:
			return nil, &source.Error{Source: f.Location, Package: pkg, Err: fmt.Errorf("%w: the source reported %s but the fetched files hash to %s", source.ErrChecksumMismatch, h, h1)}
		case h.Scheme() == hash.SchemeZH && len(computed) > 1:
			return nil, &source.Error{Source: f.Location, Package: pkg, Err: fmt.Errorf("%w: the source reported %s but the archive hashes to %s", source.ErrChecksumMismatch, h, computed[1])}
		case h.Scheme() == hash.SchemeZH:
			hashes = append(hashes, h)
		}
	}
	slices.Sort(hashes)
	hashes = slices.Compact(hashes)
	if !matches(hashes, want) {
		return nil, &source.Error{Source: f.Location, Package: pkg, Err: &MismatchError{Got: hashes, Want: want}}
	}
	return hashes, nil
}
