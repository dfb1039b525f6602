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
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/providercache"
)

func (r *run) upgradingProvider(addr tfaddr.Provider) bool {
	return r.s.Resolve.Upgrade || slices.Contains(r.s.Resolve.UpgradeProviders, addr)
}

// providerFetch is one provider package as the trust seam answered for it
// (brought into the cache, or found installed already), with the lock
// file's hashes of its version before the run (want).
type providerFetch struct {
	pkg  source.ProviderPackage
	want []hash.Hash
	trusted
}

// providerFetches is what the fetch stage of providers hands the record
// stage: each package, sorted, and, in providers-lock mode, the hashes each
// provider's origin vouches for that the lock's rule records
// ([run.lockProvider]).
type providerFetches struct {
	packages []providerFetch
	origin   map[tfaddr.Provider][]hash.Hash
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

// fetchProviders fetches (or finds in the cache, or installed already)
// every selected provider for the platforms concerned, through the trust
// seam ([voucher.vouch]), and returns what it answered for the record
// stage ([run.lockSelection]), which alone writes the lock file.
func (r *run) fetchProviders(ctx context.Context, sel *resolve.Selection) (providerFetches, error) {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(r.s.Resolve.Concurrency)
	var mu sync.Mutex
	out := providerFetches{origin: map[tfaddr.Provider][]hash.Hash{}}
	add := func(f providerFetch) {
		mu.Lock()
		out.packages = append(out.packages, f)
		mu.Unlock()
	}
	for _, p := range sel.Providers {
		if p.Version.IsZero() || p.Reason == resolve.Builtin || p.Reason == resolve.Unmanaged {
			continue
		}
		if r.s.ProvidersLock {
			g.Go(func() error {
				recs, err := r.lockProvider(gctx, p, add)
				mu.Lock()
				out.origin[p.Addr] = append(out.origin[p.Addr], recs...)
				mu.Unlock()
				return r.legacyHint(p.Addr, err)
			})
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
		for _, plat := range r.s.platforms {
			pkg := source.ProviderPackage{Addr: p.Addr, Version: p.Version, Platform: plat}
			g.Go(func() error {
				t, err := voucher{r}.vouch(gctx, wanted{pkg: pkg, lock: want})
				if err != nil {
					return err
				}
				add(providerFetch{pkg: pkg, want: want, trusted: t})
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		return providerFetches{}, err
	}
	slices.SortFunc(out.packages, func(a, b providerFetch) int { return strings.Compare(a.pkg.String(), b.pkg.String()) })
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

// lockProvider brings the packages of one provider version for the
// platforms asked for, in providers-lock mode: it returns what the origin
// vouches for that the lock's rule records ([run.recordsOrigin]) and hands
// add, through the trust seam, the package of each platform asked for
// whose h1: that does not give, downloaded once (through the cache), all
// platforms in parallel. From a registry, each platform's download
// response is asked before its download slot is taken (see
// [voucher.vouch]), so that the slots bound the downloads alone.
func (r *run) lockProvider(ctx context.Context, p resolve.ProviderPick, add func(providerFetch)) ([]hash.Hash, error) {
	recs, err := r.checksums(ctx, r.firstPlatform(p))
	if err != nil {
		return nil, err
	}
	var origin []hash.Hash
	haveH1 := map[string]bool{}
	fromRegistry := false
	for _, rec := range recs {
		fromRegistry = fromRegistry || len(rec.Provenance.Registries) > 0
		if !r.recordsOrigin(rec) {
			continue
		}
		origin = append(origin, rec.Hash)
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
			if fromRegistry && i > 0 {
				// Ask the platform's download response now, outside the
				// download slots, so that a slot is held for the package's
				// download only, not for a round trip before it: a
				// registry answers the fetch's own request for it from
				// what it keeps (one request per platform either way).
				// Another origin (a mirror) is not asked: its checksums
				// may cost more than the fetch saves. A failure is
				// reported by the fetch, as before (a checksum error
				// with its remedy).
				_, _ = r.checksums(ctx, pkg)
			}
			t, err := voucher{r}.vouch(ctx, wanted{pkg: pkg})
			if err != nil {
				errs[i] = err
				return
			}
			add(providerFetch{pkg: pkg, trusted: t})
		}()
	}
	wg.Wait()
	return origin, errors.Join(errs...)
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
