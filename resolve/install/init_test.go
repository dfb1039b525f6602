package install_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/sourcetest"
)

func openCache(t testing.TB) *cache.Cache {
	t.Helper()
	c, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// initAndWrite runs Init and writes the lock file, as a CLI would.
func initAndWrite(t *testing.T, opts install.Options) *install.Result {
	t.Helper()
	res, err := install.Init(context.Background(), opts)
	if err != nil {
		t.Fatalf("Init: %v", err)
	}
	if _, err := install.WriteLock(filepath.Join(opts.Dir, install.LockFileName), res); err != nil {
		t.Fatal(err)
	}
	return res
}

func TestInitFirstThenReinit(t *testing.T) {
	dir := newConfig(t)
	static := staticFixtures()
	src := &counting{src: static}
	c := openCache(t)
	res := initAndWrite(t, install.Options{Dir: dir, Source: src, Cache: c})

	lf := res.Lock
	if got := lf.Provider(awsAddr); got == nil || got.Version != versions.MustParse("5.1.0") || got.Constraints != "~> 5.0" {
		t.Fatalf("aws lock = %+v, want 5.1.0 with constraints ~> 5.0", got)
	}
	// The installed platform's h1: is recorded, and no other platform's
	// h1: the source reports unsigned: tofu 1.12.6 records those only from
	// its default registry, which this host is not (the interop suite
	// checks both against the real binary; TestLockRuleRegistry).
	for _, plat := range testPlats {
		var files map[string]string
		for _, sp := range static.Providers {
			if sp.Addr == awsAddr && sp.Version.String() == "5.1.0" && sp.Platform == plat {
				files = sp.Files
			}
		}
		want, err := sourcetest.H1(files)
		if err != nil {
			t.Fatal(err)
		}
		if got := containsHash(lf.ProviderHashes(awsAddr), want); got != (plat == source.CurrentPlatform) {
			t.Errorf("aws hashes %v: has %s of %s = %v, want %v", lf.ProviderHashes(awsAddr), want, plat, got, !got)
		}
	}
	for _, call := range []string{"vpc", "vpc.subnets"} {
		ml := lf.Module(call)
		if ml == nil {
			t.Fatalf("module %q not locked", call)
		}
		if len(ml.Hashes) != 1 {
			t.Errorf("module %q hashes = %v, want one h1:", call, ml.Hashes)
		}
	}
	if ml := lf.Module("vpc"); ml.Version != versions.MustParse("1.1.0") || ml.Source != vpcSource || ml.Constraints != "~> 1.0" {
		t.Errorf("vpc lock = %+v", ml)
	}
	if lf.Module("app") != nil || lf.Module("vpc.local") != nil {
		t.Error("local modules must not be locked")
	}
	// The null provider comes from the vpc module.
	if lf.Provider(nullAddr) == nil {
		t.Error("the provider required by the remote module vpc is not locked")
	}
	if len(res.Changes) != 5 {
		t.Errorf("first init: %d changes, want 5 (3 providers, 2 modules): %v", len(res.Changes), res.Changes)
	}

	// modules.json in tofu's format.
	b, err := os.ReadFile(filepath.Join(dir, ".terraform", "modules", "modules.json"))
	if err != nil {
		t.Fatal(err)
	}
	wantManifest := `{"Modules":[` +
		`{"Key":"","Source":"","Dir":"."},` +
		`{"Key":"app","Source":"./modules/app","Dir":"modules/app"},` +
		`{"Key":"vpc","Source":"` + vpcSource + `","Version":"1.1.0","Dir":".terraform/modules/vpc"},` +
		`{"Key":"vpc.local","Source":"./modules/local","Dir":".terraform/modules/vpc/modules/local"},` +
		`{"Key":"vpc.subnets","Source":"` + subsSource + `","Version":"2.0.0","Dir":".terraform/modules/vpc.subnets"}]}`
	if string(b) != wantManifest {
		t.Errorf("modules.json:\n got %s\nwant %s", b, wantManifest)
	}
	if _, err := os.Stat(filepath.Join(dir, ".terraform", "modules", "vpc", "modules", "local", "main.tf")); err != nil {
		t.Error(err)
	}
	exe := filepath.Join(dir, ".terraform", "providers", host, "hashicorp", "aws", "5.1.0", source.CurrentPlatform.String(), "terraform-provider-aws_v5.1.0")
	if _, err := os.Stat(exe); err != nil {
		t.Errorf("provider not installed in tofu's layout: %v", err)
	}

	// Check agrees.
	chk, err := install.Check(context.Background(), install.CheckOptions{Dir: dir})
	if err != nil {
		t.Fatalf("Check after init: %v", err)
	}
	if len(chk.Providers) != 3 || chk.Providers[0].Executable == "" {
		t.Errorf("Check providers = %+v", chk.Providers)
	}

	// Re-init: the lock and the cache agree, so the source is not asked
	// anything and nothing changes.
	before := src.total()
	lockBytes, _ := os.ReadFile(filepath.Join(dir, install.LockFileName))
	res2 := initAndWrite(t, install.Options{Dir: dir, Source: src, Cache: c})
	if n := src.total() - before; n != 0 {
		t.Errorf("re-init asked the source %d times, want 0", n)
	}
	if res2.Listed != 0 || res2.Downloads != 0 || len(res2.Changes) != 0 {
		t.Errorf("re-init: listed %d, downloads %d, changes %v; want none", res2.Listed, res2.Downloads, res2.Changes)
	}
	lockBytes2, _ := os.ReadFile(filepath.Join(dir, install.LockFileName))
	if string(lockBytes) != string(lockBytes2) {
		t.Error("re-init changed the lock file")
	}
}

func containsHash(hs []hash.Hash, h hash.Hash) bool {
	for _, x := range hs {
		if x == h {
			return true
		}
	}
	return false
}

func TestInitUpgrade(t *testing.T) {
	dir := newConfig(t)
	static := staticFixtures()
	// Start with aws 5.0.0 locked.
	lf := lockfile.New()
	lf.SetProvider(&lockfile.ProviderLock{Addr: awsAddr, Version: versions.MustParse("5.0.0"), Constraints: "~> 5.0"})
	if err := lockfile.WriteFile(filepath.Join(dir, install.LockFileName), lf); err != nil {
		t.Fatal(err)
	}
	c := openCache(t)
	res := initAndWrite(t, install.Options{Dir: dir, Source: static, Cache: c})
	if v := res.Lock.Provider(awsAddr).Version.String(); v != "5.0.0" {
		t.Fatalf("without upgrade aws = %s, want the locked 5.0.0", v)
	}
	res = initAndWrite(t, install.Options{Dir: dir, Source: static, Cache: c, Resolve: resolve.Options{UpgradeProviders: []tfaddr.Provider{awsAddr}}})
	if v := res.Lock.Provider(awsAddr).Version.String(); v != "5.1.0" {
		t.Fatalf("with upgrade aws = %s, want 5.1.0", v)
	}
	var found bool
	for _, ch := range res.Changes {
		if ch.Provider == awsAddr && ch.Kind == lockfile.Upgraded {
			found = true
		}
	}
	if !found {
		t.Errorf("changes %v lack the aws upgrade", res.Changes)
	}
	if _, err := os.Stat(filepath.Join(dir, ".terraform", "providers", host, "hashicorp", "aws", "5.1.0")); err != nil {
		t.Errorf("upgraded provider not installed: %v", err)
	}
	// The previous version stays where it was installed, as tofu 1.12
	// leaves it after "tofu init -upgrade" (checked with tofu 1.12.6 and a
	// filesystem mirror): an install never deletes other packages.
	if _, err := os.Stat(filepath.Join(dir, ".terraform", "providers", host, "hashicorp", "aws", "5.0.0")); err != nil {
		t.Errorf("previous provider version removed: %v", err)
	}
}

func TestInitTamperedPackage(t *testing.T) {
	dir := newConfig(t)
	initAndWrite(t, install.Options{Dir: dir, Source: staticFixtures(), Cache: openCache(t)})
	lockPath := filepath.Join(dir, install.LockFileName)
	freshMachine(t, dir)
	before := snapshot(t, dir)

	// The same versions, other contents: a registry serving tampered
	// packages. A fresh cache makes Init download them.
	tampered := staticFixtures()
	for i := range tampered.Providers {
		if tampered.Providers[i].Addr == awsAddr {
			tampered.Providers[i].Files = map[string]string{"terraform-provider-aws": "evil"}
		}
	}
	_, err := install.Init(context.Background(), install.Options{Dir: dir, Source: tampered, Cache: openCache(t)})
	if err == nil {
		t.Fatal("Init accepted a tampered package")
	}
	if !errors.Is(err, source.ErrChecksumMismatch) {
		t.Errorf("error %v does not wrap source.ErrChecksumMismatch", err)
	}
	var mm *hash.MismatchError
	if !errors.As(err, &mm) || len(mm.Want) == 0 {
		t.Errorf("error %v is not a *hash.MismatchError with the recorded hashes", err)
	}
	var ce *install.ChecksumError
	if !errors.As(err, &ce) || !strings.Contains(ce.Package.ForDisplay(), "aws") {
		t.Errorf("error %v is not a *install.ChecksumError naming aws", err)
	}
	if after := snapshot(t, dir); after != before {
		t.Errorf("a failed init changed the configuration directory:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if _, err := os.Stat(lockPath); err != nil {
		t.Fatal(err)
	}
}

func TestInitTamperedModule(t *testing.T) {
	dir := newConfig(t)
	initAndWrite(t, install.Options{Dir: dir, Source: staticFixtures(), Cache: openCache(t)})
	freshMachine(t, dir)
	before := snapshot(t, dir)
	tampered := staticFixtures()
	for i := range tampered.Modules {
		if tampered.Modules[i].Source == subsSource {
			tampered.Modules[i].Files = map[string]string{"main.tf": "# moved tag\n"}
		}
	}
	_, err := install.Init(context.Background(), install.Options{Dir: dir, Source: tampered, Cache: openCache(t)})
	var ce *install.ChecksumError
	if !errors.As(err, &ce) || ce.Call != "vpc.subnets" {
		t.Fatalf("Init error = %v, want a *install.ChecksumError for module vpc.subnets", err)
	}
	if after := snapshot(t, dir); after != before {
		t.Error("a failed init changed the configuration directory")
	}
}

func TestInitRemovedModule(t *testing.T) {
	dir := newConfig(t)
	c := openCache(t)
	initAndWrite(t, install.Options{Dir: dir, Source: staticFixtures(), Cache: c})
	writeFiles(t, dir, map[string]string{"main.tf": strings.Replace(rootConfig, `module "vpc" {
  source  = "`+host+`/acme/vpc/aws"
  version = "~> 1.0"
}`, "", 1)})
	res := initAndWrite(t, install.Options{Dir: dir, Source: staticFixtures(), Cache: c})
	if res.Lock.Module("vpc") != nil || res.Lock.Module("vpc.subnets") != nil {
		t.Error("removed module still locked")
	}
	if res.Lock.Provider(nullAddr) != nil {
		t.Error("the provider only the removed module required is still locked")
	}
	removed := 0
	for _, ch := range res.Changes {
		if ch.Kind == lockfile.Removed {
			removed++
		}
	}
	if removed != 3 {
		t.Errorf("changes %v: want 3 removals (vpc, vpc.subnets, null)", res.Changes)
	}
	b, err := os.ReadFile(filepath.Join(dir, ".terraform", "modules", "modules.json"))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"Modules":[{"Key":"","Source":"","Dir":"."},{"Key":"app","Source":"./modules/app","Dir":"modules/app"}]}`; string(b) != want {
		t.Errorf("modules.json = %s, want %s", b, want)
	}
	// The directory of the removed call stays, as tofu 1.12.6 leaves it
	// (checked: after a call's removal, "tofu init" keeps
	// .terraform/modules/NAME): an install deletes nothing it does not
	// replace.
	if _, err := os.Stat(filepath.Join(dir, ".terraform", "modules", "vpc")); err != nil {
		t.Errorf("the removed call's directory was deleted: %v", err)
	}
}

func TestInitReadOnly(t *testing.T) {
	dir := newConfig(t)
	c := openCache(t)
	initAndWrite(t, install.Options{Dir: dir, Source: staticFixtures(), Cache: c})
	// Unchanged: read-only succeeds.
	if _, err := install.Init(context.Background(), install.Options{Dir: dir, Source: staticFixtures(), Cache: c, ReadOnly: true}); err != nil {
		t.Fatalf("read-only init of an up-to-date configuration: %v", err)
	}
	// A new provider would change the lock: refused, nothing installed.
	writeFiles(t, dir, map[string]string{"extra.tf": `terraform {
  required_providers {
    null = { source = "` + host + `/hashicorp/null" }
  }
}
resource "null_resource" "x" {}
`})
	writeFiles(t, dir, map[string]string{"main.tf": strings.Replace(rootConfig, `module "vpc"`, `module "vpc2"`, 1)})
	before := snapshot(t, dir)
	_, err := install.Init(context.Background(), install.Options{Dir: dir, Source: staticFixtures(), Cache: c, ReadOnly: true})
	var lc *install.LockChangedError
	if !errors.As(err, &lc) || len(lc.Changes) == 0 {
		t.Fatalf("read-only init with a changed configuration: err = %v, want *install.LockChangedError", err)
	}
	if after := snapshot(t, dir); after != before {
		t.Error("a refused read-only init changed the configuration directory")
	}
}

func TestInitConcurrentSharedCache(t *testing.T) {
	static := staticFixtures()
	src := &counting{src: static}
	c := openCache(t)
	const n = 8
	dirs := make([]string, n)
	for i := range dirs {
		dirs[i] = newConfig(t)
	}
	var wg sync.WaitGroup
	results := make([]*install.Result, n)
	errs := make([]error, n)
	for i := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = install.Init(context.Background(), install.Options{Dir: dirs[i], Source: src, Cache: c})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("init %d: %v", i, err)
		}
	}
	for i := 1; i < n; i++ {
		if !lockfile.Equal(results[0].Lock, results[i].Lock) {
			t.Errorf("init %d locked differently from init 0", i)
		}
	}
	// 3 providers for this platform, 2 modules: each fetched once for all.
	if got := src.fetches.Load(); got != 5 {
		t.Errorf("%d fetches for %d concurrent inits sharing a cache, want 5", got, n)
	}
	downloads := 0
	for _, r := range results {
		downloads += r.Downloads
	}
	if downloads != 5 {
		t.Errorf("results report %d downloads in total, want 5", downloads)
	}
}

func TestProvidersLockAllPlatforms(t *testing.T) {
	dir := newConfig(t)
	static := staticFixtures()
	res, err := install.Init(context.Background(), install.Options{Dir: dir, Source: static, ProvidersLock: true, Platforms: testPlats})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".terraform")); !os.IsNotExist(err) {
		t.Errorf("providers lock installed something: %v", err)
	}
	for _, sp := range static.Providers {
		if sp.Addr != randAddr {
			continue
		}
		h, _ := sourcetest.H1(sp.Files)
		if !containsHash(res.Lock.ProviderHashes(randAddr), h) {
			t.Errorf("random hashes %v lack %s's %s", res.Lock.ProviderHashes(randAddr), sp.Platform, h)
		}
	}
}

func TestCheckInconsistent(t *testing.T) {
	dir := newConfig(t)
	initAndWrite(t, install.Options{Dir: dir, Source: staticFixtures(), Cache: openCache(t)})
	writeFiles(t, dir, map[string]string{"main.tf": strings.Replace(rootConfig, `version = "~> 5.0"`, `version = "~> 4.0"`, 1)})
	_, err := install.Check(context.Background(), install.CheckOptions{Dir: dir})
	var ie *install.InconsistentLockError
	if !errors.As(err, &ie) || len(ie.Problems) != 1 {
		t.Fatalf("Check = %v, want one inconsistency", err)
	}
	want := `provider ` + awsAddr.String() + `: locked version selection 5.1.0 doesn't match the updated version constraints "~> 4.0"`
	if ie.Problems[0].Message != want {
		t.Errorf("problem = %q, want %q", ie.Problems[0].Message, want)
	}
}

func TestCheckTamperedInstall(t *testing.T) {
	dir := newConfig(t)
	res := initAndWrite(t, install.Options{Dir: dir, Source: staticFixtures(), Cache: openCache(t)})
	var awsDir string
	for _, p := range res.Providers {
		if p.Package.Addr == awsAddr {
			awsDir = p.Dir
		}
	}
	if err := os.WriteFile(filepath.Join(awsDir, "terraform-provider-aws_v5.1.0"), []byte("changed"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := install.Check(context.Background(), install.CheckOptions{Dir: dir})
	var pm *install.PackageMismatchError
	if !errors.As(err, &pm) {
		t.Fatalf("Check = %v, want *install.PackageMismatchError", err)
	}
	// OpenTofu's text (internal/command/meta_providers.go): address,
	// version and the providers directory.
	want := "the cached package for " + awsAddr.String() + " 5.1.0 (in " + filepath.Join(dir, ".terraform", "providers") + ") does not match any of the checksums recorded in the dependency lock file"
	if pm.Error() != want {
		t.Errorf("message\n got %q\nwant %q", pm.Error(), want)
	}
	if pm.PackageDir != awsDir {
		t.Errorf("PackageDir = %q, want %q", pm.PackageDir, awsDir)
	}
	var mm *hash.MismatchError
	if !errors.As(err, &mm) {
		t.Errorf("error does not wrap *hash.MismatchError")
	}
}

// TestCheckEditedLock: a lock file edited to a version its own recorded
// constraints exclude gives OpenTofu's other wording, and a provider that is
// not installed gives "there is no package for ... cached in ...".
func TestCheckEditedLock(t *testing.T) {
	dir := newConfig(t)
	res := initAndWrite(t, install.Options{Dir: dir, Source: staticFixtures(), Cache: openCache(t)})
	lf := res.Lock.Clone()
	lf.Provider(awsAddr).Version = versions.MustParse("4.9.0")
	_, err := install.Check(context.Background(), install.CheckOptions{Dir: dir, Lock: lf})
	var ie *install.InconsistentLockError
	if !errors.As(err, &ie) || len(ie.Problems) != 1 {
		t.Fatalf("Check = %v, want one inconsistency", err)
	}
	want := `provider ` + awsAddr.String() + `: version constraints "~> 5.0" don't match the locked version selection 4.9.0`
	if ie.Problems[0].Message != want {
		t.Errorf("problem = %q, want %q", ie.Problems[0].Message, want)
	}

	if err := os.RemoveAll(filepath.Join(dir, ".terraform", "providers", host, "hashicorp", "random")); err != nil {
		t.Fatal(err)
	}
	_, err = install.Check(context.Background(), install.CheckOptions{Dir: dir})
	var ni *install.NotInstalledError
	if !errors.As(err, &ni) {
		t.Fatalf("Check = %v, want *install.NotInstalledError", err)
	}
	want = "there is no package for " + randAddr.String() + " 3.6.0 cached in " + filepath.Join(dir, ".terraform", "providers")
	if ni.Error() != want {
		t.Errorf("message\n got %q\nwant %q", ni.Error(), want)
	}
}

func TestInitPluginCacheDir(t *testing.T) {
	dir := newConfig(t)
	plugins := t.TempDir()
	res := initAndWrite(t, install.Options{Dir: dir, Source: staticFixtures(), Cache: openCache(t), PluginCacheDir: plugins})
	pkgDir := filepath.Join(dir, ".terraform", "providers", host, "hashicorp", "aws", "5.1.0", source.CurrentPlatform.String())
	fi, err := os.Lstat(pkgDir)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is not a link into the plugin cache: %v %v", pkgDir, fi, err)
	}
	if _, err := os.Stat(filepath.Join(plugins, host, "hashicorp", "aws", "5.1.0", source.CurrentPlatform.String(), "terraform-provider-aws_v5.1.0")); err != nil {
		t.Errorf("provider not in the plugin cache: %v", err)
	}
	if _, err := install.Check(context.Background(), install.CheckOptions{Dir: dir}); err != nil {
		t.Errorf("Check through plugin cache links: %v", err)
	}
	// A second configuration links to the same packages.
	dir2 := newConfig(t)
	res2, err := install.Init(context.Background(), install.Options{Dir: dir2, Source: staticFixtures(), Cache: openCache(t), PluginCacheDir: plugins})
	if err != nil {
		t.Fatal(err)
	}
	if !lockfile.Equal(res.Lock, res2.Lock) {
		t.Error("the second configuration locked differently")
	}
}
