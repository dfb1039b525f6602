// Package sourcetest helps test [source.Source] implementations and the
// code that uses them.
//
// [Run] is the conformance suite every source implementation should pass,
// in the manner of testing/fstest.TestFS. [Static] is an in-memory source
// for users' own tests: it needs no network and no files.
package sourcetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"
	svchost "github.com/hashicorp/terraform-svchost"
	"golang.org/x/mod/sumdb/dirhash"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
)

// Cases tells [Run] what the source under test holds.
type Cases struct {
	// Known lists packages the source can fetch, each exact: a provider
	// package with version and platform, or a module package with version
	// (or ref). At least one is required.
	Known []source.Package
	// WantH1, when set, gives the expected h1: hash of some Known packages,
	// keyed by [source.Package.String].
	WantH1 map[string]hash.Hash
	// Unknown is a package family the source does not know at all.
	// Default: a provider "example.invalid/sourcetest/unknown" and a module
	// "example.invalid/sourcetest/unknown/none".
	Unknown []source.Package
	// MissingVersion is a package the source knows, at a version it does
	// not have. Optional: the check is skipped when nil.
	MissingVersion source.Package
	// MissingPlatform is a provider package the source has at that version
	// but not for that platform. Optional.
	MissingPlatform source.Package
	// Concurrency is how many goroutines the concurrency check starts.
	// Default: 8.
	Concurrency int
	// Unlisted says that the source fetches its Known packages by
	// reference only (an archive URL, for example) and lists no versions
	// for them. Versions of a Known package must then fail with an error
	// wrapping [source.ErrVersionNotFound], and the checks that compare
	// version lists are skipped. Default false: Known packages are listed.
	Unlisted bool
}

// Run checks that src behaves as the [source] interfaces document:
//
//   - Versions lists each known package's version, sorted ascending without
//     duplicates (or, with [Cases.Unlisted], fails with an error wrapping
//     [source.ErrVersionNotFound]); an unknown package gives an error
//     wrapping [source.ErrNotFound];
//   - Fetch of a known package fills the directory, reports the package and
//     the directory, and an h1: hash that matches an independent dirhash of
//     the directory (and WantH1 when given);
//   - a package filled through a cache with [source.FetchArchive] (which
//     an [source.ArchiveFetcher] answers with its archive) is stored with
//     the h1: of what a plain Fetch extracts;
//   - Fetch into a directory that already holds files leaves them alone;
//   - Fetch of an unknown package, a missing version or a missing platform
//     fails with the matching sentinel error and leaves nothing in the
//     directory;
//   - every such miss error (from Versions, Fetch and Checksums) carries a
//     [*source.Error] whose Source and Package are set, so that messages
//     name the source and the package;
//   - a cancelled context makes Versions and Fetch fail with an error
//     wrapping the context's error, leaving nothing behind;
//   - concurrent Versions and Fetch calls give the same answers;
//   - a [source.ChecksumReporter] reports well-formed hashes;
//   - a [source.ArchiveFetcher]'s FetchArchive of a known package gives
//     its files (Dir) or its archive (Archive, whose zh: is any zh: the
//     Fetched states), and of an unknown package an error wrapping
//     [source.ErrNotFound], leaving nothing in the directory.
func Run(t *testing.T, src source.Source, c Cases) {
	t.Helper()
	if len(c.Known) == 0 {
		t.Fatal("sourcetest.Run: Cases.Known must list at least one package")
	}
	unknown := c.Unknown
	if len(unknown) == 0 {
		unknown = defaultUnknown()
	}
	ctx := context.Background()

	t.Run("Versions", func(t *testing.T) { checkVersions(ctx, t, src, c, unknown) })
	t.Run("Fetch", func(t *testing.T) { checkFetch(ctx, t, src, c, unknown) })
	t.Run("ThroughCache", func(t *testing.T) { checkThroughCache(ctx, t, src, c, unknown) })
	t.Run("FetchIntoEmptyExistingDir", func(t *testing.T) { checkFetchIntoEmptyExistingDir(ctx, t, src, c, unknown) })
	t.Run("FetchIntoNonEmptyDir", func(t *testing.T) { checkFetchIntoNonEmptyDir(ctx, t, src, c, unknown) })
	t.Run("FetchMissing", func(t *testing.T) { checkFetchMissing(ctx, t, src, c, unknown) })
	t.Run("Cancelled", func(t *testing.T) { checkCancelled(ctx, t, src, c, unknown) })
	t.Run("Concurrent", func(t *testing.T) { checkConcurrent(ctx, t, src, c, unknown) })
	if cr, ok := src.(source.ChecksumReporter); ok {
		t.Run("Checksums", func(t *testing.T) { checkChecksums(ctx, t, cr, c, unknown) })
	}

	if af, ok := src.(source.ArchiveFetcher); ok {
		t.Run("FetchArchive", func(t *testing.T) { checkFetchArchive(ctx, t, af, c.Known, unknown) })
	}
}

// checkVersions checks Versions: a known package lists its known version
// (and platform), sorted and without duplicates; an unknown one fails with
// an error wrapping source.ErrNotFound (source.ErrVersionNotFound for an
// unlisted source).
func checkVersions(ctx context.Context, t *testing.T, src source.Source, c Cases, unknown []source.Package) {
	for _, pkg := range c.Known {
		list, err := src.Versions(ctx, pkg)
		if c.Unlisted {
			if !errors.Is(err, source.ErrVersionNotFound) {
				t.Errorf("Versions(%s) of an unlisted package: got %v, %v; want an error wrapping source.ErrVersionNotFound", pkg, versionStrings(list), err)
			}
			checkErrorContext(t, "Versions", pkg, err)
			continue
		}
		if err != nil {
			t.Errorf("Versions(%s): %v", pkg, err)
			continue
		}
		if !sortedStrictly(list) {
			t.Errorf("Versions(%s) is not sorted ascending without duplicates: %v", pkg, versionStrings(list))
		}
		if v := versionOf(pkg); !v.IsZero() && !slices.ContainsFunc(list, func(a source.Available) bool { return a.Version == v }) {
			t.Errorf("Versions(%s) = %v, which lacks the known version %s", pkg, versionStrings(list), v)
		}
		if p, ok := pkg.(source.ProviderPackage); ok {
			for _, a := range list {
				if a.Version == p.Version && a.Platforms != nil && !slices.Contains(a.Platforms, p.Platform) {
					t.Errorf("Versions(%s): version %s lists platforms %v, which lack the known %s", pkg, a.Version, a.Platforms, p.Platform)
				}
			}
		}
	}
	for _, pkg := range unknown {
		_, err := src.Versions(ctx, pkg)
		if !errors.Is(err, source.ErrNotFound) {
			t.Errorf("Versions(%s) of an unknown package: got error %v, want one wrapping source.ErrNotFound", pkg, err)
		}
		checkErrorContext(t, "Versions", pkg, err)
	}
}

// checkFetch checks that Fetch of each known package extracts the tree its
// hashes name.
func checkFetch(ctx context.Context, t *testing.T, src source.Source, c Cases, unknown []source.Package) {
	for i, pkg := range c.Known {
		dir := filepath.Join(t.TempDir(), fmt.Sprintf("pkg%d", i))
		got, err := src.Fetch(ctx, pkg, dir)
		if err != nil {
			t.Errorf("Fetch(%s): %v", pkg, err)
			continue
		}
		checkFetched(t, pkg, dir, got, c.WantH1[pkg.String()])
	}
}

// checkThroughCache checks that a package fetched through the cache (asked
// with source.FetchArchive, as a cache fill asks: an ArchiveFetcher may
// hand over its archive) is stored as the tree a plain Fetch extracts: the
// same h1:.
func checkThroughCache(ctx context.Context, t *testing.T, src source.Source, c Cases, unknown []source.Package) {
	for i, pkg := range c.Known {
		dir := filepath.Join(t.TempDir(), fmt.Sprintf("plain%d", i))
		plain, err := src.Fetch(ctx, pkg, dir)
		if err != nil {
			t.Errorf("Fetch(%s): %v", pkg, err)
			continue
		}
		_, isModule := pkg.(source.ModulePackage)
		want, err := hash.Options{Module: isModule}.H1Dir(ctx, plain.Dir)
		if err != nil {
			t.Fatal(err)
		}
		cc, err := cache.Open(t.TempDir(), cache.Options{})
		if err != nil {
			t.Fatal(err)
		}
		e, _, err := cc.Fill(ctx, pkg, nil, func(ctx context.Context, dir string) (*source.Fetched, error) {
			return source.FetchArchive(ctx, src, pkg, dir)
		})
		if err != nil {
			t.Errorf("Fill(%s) through the cache: %v", pkg, err)
			continue
		}
		if e.H1 != want {
			t.Errorf("Fill(%s): the cache stored %s, a plain Fetch extracts %s", pkg, e.H1, want)
		}
		if got, err := (hash.Options{Module: isModule}).H1Dir(ctx, e.Dir); err != nil || got != e.H1 {
			t.Errorf("Fill(%s): the stored tree hashes to %s (%v), its name is %s", pkg, got, err, e.H1)
		}
	}
}

// checkFetchIntoEmptyExistingDir checks that Fetch accepts an existing empty
// destination.
func checkFetchIntoEmptyExistingDir(ctx context.Context, t *testing.T, src source.Source, c Cases, unknown []source.Package) {
	dir := t.TempDir()
	got, err := src.Fetch(ctx, c.Known[0], dir)
	if err != nil {
		t.Fatalf("Fetch(%s) into an existing empty directory: %v", c.Known[0], err)
	}
	checkFetched(t, c.Known[0], dir, got, c.WantH1[c.Known[0].String()])
}

// checkFetchIntoNonEmptyDir checks that Fetch into a non-empty destination
// destroys nothing there.
func checkFetchIntoNonEmptyDir(ctx context.Context, t *testing.T, src source.Source, c Cases, unknown []source.Package) {
	// The caller broke the contract; the source must not destroy what
	// is already there, whether or not it reports an error.
	dir := t.TempDir()
	keep := filepath.Join(dir, "keep.txt")
	if err := os.WriteFile(keep, []byte("user data"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _ = src.Fetch(ctx, c.Known[0], dir)
	if b, err := os.ReadFile(keep); err != nil || string(b) != "user data" {
		t.Errorf("Fetch(%s) into a non-empty directory destroyed an existing file (%v)", c.Known[0], err)
	}
}

// checkFetchMissing checks that Fetch of an unknown package, a missing
// version or a missing platform fails with the matching error and leaves
// nothing behind.
func checkFetchMissing(ctx context.Context, t *testing.T, src source.Source, c Cases, unknown []source.Package) {
	type miss struct {
		pkg  source.Package
		want error
	}
	var misses []miss
	for _, pkg := range unknown {
		misses = append(misses, miss{withSomeVersion(pkg, c.Known), source.ErrNotFound})
	}
	if c.MissingVersion != nil {
		misses = append(misses, miss{c.MissingVersion, source.ErrVersionNotFound})
	}
	if c.MissingPlatform != nil {
		misses = append(misses, miss{c.MissingPlatform, source.ErrPlatformNotSupported})
	}
	for i, m := range misses {
		dir := filepath.Join(t.TempDir(), fmt.Sprintf("miss%d", i))
		got, err := src.Fetch(ctx, m.pkg, dir)
		if !errors.Is(err, m.want) {
			t.Errorf("Fetch(%s): got %v, %v; want an error wrapping %v", m.pkg, got, err, m.want)
		}
		checkErrorContext(t, "Fetch", m.pkg, err)
		checkNothingLeft(t, dir, m.pkg)
	}
	if c.MissingVersion != nil && !c.Unlisted {
		if list, err := src.Versions(ctx, c.MissingVersion); err != nil {
			t.Errorf("Versions(%s) of a known package: %v", c.MissingVersion, err)
		} else if v := versionOf(c.MissingVersion); slices.ContainsFunc(list, func(a source.Available) bool { return a.Version == v }) {
			t.Errorf("Cases.MissingVersion %s: Versions lists that version", c.MissingVersion)
		}
	}
}

// checkCancelled checks that a cancelled context stops Versions and Fetch,
// leaving nothing behind.
func checkCancelled(ctx context.Context, t *testing.T, src source.Source, c Cases, unknown []source.Package) {
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := src.Versions(cctx, c.Known[0]); !c.Unlisted && !errors.Is(err, context.Canceled) {
		t.Errorf("Versions with a cancelled context: got error %v, want one wrapping context.Canceled", err)
	}
	dir := filepath.Join(t.TempDir(), "cancelled")
	if _, err := src.Fetch(cctx, c.Known[0], dir); !errors.Is(err, context.Canceled) {
		t.Errorf("Fetch with a cancelled context: got error %v, want one wrapping context.Canceled", err)
	}
	checkNothingLeft(t, dir, c.Known[0])
}

// checkConcurrent checks that concurrent Versions and Fetch calls agree with
// each other.
func checkConcurrent(ctx context.Context, t *testing.T, src source.Source, c Cases, unknown []source.Package) {
	n := c.Concurrency
	if n <= 0 {
		n = 8
	}
	base := t.TempDir()
	var want []source.Available
	if !c.Unlisted {
		var err error
		if want, err = src.Versions(ctx, c.Known[0]); err != nil {
			t.Fatalf("Versions(%s): %v", c.Known[0], err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pkg := c.Known[i%len(c.Known)]
			if !c.Unlisted {
				list, err := src.Versions(ctx, c.Known[0])
				if err != nil {
					errs <- fmt.Errorf("Versions(%s): %v", c.Known[0], err)
				} else if !slices.Equal(versionStrings(list), versionStrings(want)) {
					errs <- fmt.Errorf("concurrent Versions(%s) = %v, want %v", c.Known[0], versionStrings(list), versionStrings(want))
				}
			}
			dir := filepath.Join(base, fmt.Sprintf("c%d", i))
			got, err := src.Fetch(ctx, pkg, dir)
			if err != nil {
				errs <- fmt.Errorf("concurrent Fetch(%s): %v", pkg, err)
				return
			}
			if h, err := dirhash.HashDir(dir, "", dirhash.Hash1); err != nil || !slices.Contains(got.Hashes, hash.Hash(h)) {
				errs <- fmt.Errorf("concurrent Fetch(%s): hashes %v do not include the directory's %s (%v)", pkg, got.Hashes, h, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// checkChecksums checks a ChecksumReporter: parseable hashes for a known
// package, source.ErrNotFound for an unknown one.
func checkChecksums(ctx context.Context, t *testing.T, cr source.ChecksumReporter, c Cases, unknown []source.Package) {
	for _, pkg := range c.Known {
		recs, err := cr.Checksums(ctx, pkg)
		if err != nil {
			t.Errorf("Checksums(%s): %v", pkg, err)
			continue
		}
		for _, r := range recs {
			if _, err := hash.ParseHash(string(r.Hash)); err != nil {
				t.Errorf("Checksums(%s): %v", pkg, err)
			}
		}
	}
	for _, pkg := range unknown {
		_, err := cr.Checksums(ctx, withSomeVersion(pkg, c.Known))
		if !errors.Is(err, source.ErrNotFound) {
			t.Errorf("Checksums(%s) of an unknown package: got error %v, want one wrapping source.ErrNotFound", pkg, err)
		}
		checkErrorContext(t, "Checksums", pkg, err)
	}
}

// checkFetchArchive checks af's FetchArchive: a known package comes as
// files or as an archive whose zh: is the one stated; an unknown one
// fails with an error wrapping source.ErrNotFound and leaves nothing.
func checkFetchArchive(ctx context.Context, t *testing.T, af source.ArchiveFetcher, known, unknown []source.Package) {
	for i, pkg := range known {
		dir := filepath.Join(t.TempDir(), fmt.Sprintf("archive%d", i))
		got, err := af.FetchArchive(ctx, pkg, dir)
		if err != nil {
			t.Errorf("FetchArchive(%s): %v", pkg, err)
			continue
		}
		if got.Pending != nil {
			if err := got.Pending.Wait(); err != nil {
				t.Errorf("FetchArchive(%s): the pending archive's Wait: %v", pkg, err)
				continue
			}
		}
		if got.Package != pkg {
			t.Errorf("FetchArchive(%s): Fetched.Package = %v", pkg, got.Package)
		}
		if (got.Dir == "") == (got.Archive == "") {
			t.Errorf("FetchArchive(%s): Fetched.Dir %q, Archive %q; want exactly one", pkg, got.Dir, got.Archive)
			continue
		}
		if got.Archive == "" {
			continue
		}
		zh, err := hash.ZH(got.Archive)
		if err != nil {
			t.Errorf("FetchArchive(%s): reading the archive: %v", pkg, err)
			continue
		}
		for _, h := range got.Hashes {
			if h.Scheme() == hash.SchemeZH && h != zh {
				t.Errorf("FetchArchive(%s): states %s, the archive's zh: is %s", pkg, h, zh)
			}
		}
	}
	for i, pkg := range unknown {
		pkg = withSomeVersion(pkg, known)
		dir := filepath.Join(t.TempDir(), fmt.Sprintf("archivemiss%d", i))
		got, err := af.FetchArchive(ctx, pkg, dir)
		if !errors.Is(err, source.ErrNotFound) {
			t.Errorf("FetchArchive(%s) of an unknown package: got %v, %v; want an error wrapping source.ErrNotFound", pkg, got, err)
		}
		checkErrorContext(t, "FetchArchive", pkg, err)
		checkNothingLeft(t, dir, pkg)
	}
}

func checkFetched(t *testing.T, pkg source.Package, dir string, got *source.Fetched, want hash.Hash) {
	t.Helper()
	if got == nil {
		t.Errorf("Fetch(%s) returned nil and no error", pkg)
		return
	}
	if got.Package != pkg {
		t.Errorf("Fetch(%s): Fetched.Package = %v", pkg, got.Package)
	}
	if got.Dir != dir {
		t.Errorf("Fetch(%s): Fetched.Dir = %q, want %q", pkg, got.Dir, dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) == 0 {
		t.Errorf("Fetch(%s): the directory holds nothing (%v)", pkg, err)
		return
	}
	h1, err := dirhash.HashDir(dir, "", dirhash.Hash1)
	if err != nil {
		t.Errorf("Fetch(%s): hashing the directory: %v", pkg, err)
		return
	}
	if !slices.Contains(got.Hashes, hash.Hash(h1)) {
		t.Errorf("Fetch(%s): Fetched.Hashes = %v, which lack the directory's %s", pkg, got.Hashes, h1)
	}
	if want != "" && hash.Hash(h1) != want {
		t.Errorf("Fetch(%s): the directory's hash is %s, want %s", pkg, h1, want)
	}
	for _, h := range got.Hashes {
		if _, err := hash.ParseHash(string(h)); err != nil {
			t.Errorf("Fetch(%s): %v", pkg, err)
		}
	}
}

func checkNothingLeft(t *testing.T, dir string, pkg source.Package) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err == nil && len(entries) > 0 {
		t.Errorf("failed Fetch(%s) left %d entries in %s", pkg, len(entries), dir)
	}
}

func sortedStrictly(list []source.Available) bool {
	for i := 1; i < len(list); i++ {
		if !list[i-1].Version.LessThan(list[i].Version) {
			return false
		}
	}
	return true
}

func versionStrings(list []source.Available) []string {
	out := make([]string, len(list))
	for i, a := range list {
		out[i] = a.Version.String()
		if a.Version.IsZero() {
			out[i] = "(none)"
		}
	}
	return out
}

func versionOf(pkg source.Package) versions.Version {
	switch p := pkg.(type) {
	case source.ProviderPackage:
		return p.Version
	case source.ModulePackage:
		return p.Version
	}
	return versions.Version{}
}

func defaultUnknown() []source.Package {
	return []source.Package{
		source.ProviderPackage{Addr: tfaddr.NewProvider(svchost.Hostname("example.invalid"), "sourcetest", "unknown")},
		source.ModulePackage{Source: "example.invalid/sourcetest/unknown/none"},
	}
}

// withSomeVersion gives an unknown package the version (and platform) of a
// known one, so that Fetch has an exact package to look for.
func withSomeVersion(pkg source.Package, known []source.Package) source.Package {
	var v versions.Version
	var plat source.Platform
	for _, k := range known {
		if kv := versionOf(k); !kv.IsZero() {
			v = kv
			if p, ok := k.(source.ProviderPackage); ok {
				plat = p.Platform
			}
			break
		}
	}
	switch p := pkg.(type) {
	case source.ProviderPackage:
		if p.Version.IsZero() {
			p.Version = v
		}
		if p.Platform.IsZero() {
			p.Platform = plat
		}
		if p.Platform.IsZero() {
			p.Platform = source.Platform{OS: "linux", Arch: "amd64"}
		}
		return p
	case source.ModulePackage:
		if p.Version.IsZero() && p.Ref == "" {
			p.Version = v
		}
		if p.Version.IsZero() && p.Ref == "" {
			p.Ref = "main"
		}
		return p
	}
	return pkg
}

// checkErrorContext checks that a source's miss error carries a
// [*source.Error] naming the source and the package asked about.
func checkErrorContext(t *testing.T, op string, pkg source.Package, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var se *source.Error
	if !errors.As(err, &se) {
		t.Errorf("%s(%s): error %q is not a *source.Error naming the source and the package", op, pkg, err)
		return
	}
	if se.Source == "" {
		t.Errorf("%s(%s): *source.Error %q does not name the source", op, pkg, err)
	}
	if se.Package == nil {
		t.Errorf("%s(%s): *source.Error %q does not name the package", op, pkg, err)
	}
}
