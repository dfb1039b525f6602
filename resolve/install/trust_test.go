package install_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/registry/registrytest"
)

const providersOnlyConfig = `terraform {
  required_providers {
    cloud = {
      source  = "registry.example.test/acme/cloud"
      version = "~> 1.0"
    }
  }
}
`

// TestInstallFromMultiPlatformCacheUsesOwnPlatform is the regression test
// for a cache lookup that took the first cached h1: of the lock file's
// hashes whatever its platform: after "providers lock" for two platforms,
// a normal run from the same cache installed the other platform's
// executable and reported that it matched the lock file.
func TestInstallFromMultiPlatformCacheUsesOwnPlatform(t *testing.T) {
	w := startWorld(t)
	plats := []source.Platform{{OS: "linux", Arch: "amd64"}, {OS: "darwin", Arch: "arm64"}}
	for _, p := range installtest.Platforms() {
		pl, err := source.ParsePlatform(p)
		if err != nil {
			t.Fatal(err)
		}
		if pl != plats[0] && pl != plats[1] && len(plats) < 3 {
			plats = append(plats, pl)
		}
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": providersOnlyConfig})
	c := openCache(t)
	initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: c, ProvidersLock: true, Platforms: plats})

	for _, plat := range plats {
		t.Run(plat.String(), func(t *testing.T) {
			work := t.TempDir()
			for _, f := range []string{"main.tf", install.LockFileName} {
				b, err := os.ReadFile(filepath.Join(dir, f))
				if err != nil {
					t.Fatal(err)
				}
				writeFiles(t, work, map[string]string{f: string(b)})
			}
			res, err := install.Init(context.Background(), install.Options{Dir: work, Source: w.Source, Cache: c, Platform: plat})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Providers) != 1 {
				t.Fatalf("installed %d providers, want 1", len(res.Providers))
			}
			exe := filepath.Join(res.Providers[0].Dir, "terraform-provider-cloud_v1.1.0")
			b, err := os.ReadFile(exe)
			if err != nil {
				t.Fatal(err)
			}
			if want := " " + plat.String() + " (registrytest)"; !strings.Contains(string(b), want) {
				t.Errorf("installed for %s an executable built for another platform: %q", plat, firstLine(string(b), 2))
			}
			// Providers lock keeps no package (as tofu's): it hashes
			// each as it downloads it, so the init of each platform,
			// this machine's too, downloads its own package, once.
			if res.Downloads != 1 {
				t.Errorf("%d downloads, want 1 (providers lock hashes every platform's package, stores none)", res.Downloads)
			}
		})
	}
}

func firstLine(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

const registryOnlyConfig = `terraform {
  required_providers {
    cloud = {
      source  = "registry.example.test/acme/cloud"
      version = "~> 1.0"
    }
  }
}

module "vpc" {
  source  = "registry.example.test/acme/vpc/cloud"
  version = "~> 1.0"
}
`

// republished is the default world's fixtures with acme/cloud 1.1.0 and
// the module acme/vpc/cloud 1.1.0 published again with other contents
// (validly signed: the registry itself republished them).
func republished() registrytest.Fixtures {
	fx := installtest.DefaultFixtures()
	for i := range fx.Providers {
		for j := range fx.Providers[i].Versions {
			if fx.Providers[i].Addr == installtest.RegistryHost+"/acme/cloud" && fx.Providers[i].Versions[j].Version == "1.1.0" {
				fx.Providers[i].Versions[j].Size = 2048
			}
		}
	}
	for i := range fx.Modules {
		for j := range fx.Modules[i].Versions {
			if fx.Modules[i].Versions[j].Version == "1.1.0" {
				fx.Modules[i].Versions[j].Files["README.md"] = "republished\n"
			}
		}
	}
	return fx
}

// TestUpgradeVerifiesUnchangedVersions is the regression test for
// -upgrade accepting a republished package: when the upgrade selects the
// version already locked, what is fetched must still match the lock's
// hashes (only a version that changed gets fresh hashes), for providers
// and modules alike.
func TestUpgradeVerifiesUnchangedVersions(t *testing.T) {
	if err := installtest.HaveGit(); err != nil {
		t.Skip(err)
	}
	orig, err := installtest.Start(context.Background(), installtest.Options{NoGit: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(orig.Close)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": registryOnlyConfig})
	initAndWrite(t, install.Options{Dir: dir, Source: orig.Source, Cache: openCache(t)})
	lockBefore, err := os.ReadFile(filepath.Join(dir, install.LockFileName))
	if err != nil {
		t.Fatal(err)
	}

	fx := republished()
	again, err := installtest.Start(context.Background(), installtest.Options{NoGit: true, Fixtures: &fx})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(again.Close)
	for _, tc := range []struct {
		name string
		opts install.Options
		call string
	}{
		{"provider", install.Options{Resolve: resolve.Options{UpgradeProviders: []tfaddr.Provider{tfaddr.MustParseProviderSource(installtest.RegistryHost + "/acme/cloud")}}}, ""},
		{"module", install.Options{Resolve: resolve.Options{UpgradeModules: []string{"vpc"}}}, "vpc"},
		{"all", install.Options{Resolve: resolve.Options{Upgrade: true}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			opts.Dir, opts.Source, opts.Cache = dir, again.Source, openCache(t)
			freshMachine(t, dir)
			before := snapshot(t, dir)
			res, err := install.Init(context.Background(), opts)
			if err == nil {
				t.Fatalf("-upgrade accepted a republished package; lock:\n%s", res.Lock.Bytes())
			}
			var ce *install.ChecksumError
			if !errors.As(err, &ce) || !errors.Is(err, source.ErrChecksumMismatch) {
				t.Fatalf("error %v, want a *install.ChecksumError", err)
			}
			if tc.call != "" && ce.Call != tc.call {
				t.Errorf("checksum error for %q, want module call %q", ce.Call, tc.call)
			}
			if len(ce.Want) == 0 {
				t.Errorf("checksum error lists no expected hashes")
			}
			if after := snapshot(t, dir); after != before {
				t.Error("a failed init changed the configuration directory")
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(dir, install.LockFileName)); string(b) != string(lockBefore) {
		t.Error("the lock file changed")
	}
}

// TestInitSweepsKilledInstall: what an install killed between staging and
// swapping leaves in the install directory (its staging directories and
// the previous directory moved aside, by the names the install gives them)
// is removed by the next run, which installs normally.
func TestInitSweepsKilledInstall(t *testing.T) {
	w := startWorld(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": registryOnlyConfig})
	c := openCache(t)
	initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: c})
	tf := filepath.Join(dir, ".terraform")
	for _, debris := range []string{".tflock-providers-123456", ".tflock-modules-654321", ".tflock-providers-777.old"} {
		writeFiles(t, filepath.Join(tf, debris), map[string]string{"half/written": "x"})
	}
	initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: c})
	entries, err := os.ReadDir(tf)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.Name() != ".tflock.lock" {
			names = append(names, e.Name())
		}
	}
	if strings.Join(names, " ") != "modules providers" {
		t.Errorf(".terraform holds %v after the next run, want modules and providers only", names)
	}
}

// TestInitCancelledLeavesNothing cancels Init while a package download is
// under way: the run ends with the context's error and leaves no file in
// the configuration directory, the install directory or the cache's tmp/.
func TestInitCancelledLeavesNothing(t *testing.T) {
	w := startWorld(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": registryOnlyConfig})
	before := snapshot(t, dir)
	cacheDir := t.TempDir()
	c, err := cache.Open(cacheDir, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := source.EventsFunc(func(e source.Event) {
		if e.Kind == source.EventFetchStarted {
			if _, ok := e.Package.(source.ProviderPackage); ok {
				cancel()
			}
		}
	})
	_, err = install.Init(ctx, install.Options{Dir: dir, Source: w.Source, Cache: c, Events: events})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Init: %v, want context.Canceled", err)
	}
	if after := snapshot(t, dir); after != before {
		t.Errorf("a cancelled init changed the configuration directory:\n%s", after)
	}
	if left, _ := os.ReadDir(filepath.Join(cacheDir, "tmp")); len(left) != 0 {
		t.Errorf("the cache's tmp/ holds %d entries after a cancelled run", len(left))
	}
}

// TestChecksumMessage: a mismatch against the lock file names the package,
// what the lock file expects, what was got, and what to do; against the
// origin (no lock entry) it never claims a lock file recorded anything.
func TestChecksumMessage(t *testing.T) {
	orig, err := installtest.Start(context.Background(), installtest.Options{NoGit: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(orig.Close)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": registryOnlyConfig})
	first := initAndWrite(t, install.Options{Dir: dir, Source: orig.Source, Cache: openCache(t)})

	fx := republished()
	again, err := installtest.Start(context.Background(), installtest.Options{NoGit: true, Fixtures: &fx})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(again.Close)
	freshMachine(t, dir)
	_, err = install.Init(context.Background(), install.Options{Dir: dir, Source: again.Source, Cache: openCache(t)})
	var ce *install.ChecksumError
	if !errors.As(err, &ce) {
		t.Fatalf("Init against the republished registry: %v, want a *install.ChecksumError", err)
	}
	msg := err.Error()
	wantHashes := first.Lock.ModuleHashes("vpc")
	if p, ok := ce.Package.(source.ProviderPackage); ok {
		wantHashes = first.Lock.ProviderHashes(p.Addr)
	}
	for _, want := range []string{"dependency lock file", "Expected (lock file): ", "Got:", "Only if the publisher confirms the change, remove"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	for _, h := range wantHashes {
		if !strings.Contains(msg, h.String()) {
			t.Errorf("message lacks the locked %s:\n%s", h, msg)
		}
	}
	if len(ce.Got) == 0 {
		t.Errorf("no computed hashes in the error")
	}
	for _, h := range ce.Got {
		if !strings.Contains(msg, h.String()) {
			t.Errorf("message lacks the computed %s:\n%s", h, msg)
		}
	}
}

// TestFirstInstallChecksCachedEntryAgainstOrigin: with no lock file, a
// provider package found in the cache is checked against the checksums the
// registry signs before it is trusted; a poisoned entry is refused, with a
// message that does not speak of a lock file.
func TestFirstInstallChecksCachedEntryAgainstOrigin(t *testing.T) {
	w, err := installtest.Start(context.Background(), installtest.Options{NoGit: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": providersOnlyConfig})
	c := openCache(t)
	pkg := source.ProviderPackage{Addr: tfaddr.MustParseProviderSource(installtest.RegistryHost + "/acme/cloud"), Version: mustV("1.1.0"), Platform: source.CurrentPlatform}
	// A poisoned entry: other contents, with a zh: of its own.
	_, _, err = c.Fill(context.Background(), pkg, nil, func(ctx context.Context, d string) (*source.Fetched, error) {
		writeFiles(t, d, map[string]string{"terraform-provider-cloud_v1.1.0": "#!/bin/sh\necho evil\n"})
		return &source.Fetched{Hashes: []hash.Hash{"zh:0000000000000000000000000000000000000000000000000000000000000000"}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	_, err = install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: c})
	var ce *install.ChecksumError
	if !errors.As(err, &ce) || !ce.Origin || !errors.Is(err, source.ErrChecksumMismatch) {
		t.Fatalf("Init with a poisoned cache entry and no lock file: %v, want a *install.ChecksumError against the origin", err)
	}
	if strings.Contains(err.Error(), "lock file") {
		t.Errorf("the message speaks of a lock file, but there is none:\n%s", err)
	}
	if !strings.Contains(err.Error(), "Expected (origin): zh:") {
		t.Errorf("the message lacks the origin's checksums:\n%s", err)
	}
	if after := snapshot(t, dir); after != before {
		t.Error("a failed init changed the configuration directory")
	}
}

// TestReuseInstalledProviders is "tofu init, then tflock" on a machine
// whose cache is empty: the providers installed in .terraform/providers
// match the lock file, so they are kept as they are (no request, no
// download, no copy), and nothing tofu wrote there is deleted.
func TestReuseInstalledProviders(t *testing.T) {
	w, err := installtest.Start(context.Background(), installtest.Options{NoGit: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": providersOnlyConfig})
	first := initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: openCache(t)})
	if len(first.Providers) != 1 {
		t.Fatalf("installed %d providers, want 1", len(first.Providers))
	}
	installed := first.Providers[0].Dir
	// What tofu leaves beside its packages: its lock file per package, and
	// packages this configuration no longer uses.
	foreign := map[string]string{
		installed + ".lock": "",
		filepath.Join(dir, ".terraform", "providers", installtest.RegistryHost, "acme", "old", "0.1.0", source.CurrentPlatform.String(), "terraform-provider-old_v0.1.0"): "old\n",
	}
	for p, content := range foreign {
		writeFiles(t, filepath.Dir(p), map[string]string{filepath.Base(p): content})
	}
	before := w.Requests()
	lockBefore, _ := os.ReadFile(filepath.Join(dir, install.LockFileName))
	res := initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: openCache(t)})
	if n := w.Requests() - before; n != 0 {
		t.Errorf("the registry was asked %d times, want 0", n)
	}
	if res.Downloads != 0 || res.Listed != 0 {
		t.Errorf("downloads=%d listed=%d, want 0 and 0", res.Downloads, res.Listed)
	}
	if len(res.Providers) != 1 || !res.Providers[0].Reused || res.Providers[0].Dir != installed {
		t.Errorf("providers = %+v, want the installed package reused in place", res.Providers)
	}
	for p, content := range foreign {
		if b, err := os.ReadFile(p); err != nil || string(b) != content {
			t.Errorf("%s: %q, %v; want it kept as it was", p, b, err)
		}
	}
	if lockAfter, _ := os.ReadFile(filepath.Join(dir, install.LockFileName)); string(lockAfter) != string(lockBefore) {
		t.Errorf("the lock file changed:\n%s", lockAfter)
	}

	// An installed package that no longer matches the lock file is
	// replaced from the origin, and the foreign files stay.
	exe := filepath.Join(installed, "terraform-provider-cloud_v1.1.0")
	if err := os.Chmod(exe, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, []byte("tampered"), 0o755); err != nil {
		t.Fatal(err)
	}
	res = initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: openCache(t)})
	if res.Providers[0].Reused || res.Downloads != 1 {
		t.Errorf("a tampered install was reused (downloads=%d)", res.Downloads)
	}
	if b, _ := os.ReadFile(exe); strings.Contains(string(b), "tampered") {
		t.Error("the tampered executable is still installed")
	}
	for p := range foreign {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
}
