package providercache_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/internal/testdir"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/providercache"
	"github.com/tflock/tflock/source/sourcetest"
)

const cachedir = "internal/providercache/testdata/cachedir"

func ppkg(addr, v, p string) source.ProviderPackage {
	plat, err := source.ParsePlatform(p)
	if err != nil {
		panic(err)
	}
	return source.ProviderPackage{Addr: tfaddr.MustParseProviderSource(addr), Version: versions.MustParse(v), Platform: plat}
}

func TestAllReadsOpenTofuCacheDir(t *testing.T) {
	vec := testdir.HashVectors(t)
	d := providercache.NewDir(testdir.OpenTofu(t, cachedir))
	all, err := d.All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, i := range all {
		got = append(got, i.Package.String())
		rel, err := filepath.Rel(testdir.OpenTofu(t), i.Dir)
		if err != nil {
			t.Fatal(err)
		}
		want := vec[filepath.ToSlash(rel)].H1
		h, err := i.Hash()
		if err != nil || string(h) != want {
			t.Errorf("%s: hash %s (%v), HASH-VECTORS.tsv says %s", i.Package, h, err, want)
		}
	}
	// The unpacked packages of OpenTofu's providercache test directory; the
	// zip files and the malformed entries there are not installed packages.
	want := []string{
		"opentf.example.com/awesomecorp/happycloud 0.1.0-alpha.2 darwin_amd64",
		"registry.opentofu.org/-/legacy 1.0.0 linux_amd64",
		"registry.opentofu.org/hashicorp/null 2.0.0 darwin_amd64",
		"registry.opentofu.org/hashicorp/null 2.0.0 linux_amd64",
		"registry.opentofu.org/hashicorp/null 2.0.0 windows_amd64",
		"registry.opentofu.org/hashicorp/random 1.2.0 linux_amd64",
		"registry.opentofu.org/hashicorp/random-beta 1.2.0 linux_amd64",
		"registry.opentofu.org/missing/executable 2.0.0 linux_amd64",
	}
	if !slices.Equal(got, want) {
		t.Errorf("installed:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestExecutable(t *testing.T) {
	d := providercache.NewDir(testdir.OpenTofu(t, cachedir))
	tests := map[string]string{
		"registry.opentofu.org/hashicorp/null 2.0.0 linux_amd64":               "terraform-provider-null",
		"registry.opentofu.org/hashicorp/null 2.0.0 windows_amd64":             "terraform-provider-null.exe",
		"opentf.example.com/awesomecorp/happycloud 0.1.0-alpha.2 darwin_amd64": "terraform-provider-happycloud",
	}
	for in, want := range tests {
		f := strings.Fields(in)
		inst, err := d.Get(ppkg(f[0], f[1], f[2]))
		if err != nil {
			t.Fatal(err)
		}
		exe, err := inst.Executable()
		if err != nil || filepath.Base(exe) != want {
			t.Errorf("%s: %q, %v; want %s", in, exe, err, want)
		}
	}
	inst, err := d.Get(ppkg("registry.opentofu.org/missing/executable", "2.0.0", "linux_amd64"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = inst.Executable()
	var nee *providercache.NoExecutableError
	if !errors.As(err, &nee) || !strings.Contains(err.Error(), `"terraform-provider-executable"`) {
		t.Errorf("got %v, want a NoExecutableError naming the expected prefix", err)
	}
	if _, err := d.Get(ppkg("registry.opentofu.org/hashicorp/null", "2.1.0", "linux_amd64")); !errors.Is(err, providercache.ErrNotInstalled) {
		t.Errorf("a packed zip counts as installed: %v", err)
	}
}

func staticNull() *sourcetest.Static {
	return &sourcetest.Static{Providers: []sourcetest.StaticProvider{{
		Addr: tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/null"), Version: versions.MustParse("3.2.0"),
		Platform: source.Platform{OS: "linux", Arch: "amd64"},
		Files:    map[string]string{"terraform-provider-null_v3.2.0_x5": "#!/bin/sh\n", "LICENSE": "text"},
	}}}
}

func TestInstallAndLink(t *testing.T) {
	ctx := context.Background()
	pkg := ppkg("registry.opentofu.org/hashicorp/null", "3.2.0", "linux_amd64")
	cache := providercache.NewDir(filepath.Join(t.TempDir(), "plugin-cache"))
	inst, fetched, err := cache.Install(ctx, staticNull(), pkg)
	if err != nil {
		t.Fatal(err)
	}
	wantDir := filepath.Join(cache.Root(), "registry.opentofu.org", "hashicorp", "null", "3.2.0", "linux_amd64")
	if inst.Dir != wantDir || fetched.Dir != wantDir {
		t.Errorf("installed in %s (fetched %s), want %s", inst.Dir, fetched.Dir, wantDir)
	}
	h, err := inst.Hash()
	if err != nil || !slices.Contains(fetched.Hashes, h) {
		t.Errorf("installed hash %s (%v) is not the fetched %v", h, err, fetched.Hashes)
	}
	exe, err := inst.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(exe); err != nil || info.Mode().Perm()&0o100 == 0 {
		t.Errorf("executable %s mode %v (%v)", exe, info.Mode(), err)
	}
	entries, _ := os.ReadDir(filepath.Dir(wantDir))
	if len(entries) != 1 {
		t.Errorf("temporary directories left behind: %v", entries)
	}

	work := providercache.NewDir(filepath.Join(t.TempDir(), ".terraform", "providers"))
	linked, err := work.LinkFrom(ctx, cache, pkg)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(linked.Dir); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("%s is not a symbolic link (%v)", linked.Dir, err)
	}
	if lh, err := linked.Hash(); err != nil || lh != h {
		t.Errorf("linked hash %s (%v), want %s", lh, err, h)
	}
	all, err := work.All(ctx)
	if err != nil || len(all) != 1 || all[0].Package != pkg {
		t.Errorf("All after link: %v %v", all, err)
	}
	if _, err := linked.Executable(); err != nil {
		t.Error(err)
	}
	// Relinking replaces the link.
	if _, err := work.LinkFrom(ctx, cache, pkg); err != nil {
		t.Fatal(err)
	}
}

func TestInstallFailureLeavesNothing(t *testing.T) {
	d := providercache.NewDir(t.TempDir())
	pkg := ppkg("registry.opentofu.org/hashicorp/null", "9.9.9", "linux_amd64")
	_, _, err := d.Install(context.Background(), staticNull(), pkg)
	if !errors.Is(err, source.ErrVersionNotFound) {
		t.Fatalf("got %v", err)
	}
	typeDir := filepath.Dir(filepath.Dir(d.PackageDir(pkg)))
	var left []string
	_ = filepath.WalkDir(typeDir, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			left = append(left, p)
		}
		return nil
	})
	if len(left) != 0 {
		t.Errorf("files left: %v", left)
	}
	if _, _, err := d.Install(context.Background(), staticNull(), source.ProviderPackage{}); err == nil {
		t.Error("an incomplete package was accepted")
	}
}

func TestInstallConcurrent(t *testing.T) {
	d := providercache.NewDir(t.TempDir())
	pkg := ppkg("registry.opentofu.org/hashicorp/null", "3.2.0", "linux_amd64")
	var wg sync.WaitGroup
	hashes := make([]hash.Hash, 6)
	for i := range hashes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			inst, _, err := d.Install(context.Background(), staticNull(), pkg)
			if err != nil {
				t.Error(err)
				return
			}
			hashes[i], _ = inst.Hash()
		}()
	}
	wg.Wait()
	inst, err := d.Get(pkg)
	if err != nil {
		t.Fatal(err)
	}
	h, err := inst.Hash()
	if err != nil {
		t.Fatal(err)
	}
	for _, got := range hashes {
		if got != "" && got != h {
			t.Errorf("hash %s, want %s", got, h)
		}
	}
}

func TestInstallCached(t *testing.T) {
	ctx := context.Background()
	pkg := ppkg("registry.opentofu.org/hashicorp/null", "3.2.0", "linux_amd64")
	cache := providercache.NewDir(filepath.Join(t.TempDir(), "cache"))
	work := providercache.NewDir(filepath.Join(t.TempDir(), "providers"))

	inst, fetched, err := work.InstallCached(ctx, cache, staticNull(), pkg, nil)
	if err != nil || fetched == nil {
		t.Fatalf("first install: %v, fetched %v", err, fetched)
	}
	h1 := fetched.Hashes[0]
	// Cache hit: nothing is fetched.
	if _, fetched, err = work.InstallCached(ctx, cache, staticNull(), pkg, []hash.Hash{h1}); err != nil || fetched != nil {
		t.Errorf("cache hit: %v, fetched %v", err, fetched)
	}
	// A cached copy that the lock file does not vouch for is replaced.
	other := hash.Hash("h1:" + strings.Repeat("A", 43) + "=")
	if _, fetched, err = work.InstallCached(ctx, cache, staticNull(), pkg, []hash.Hash{other}); err != nil || fetched == nil {
		t.Errorf("cache mismatch: %v, fetched %v", err, fetched)
	}
	if h, err := inst.Hash(); err != nil || h != h1 {
		t.Errorf("installed hash %s (%v), want %s", h, err, h1)
	}
}

func TestInstallDirKeepsHash(t *testing.T) {
	// OpenTofu's installer test locks beep-provider with this h1; a copy
	// installed into the layout must keep it.
	const rel = "internal/providercache/testdata/beep-provider"
	vec := testdir.HashVectors(t)
	d := providercache.NewDir(t.TempDir())
	pkg := ppkg("example.com/foo/beep", "2.1.0", "linux_amd64")
	inst, err := d.InstallDir(context.Background(), pkg, testdir.OpenTofu(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	h, err := inst.Hash()
	if err != nil || string(h) != vec[rel].H1 {
		t.Errorf("hash %s (%v), want %s", h, err, vec[rel].H1)
	}
	if exe, err := inst.Executable(); err != nil || filepath.Base(exe) != "terraform-provider-beep" {
		t.Errorf("executable %q, %v", exe, err)
	}
}
