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
	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source"
)

// unverifiableLock installs registryOnlyConfig and rewrites its lock file
// so that the entries of the provider and of the module (those whose
// hashes are replaced: nil leaves them) hold only the given hashes.
func unverifiableLock(t *testing.T, w *installtest.World, provider, module []hash.Hash) string {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": registryOnlyConfig})
	initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: openCache(t)})
	file := filepath.Join(dir, install.LockFileName)
	lf, err := lockfile.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if provider != nil {
		lf.Provider(tfaddr.MustParseProviderSource(installtest.RegistryHost + "/acme/cloud")).Hashes = provider
	}
	if module != nil {
		lf.Module("vpc").Hashes = module
	}
	if err := os.WriteFile(file, lf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	freshMachine(t, dir)
	return dir
}

// verifiedDetails returns the detail of each EventVerified, by package.
func verifiedDetails(ev []source.Event) map[string]string {
	out := map[string]string{}
	for _, e := range ev {
		if e.Kind == source.EventVerified && e.Package != nil {
			out[e.Package.String()] = e.Detail
		}
	}
	return out
}

// TestUnverifiableEntryNeverMatches is the regression test for a lock
// entry whose only hashes are of a scheme tflock cannot compute (h9:), or
// that has none: nothing was compared, so nothing "matches the lock
// file". In read-only mode such a module entry is refused; a provider is
// accepted with the hashes warning, as tofu 1.12.6 does.
func TestUnverifiableEntryNeverMatches(t *testing.T) {
	w := startWorldWith(t, installtest.Options{NoGit: true})
	h9 := []hash.Hash{"h9:whatever"}
	t.Run("events", func(t *testing.T) {
		dir := unverifiableLock(t, w, h9, h9)
		rec := &recorder{}
		res, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: openCache(t), Events: rec})
		if err != nil {
			t.Fatal(err)
		}
		details := verifiedDetails(rec.take())
		if len(details) == 0 {
			t.Fatal("no EventVerified")
		}
		for pkg, d := range details {
			if strings.Contains(d, "matches") {
				t.Errorf("%s: %q, but nothing was compared", pkg, d)
			}
			if !strings.Contains(d, "nothing in it could be checked") {
				t.Errorf("%s: %q, want it said that nothing could be verified", pkg, d)
			}
		}
		if len(res.Changes) == 0 {
			t.Error("the h1: hashes computed were not recorded")
		}
	})
	for name, module := range map[string][]hash.Hash{"h9": h9, "none": {}} {
		t.Run("read-only module "+name, func(t *testing.T) {
			dir := unverifiableLock(t, w, nil, module)
			_, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: openCache(t), ReadOnly: true})
			var lc *install.LockChangedError
			if !errors.As(err, &lc) || !strings.Contains(err.Error(), `module "vpc"`) || !strings.Contains(err.Error(), "no h1: or zh: hash") {
				t.Fatalf("read-only Init: %v, want the module refused as unverifiable", err)
			}
			if _, err := os.Stat(filepath.Join(dir, ".terraform")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a refused run installed something: %v", err)
			}
		})
	}
	t.Run("read-only provider h9", func(t *testing.T) {
		dir := unverifiableLock(t, w, h9, nil)
		rec := &recorder{}
		res, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: openCache(t), ReadOnly: true, Events: rec})
		if err != nil {
			t.Fatalf("read-only Init: %v; tofu 1.12.6 installs a provider whose lock has no hash it can check, and warns", err)
		}
		if len(res.Warnings) == 0 || !strings.Contains(strings.Join(res.Warnings, "\n"), "Provider lock file not updated") {
			t.Errorf("warnings %q, want tofu's", res.Warnings)
		}
		for pkg, d := range verifiedDetails(rec.take()) {
			if strings.Contains(pkg, "acme/cloud") && strings.Contains(d, "matches") {
				t.Errorf("%s: %q", pkg, d)
			}
		}
	})
}
