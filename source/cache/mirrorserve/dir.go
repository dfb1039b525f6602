package mirrorserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/internal/provaddr"
	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/internal/mirrorjson"
)

// DirOptions configure [WriteDir].
type DirOptions struct {
	// Source fetches the packages the directory does not hold yet.
	// Required.
	Source source.Fetcher
	// Cache is the package cache every archive is put through. Required.
	Cache *cache.Cache
	// Remote is the cache's remote tier, asked for an archive before the
	// origin (see [Options.Remote]); may be nil.
	Remote cache.Remote
	// Platforms are the platforms to write. Required (tofu's default is
	// the current platform: pass source.CurrentPlatform).
	Platforms []source.Platform
}

// DirResult is what [WriteDir] did.
type DirResult struct {
	// Written are the archives written now, Kept those the directory held
	// already and that still match the lock file.
	Written, Kept []source.ProviderPackage
	// Fetched is the number of archives brought from the origin or the
	// remote tier.
	Fetched int
}

// WriteDir writes into dir the mirror of the providers lock selects, for
// the platforms asked for, as "tofu providers mirror" does (the packed
// layout HOST/NAMESPACE/TYPE/terraform-provider-TYPE_VERSION_OS_ARCH.zip),
// plus index.json and VERSION.json beside each provider's archives, so that
// dir is both a filesystem mirror and, served as static files, a network
// mirror. Every archive is checked against the hashes lock records before
// it is written (a provider without hashes is an error), against those
// of its own platform where the origin says which they are (a source that
// is a source.ChecksumReporter): an archive
// already in dir is kept when it matches, replaced otherwise. The JSON
// files keep the versions and platforms dir held before; each archive is
// listed with its zh: and h1:.
func WriteDir(ctx context.Context, dir string, lock *lockfile.File, opts DirOptions) (*DirResult, error) {
	switch {
	case opts.Source == nil:
		return nil, errors.New("mirrorserve: DirOptions.Source is required")
	case opts.Cache == nil:
		return nil, errors.New("mirrorserve: DirOptions.Cache is required")
	case len(opts.Platforms) == 0:
		return nil, errors.New("mirrorserve: DirOptions.Platforms is required")
	case lock == nil:
		return nil, errors.New("mirrorserve: no lock file")
	}
	sweep(dir)
	res := &DirResult{}
	for pl := range lock.Providers() {
		if len(pl.Hashes) == 0 {
			return res, fmt.Errorf("provider %s: the lock file records no hashes, so nothing can be verified", provaddr.String(pl.Addr))
		}
		var recs []hash.Record
		if cr, ok := opts.Source.(source.ChecksumReporter); ok {
			// Which of the lock's hashes are this platform's: a lock
			// file's hashes cover every platform.
			r, err := cr.Checksums(ctx, source.ProviderPackage{Addr: pl.Addr, Version: pl.Version})
			if err != nil {
				return res, err
			}
			recs = r
		}
		sums := map[string][]hash.Hash{}
		for _, plat := range opts.Platforms {
			pkg := source.ProviderPackage{Addr: pl.Addr, Version: pl.Version, Platform: plat}
			want := platformLockHashes(pl.Hashes, recs, plat.String())
			dst := archivePath(dir, pkg)
			if _, err := os.Stat(dst); err == nil {
				if sum, err := checkArchive(ctx, opts.Cache, pkg, dst, want, nil); err == nil {
					res.Kept = append(res.Kept, pkg)
					sums[plat.String()] = sum.Hashes()
					continue
				}
				if err := os.Remove(dst); err != nil {
					return res, err
				}
			}
			sum, err := bringArchive(ctx, bringOptions{Source: opts.Source, Cache: opts.Cache, Remote: opts.Remote}, pkg, want, dst, func() { res.Fetched++ })
			if err != nil {
				return res, err
			}
			res.Written = append(res.Written, pkg)
			sums[plat.String()] = sum.Hashes()
		}
		pdir := filepath.Dir(archivePath(dir, source.ProviderPackage{Addr: pl.Addr}))
		if err := mergeJSON(pdir, pl.Version.String(), func(doc *mirrorjson.Version) {
			for plat, hs := range sums {
				p, _ := source.ParsePlatform(plat)
				doc.Archives[plat] = mirrorjson.Archive{URL: ArchiveName(source.ProviderPackage{Addr: pl.Addr, Version: pl.Version, Platform: p}), Hashes: hashStrings(hs)}
			}
		}); err != nil {
			return res, err
		}
	}
	return res, nil
}

// platformLockHashes are the hashes of lock that the origin's records
// attribute to plat, so that another platform's archive, whose hash the
// lock file also records, is not taken for this one's; all of lock when
// the origin says nothing of them (no records, or none the lock has).
func platformLockHashes(lock []hash.Hash, recs []hash.Record, plat string) []hash.Hash {
	var out []hash.Hash
	for _, h := range platformHashes(recs, plat) {
		if slices.Contains(lock, h) {
			out = append(out, h)
		}
	}
	if len(out) == 0 {
		return lock
	}
	return out
}

// mergeJSON updates VERSION.json and index.json in the directory of one
// provider: edit changes the version's document, read from the file when
// there is one; index.json gains the version.
func mergeJSON(pdir, version string, edit func(*mirrorjson.Version)) error {
	doc := mirrorjson.Version{}
	vpath := filepath.Join(pdir, version+".json")
	if err := readJSON(vpath, &doc); err != nil {
		return err
	}
	if doc.Archives == nil {
		doc.Archives = map[string]mirrorjson.Archive{}
	}
	edit(&doc)
	if err := writeJSONFile(vpath, doc); err != nil {
		return err
	}
	idx := mirrorjson.Index{}
	ipath := filepath.Join(pdir, "index.json")
	if err := readJSON(ipath, &idx); err != nil {
		return err
	}
	if idx.Versions == nil {
		idx.Versions = map[string]json.RawMessage{}
	}
	idx.Versions[version] = mirrorjson.Empty
	return writeJSONFile(ipath, idx)
}

// readJSON reads a JSON file into v; a missing file leaves v as it is.
func readJSON(p string, v any) error {
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	return nil
}

func writeJSONFile(p string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(p, append(b, '\n'), 0o644)
}
