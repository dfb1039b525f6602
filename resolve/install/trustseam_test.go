package install_test

import (
	"context"
	"net/http/httptest"
	"os"
	"slices"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/cache/mirrorserve"
	"github.com/tflock/tflock/source/mirror"
	"github.com/tflock/tflock/source/registry"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// The trust seam's answer (issue 24 item 3): for each package, one
// result saying what the package is, which hashes the lock file records
// for it, who vouched for it and what it was verified against. These
// tests ask it directly (install.Vouch, a run's voucher) for a provider
// of a real registry (registrytest, over HTTPS), signed and unsigned,
// served again from the cache, and through a network mirror that is
// trusted (tflock's own, mirrorserve, in front of that registry).

const seamAddr = "registry.example.test/acme/tool"

// seamRegistry starts a registry serving seamAddr 1.0.0 for
// lockRulePlatforms, its checksums signed unless unsigned.
func seamRegistry(t *testing.T, unsigned bool) *registrytest.Server {
	t.Helper()
	fx := registrytest.Fixtures{Providers: []registrytest.Provider{{Addr: seamAddr, Unsigned: unsigned,
		Versions: []registrytest.ProviderVersion{{Version: "1.0.0", Platforms: lockRulePlatforms}}}}}
	return registrytest.New(t, fx, registrytest.Options{Hosts: []string{"registry.example.test"}})
}

// seamOptions are the options of a run for the first of lockRulePlatforms,
// with an empty lock file.
func seamOptions(t *testing.T, src source.Source, c *cache.Cache) (install.Options, source.ProviderPackage) {
	t.Helper()
	plat, err := source.ParsePlatform(lockRulePlatforms[0])
	if err != nil {
		t.Fatal(err)
	}
	pkg := source.ProviderPackage{Addr: tfaddr.MustParseProviderSource(seamAddr), Version: mustV("1.0.0"), Platform: plat}
	return install.Options{Dir: t.TempDir(), Source: src, Cache: c, Resolve: resolve.Options{Lock: lockfile.New()}, Platform: plat}, pkg
}

// hashSet returns hs sorted, without repeats.
func hashSet(hs ...hash.Hash) []hash.Hash {
	return slices.Compact(slices.Sorted(slices.Values(hs)))
}

// zhOfEvery returns the zh: of the package of every platform srv serves.
func zhOfEvery(t *testing.T, srv *registrytest.Server) []hash.Hash {
	t.Helper()
	var out []hash.Hash
	for _, p := range lockRulePlatforms {
		info, ok := srv.ProviderPackage(seamAddr, "1.0.0", p)
		if !ok {
			t.Fatalf("no package for %s", p)
		}
		out = append(out, info.ZH)
	}
	return out
}

// downloads counts the package downloads srv served for the platform.
func seamDownloads(t *testing.T, srv *registrytest.Server, plat string) int {
	t.Helper()
	info, _ := srv.ProviderPackage(seamAddr, "1.0.0", plat)
	return srv.RequestsTo("/files/providers/" + seamAddr + "/1.0.0/" + info.Filename)
}

// A signed registry package, a new selection: downloaded, verified against
// the checksums the registry signs, recorded with its own h1: and the
// signed zh: of every platform; the registry and its key vouch.
func TestTrustSeamSignedRegistry(t *testing.T) {
	srv := seamRegistry(t, false)
	opts, pkg := seamOptions(t, registry.NewSource(registry.Options{HTTPClient: srv.Client()}), openCache(t))
	got, err := install.Vouch(context.Background(), opts, pkg, nil)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := srv.ProviderPackage(seamAddr, "1.0.0", lockRulePlatforms[0])
	if got.Hit || got.Reused {
		t.Errorf("hit %v, reused %v; want a download", got.Hit, got.Reused)
	}
	if fi, err := os.Stat(got.Entry.Dir); err != nil || !fi.IsDir() || got.Entry.H1 != info.H1 {
		t.Errorf("entry %s (h1 %s): %v; want the package's directory, h1 %s", got.Entry.Dir, got.Entry.H1, err, info.H1)
	}
	if want := "checksum signed by key " + srv.KeyID; got.Verified != want {
		t.Errorf("verified %q, want %q", got.Verified, want)
	}
	if want := hashSet(append(zhOfEvery(t, srv), info.H1)...); !slices.Equal(hashSet(got.Record...), want) {
		t.Errorf("record\n got %v\nwant %v", hashSet(got.Record...), want)
	}
	if !got.Signed {
		t.Error("not signed: the registry's signed checksums vouch for it")
	}
	for _, zh := range zhOfEvery(t, srv) {
		i := slices.IndexFunc(got.Origin, func(r hash.Record) bool { return r.Hash == zh })
		if i < 0 || !slices.Contains(got.Origin[i].Provenance.SignedBy, srv.KeyID) {
			t.Errorf("origin %v: %s is not signed by %s", got.Origin, zh, srv.KeyID)
		}
	}
	if got.Entry.Provenance.SignedBy == nil || !got.Entry.Provenance.VerifiedLocally {
		t.Errorf("entry provenance %+v, want signed and verified locally", got.Entry.Provenance)
	}
}

// An unsigned registry package (its provider lists no key, on a host
// that needs no signature, as OpenTofu's default registry): trusted on
// first use, vouched for by no key but by the registry, whose every
// reported hash the lock records (OpenTofu's rule).
func TestTrustSeamUnsignedRegistry(t *testing.T) {
	srv := seamRegistry(t, true)
	src := registry.NewSource(registry.Options{HTTPClient: srv.Client(), UnsignedHosts: []string{"registry.example.test"}})
	opts, pkg := seamOptions(t, src, openCache(t))
	got, err := install.Vouch(context.Background(), opts, pkg, nil)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := srv.ProviderPackage(seamAddr, "1.0.0", lockRulePlatforms[0])
	if got.Hit || got.Verified != "trusted on first use" {
		t.Errorf("hit %v, verified %q; want a download trusted on first use", got.Hit, got.Verified)
	}
	if want := hashSet(append(zhOfEvery(t, srv), info.H1)...); !slices.Equal(hashSet(got.Record...), want) {
		t.Errorf("record\n got %v\nwant %v", hashSet(got.Record...), want)
	}
	if !got.Signed {
		t.Error("not vouched for by the origin registry, which reported the hashes")
	}
	if len(got.Origin) == 0 {
		t.Fatal("no origin records")
	}
	for _, r := range got.Origin {
		if len(r.Provenance.SignedBy) > 0 || !r.Provenance.SigningExempt {
			t.Errorf("origin record %+v: want no signer, signing exempt", r)
		}
	}
}

// A package its origin signs nothing for, on a host that needs
// signatures: refused, nothing vouched.
func TestTrustSeamUnsignedRefused(t *testing.T) {
	srv := seamRegistry(t, true)
	opts, pkg := seamOptions(t, registry.NewSource(registry.Options{HTTPClient: srv.Client()}), openCache(t))
	if got, err := install.Vouch(context.Background(), opts, pkg, nil); err == nil {
		t.Fatalf("an unsigned package of a host that needs signatures was accepted: %+v", got)
	}
}

// A cache hit: with the lock file's hashes, the package is served from
// the cache without a download and verified against the lock; for a new
// selection the cache holds, the origin is asked what it vouches for, so
// that the record does not depend on the cache being warm.
func TestTrustSeamCacheHit(t *testing.T) {
	srv := seamRegistry(t, false)
	c := openCache(t)
	opts, pkg := seamOptions(t, registry.NewSource(registry.Options{HTTPClient: srv.Client()}), c)
	first, err := install.Vouch(context.Background(), opts, pkg, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := seamDownloads(t, srv, lockRulePlatforms[0])
	if n != 1 {
		t.Fatalf("%d downloads after the first fill, want 1", n)
	}

	locked, err := install.Vouch(context.Background(), opts, pkg, first.Record)
	if err != nil {
		t.Fatal(err)
	}
	if !locked.Hit || locked.Reused || locked.Verified != "matches the lock file" || locked.Entry.Dir != first.Entry.Dir {
		t.Errorf("locked: hit %v, reused %v, verified %q, dir %s; want a hit on %s matching the lock file", locked.Hit, locked.Reused, locked.Verified, locked.Entry.Dir, first.Entry.Dir)
	}
	if !slices.Equal(hashSet(locked.Record...), hashSet(locked.Entry.Hashes...)) || !slices.Contains(locked.Record, first.Entry.H1) {
		t.Errorf("locked: record %v, want the entry's own hashes %v, its h1: %s among them", locked.Record, locked.Entry.Hashes, first.Entry.H1)
	}

	fresh, err := install.Vouch(context.Background(), opts, pkg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !fresh.Hit || !fresh.Signed || !slices.Equal(hashSet(fresh.Record...), hashSet(first.Record...)) {
		t.Errorf("new selection from the cache: hit %v, signed %v, record %v; want a hit recording %v", fresh.Hit, fresh.Signed, fresh.Record, first.Record)
	}
	if len(fresh.Origin) == 0 {
		t.Error("new selection from the cache: the origin was not asked what it vouches for")
	}
	if got := seamDownloads(t, srv, lockRulePlatforms[0]); got != n {
		t.Errorf("%d downloads after two hits, want %d", got, n)
	}
}

// A trusted network mirror (trust_all_hashes; tflock's own, serving the
// registry's packages): its hashes are recorded for every platform it
// lists, a mirror vouches, and no registry signed what the run saw.
func TestTrustSeamTrustedMirror(t *testing.T) {
	srv := seamRegistry(t, false)
	h, err := mirrorserve.New(mirrorserve.Options{Source: registry.NewSource(registry.Options{HTTPClient: srv.Client()}), Cache: openCache(t), Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewTLSServer(h)
	t.Cleanup(front.Close)
	mir, err := mirror.NewNetwork(mirror.NetworkOptions{URL: front.URL + "/", Client: front.Client(), TrustAllHashes: true})
	if err != nil {
		t.Fatal(err)
	}
	opts, pkg := seamOptions(t, mir, openCache(t))
	got, err := install.Vouch(context.Background(), opts, pkg, nil)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := srv.ProviderPackage(seamAddr, "1.0.0", lockRulePlatforms[0])
	if got.Hit || got.Entry.H1 != info.H1 {
		t.Errorf("hit %v, h1 %s; want a download of %s", got.Hit, got.Entry.H1, info.H1)
	}
	if len(got.Origin) == 0 {
		t.Fatal("no origin records: the trusted mirror vouched for nothing")
	}
	for _, r := range got.Origin {
		if len(r.Provenance.TrustedMirrors) == 0 || len(r.Provenance.Registries) > 0 {
			t.Errorf("origin record %+v: want a trusted mirror's, no registry's", r)
		}
	}
	if want := hashSet(append(zhOfEvery(t, srv), info.H1)...); !slices.Equal(hashSet(got.Record...), want) {
		t.Errorf("record\n got %v\nwant %v", hashSet(got.Record...), want)
	}
	if got.Signed || got.Verified != "trusted on first use" {
		t.Errorf("signed %v, verified %q; want unsigned (a mirror's hashes are not the origin registry's), trusted on first use", got.Signed, got.Verified)
	}
}

// A package installed already with the lock file's hashes: kept where it
// is, nothing fetched; its h1: is what the lock records of it.
func TestTrustSeamInstalledAlready(t *testing.T) {
	srv := seamRegistry(t, false)
	src := registry.NewSource(registry.Options{HTTPClient: srv.Client()})
	opts, pkg := seamOptions(t, src, openCache(t))
	writeFiles(t, opts.Dir, map[string]string{"main.tf": `terraform {
  required_providers {
    tool = { source = "` + seamAddr + `" }
  }
}
`})
	res, err := install.Init(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	n := seamDownloads(t, srv, lockRulePlatforms[0])
	info, _ := srv.ProviderPackage(seamAddr, "1.0.0", lockRulePlatforms[0])
	got, err := install.Vouch(context.Background(), opts, pkg, res.Lock.ProviderHashes(pkg.Addr))
	if err != nil {
		t.Fatal(err)
	}
	if !got.Reused || !got.Hit || got.Verified != "installed already, matches the lock file" {
		t.Errorf("reused %v, hit %v, verified %q; want the installed package kept", got.Reused, got.Hit, got.Verified)
	}
	if !slices.Equal(got.Record, []hash.Hash{info.H1}) || got.Entry.Dir != res.Providers[0].Dir {
		t.Errorf("record %v, dir %s; want [%s], %s", got.Record, got.Entry.Dir, info.H1, res.Providers[0].Dir)
	}
	if got := seamDownloads(t, srv, lockRulePlatforms[0]); got != n {
		t.Errorf("%d downloads, want %d: nothing fetched for an installed package", got, n)
	}
}

// In providers-lock mode, another platform's package is hashed as it is
// read, not stored, and recorded with its own hashes; what its origin
// vouches for is recorded per provider (lockProvider), not here.
func TestTrustSeamProvidersLockOtherPlatform(t *testing.T) {
	srv := seamRegistry(t, false)
	c := openCache(t)
	opts, pkg := seamOptions(t, registry.NewSource(registry.Options{HTTPClient: srv.Client()}), c)
	opts.ProvidersLock = true
	other, err := source.ParsePlatform(lockRulePlatforms[1])
	if err != nil {
		t.Fatal(err)
	}
	pkg.Platform = other
	got, err := install.Vouch(context.Background(), opts, pkg, nil)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := srv.ProviderPackage(seamAddr, "1.0.0", lockRulePlatforms[1])
	if want := hashSet(info.H1, info.ZH); !slices.Equal(hashSet(got.Record...), want) {
		t.Errorf("record %v, want its own hashes %v", hashSet(got.Record...), want)
	}
	if got.Hit || got.Signed {
		t.Errorf("hit %v, signed %v; want a download, nothing recorded from the origin here", got.Hit, got.Signed)
	}
	if _, stored, err := c.Lookup(context.Background(), pkg, []hash.Hash{info.H1}); err != nil || stored {
		t.Errorf("another platform's package was stored in the cache (%v, %v)", stored, err)
	}
}
