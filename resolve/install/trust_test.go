package install_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source"
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
			before := w.Requests()
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
			if got := w.Requests() - before; got != 0 {
				t.Errorf("the run asked the registry %d times, want 0 (every platform's package is cached)", got)
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
