package install

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	tfaddr "github.com/hashicorp/terraform-registry-address"
	"golang.org/x/sync/errgroup"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/providercache"
)

func (r *run) upgradingProvider(addr tfaddr.Provider) bool {
	return r.s.Resolve.Upgrade || slices.Contains(r.s.Resolve.UpgradeProviders, addr)
}

// providerFetch is one provider package brought into the cache, or found
// installed already (reused).
type providerFetch struct {
	pkg    source.ProviderPackage
	entry  cache.Entry
	hit    bool
	reused bool
}

// installedDetail is the EventVerified detail of a package kept as it was
// installed.
const installedDetail = "installed already, matches the lock file"

// installedMatch reports whether pkg is installed already in the install
// directory (by an earlier run, or by tofu or terraform) with contents
// that match want, the lock file's hashes: such a package is kept as it
// is, as tofu keeps it, instead of being fetched and copied again. The
// answer is computed once per package and run: from the metadata of its
// files alone when they are the cache entry's own files, unchanged
// (cache.Cache.Installed), else by hashing them.
func (r *run) installedMatch(ctx context.Context, pkg source.ProviderPackage, want []hash.Hash) (string, hash.Hash, bool) {
	if len(want) == 0 || r.s.ProvidersLock || r.s.PluginCacheDir != "" {
		return "", "", false
	}
	dir := providercache.NewDir(filepath.Join(r.s.InstallDir, "providers")).PackageDir(pkg)
	key := pkg.String()
	r.mu.Lock()
	h1, done := r.installed[key]
	r.mu.Unlock()
	if !done {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			var linked bool
			if h1, linked = r.s.Cache.Installed(ctx, pkg, dir); !linked {
				h1, _ = hash.H1Dir(dir)
			}
		}
		r.mu.Lock()
		if r.installed == nil {
			r.installed = map[string]hash.Hash{}
		}
		r.installed[key] = h1
		r.mu.Unlock()
	}
	if h1 == "" || !slices.Contains(want, h1) {
		return "", "", false
	}
	return dir, h1, true
}

// fetchProviders fetches (or finds in the cache) every selected provider
// for the platforms concerned, verifies them against the lock and records
// their hashes in next.
func (r *run) fetchProviders(ctx context.Context, sel *resolve.Selection, next *lockfile.File) ([]ProviderResult, error) {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(r.s.Resolve.Concurrency)
	var mu sync.Mutex
	var fetched []providerFetch
	add := map[tfaddr.Provider][]hash.Hash{}
	record := func(addr tfaddr.Provider, hs ...hash.Hash) {
		mu.Lock()
		add[addr] = append(add[addr], hs...)
		mu.Unlock()
	}
	for _, p := range sel.Providers {
		if p.Version.IsZero() || p.Reason == resolve.Builtin || p.Reason == resolve.Unmanaged {
			continue
		}
		// A version's contents never change: even when upgrading, a
		// selection of the locked version must match the locked hashes
		// (a registry that republished it is a checksum error); only a
		// version that changed gets fresh hashes.
		var want []hash.Hash
		if old := r.prev.Provider(p.Addr); old != nil && old.Version == p.Version {
			want = old.Hashes
		}
		if r.s.ProvidersLock {
			g.Go(func() error {
				return r.legacyHint(p.Addr, r.lockProvider(gctx, p, record, &mu, &fetched))
			})
			continue
		}
		for _, plat := range r.s.platforms {
			pkg := source.ProviderPackage{Addr: p.Addr, Version: p.Version, Platform: plat}
			g.Go(func() error {
				var e cache.Entry
				var hit, reused bool
				var origin []hash.Record
				if dir, h1, ok := r.installedMatch(gctx, pkg, want); ok {
					e, hit, reused = cache.Entry{Dir: dir, H1: h1, Hashes: []hash.Hash{h1}}, true, true
					source.EmitContext(gctx, r.s.Events, source.Event{Kind: source.EventVerified, Package: pkg, Detail: installedDetail})
				} else {
					select {
					case r.downloadSlots <- struct{}{}:
					case <-gctx.Done():
						return gctx.Err()
					}
					var err error
					var signed []hash.Record
					if len(want) == 0 && r.s.Cache.Tiered() {
						// A first install with a remote tier behind the
						// cache: the tier's copy can be used only once it
						// can be checked, so the checksums the origin
						// signs are asked first (a registry asks the same
						// documents for its download, once).
						signed, err = r.checksums(gctx, pkg)
					}
					switch {
					case err != nil:
					case len(signed) > 0:
						e, hit, origin, err = r.fillSigned(gctx, pkg, signed)
					default:
						e, hit, _, origin, err = r.fillOrigin(gctx, pkg, "", want)
					}
					<-r.downloadSlots
					if err != nil {
						return r.legacyHint(p.Addr, err)
					}
				}
				record(p.Addr, e.Hashes...)
				if len(origin) == 0 && len(want) == 0 {
					// A new selection found in the cache: ask what the
					// origin vouches for, so that the lock file does not
					// depend on the cache being warm, and check the entry
					// against it before trusting it.
					var err error
					if origin, err = r.checksums(gctx, pkg); err != nil {
						return err
					}
					if err := vouched(pkg, e.Hashes, origin); err != nil {
						return err
					}
				}
				// Record what the origin vouches for, by the lock's rule
				// (recordsOrigin; checked against tofu 1.12.6 and
				// terraform by the interop suite).
				signed := false
				for _, rec := range origin {
					if !r.recordsOrigin(rec) {
						continue
					}
					record(p.Addr, rec.Hash)
					signed = signed || vouchedByOrigin(rec)
				}
				if !reused && (!hit || len(want) == 0) {
					r.noteLockUpdate(p.Addr, e.Hashes, want, signed)
				}
				mu.Lock()
				fetched = append(fetched, providerFetch{pkg: pkg, entry: e, hit: hit, reused: reused})
				mu.Unlock()
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for addr, hs := range add {
		if _, err := next.AddProviderHashes(addr, lockable(hs)...); err != nil {
			return nil, fmt.Errorf("provider %s: recording its hashes: %w", addr.ForDisplay(), err)
		}
	}
	slices.SortFunc(fetched, func(a, b providerFetch) int { return strings.Compare(a.pkg.String(), b.pkg.String()) })
	out := make([]ProviderResult, 0, len(fetched))
	for _, f := range fetched {
		dir := f.entry.Dir
		if r.s.ProvidersLock {
			dir = "" // nothing installed
		}
		out = append(out, ProviderResult{Package: f.pkg, Dir: dir, CacheHit: f.hit, Reused: f.reused, h1: f.entry.H1})
	}
	return out, nil
}

// vouched checks a cached provider package against the hashes its origin
// vouches for the package's platform: when the origin reports any of a
// scheme the entry has, one of have must be among them. (An entry with an
// h1: alone, from an unpacked mirror, cannot be checked against zh:
// checksums.)
func vouched(pkg source.ProviderPackage, have []hash.Hash, origin []hash.Record) error {
	schemes := map[hash.Scheme]bool{}
	for _, h := range have {
		schemes[h.Scheme()] = true
	}
	var want []hash.Hash
	for _, rec := range origin {
		if len(rec.Provenance.Platforms) > 0 && !slices.Contains(rec.Provenance.Platforms, pkg.Platform.String()) {
			continue
		}
		if !schemes[rec.Hash.Scheme()] || (rec.Hash.Scheme() != hash.SchemeH1 && rec.Hash.Scheme() != hash.SchemeZH) {
			continue
		}
		if slices.Contains(have, rec.Hash) {
			return nil
		}
		want = append(want, rec.Hash)
	}
	if len(want) == 0 {
		return nil
	}
	slices.Sort(want)
	return &ChecksumError{Package: pkg, Got: have, Want: slices.Compact(want), Origin: true, Err: fmt.Errorf("%w: the cached package matches none of the checksums its origin vouches for", source.ErrChecksumMismatch)}
}

// lockable keeps the hashes a lock file records (h1: and zh:).
func lockable(hs []hash.Hash) []hash.Hash {
	var out []hash.Hash
	for _, h := range hs {
		if h.Scheme() == hash.SchemeH1 || h.Scheme() == hash.SchemeZH {
			out = append(out, h)
		}
	}
	return out
}

func (r *run) checksums(ctx context.Context, pkg source.Package) ([]hash.Record, error) {
	cr, ok := r.memo.(source.ChecksumReporter)
	if !ok {
		return nil, nil
	}
	recs, err := cr.Checksums(ctx, pkg)
	if err != nil && (errors.Is(err, source.ErrNotFound) || errors.Is(err, source.ErrVersionNotFound) || errors.Is(err, source.ErrPlatformNotSupported)) {
		return nil, nil
	}
	return recs, err
}

// firstPlatform is the package of p whose checksums lockProvider asks for
// first.
func (r *run) firstPlatform(p resolve.ProviderPick) source.ProviderPackage {
	return source.ProviderPackage{Addr: p.Addr, Version: p.Version, Platform: r.s.platforms[0]}
}

// lockProvider records the hashes of one provider version for the
// platforms asked for: what the origin vouches for (recordsOrigin), plus,
// for each platform asked for whose h1: that does not give, the h1: of its
// package, downloaded once (through the cache), all platforms in parallel.
func (r *run) lockProvider(ctx context.Context, p resolve.ProviderPick, record func(tfaddr.Provider, ...hash.Hash), mu *sync.Mutex, fetched *[]providerFetch) error {
	recs, err := r.checksums(ctx, r.firstPlatform(p))
	if err != nil {
		return err
	}
	haveH1 := map[string]bool{}
	for _, rec := range recs {
		if !r.recordsOrigin(rec) {
			continue
		}
		record(p.Addr, rec.Hash)
		if rec.Hash.Scheme() == hash.SchemeH1 {
			for _, pl := range rec.Provenance.Platforms {
				haveH1[pl] = true
			}
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, len(r.s.platforms))
	for i, plat := range r.s.platforms {
		if haveH1[plat.String()] {
			continue
		}
		pkg := source.ProviderPackage{Addr: p.Addr, Version: p.Version, Platform: plat}
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case r.downloadSlots <- struct{}{}:
			case <-ctx.Done():
				errs[i] = ctx.Err()
				return
			}
			defer func() { <-r.downloadSlots }()
			// Downloads are verified by the source against what its
			// origin signs; the lock's hashes may cover other platforms
			// only, so they are not required to match here. The package
			// of the platform this machine installs for is stored for the
			// init that follows; the others are hashed as they are read
			// and not kept.
			var e cache.Entry
			var hit bool
			var err error
			if plat == r.s.Platform {
				e, hit, _, err = r.fill(ctx, pkg, "", nil)
			} else {
				e, hit, err = r.hashOnly(ctx, pkg, nil)
			}
			if err != nil {
				errs[i] = err
				return
			}
			record(p.Addr, e.Hashes...)
			mu.Lock()
			*fetched = append(*fetched, providerFetch{pkg: pkg, entry: e, hit: hit})
			mu.Unlock()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// askedPlatform reports whether a hash that the origin reports for plats
// (none: for no platform in particular) concerns a platform of the run.
func (r *run) askedPlatform(plats []string) bool {
	if len(plats) == 0 {
		return true
	}
	for _, p := range r.s.platforms {
		if slices.Contains(plats, p.String()) {
			return true
		}
	}
	return false
}

// legacyHint adds to a provider's installation error, as OpenTofu does,
// where to move the provider if a copy of it sits in the configuration's
// legacy .terraform/plugins directory, which is not a mirror.
func (r *run) legacyHint(addr tfaddr.Provider, err error) error {
	if err == nil || errors.Is(err, context.Canceled) || r.s.noDir {
		return err
	}
	return providercache.CheckLegacyPlugins(r.s.Dir, addr, err)
}
