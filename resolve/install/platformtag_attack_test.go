package install_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/cache/ocitier"
	"github.com/tflock/tflock/source/oci"
	"github.com/tflock/tflock/source/oci/ocitest"
)

// cloudConfig requires acme/cloud at exactly version v.
func cloudConfig(v string) string {
	return "terraform {\n  required_providers {\n    cloud = { source = \"" + installtest.RegistryHost + "/acme/cloud\", version = \"" + v + "\" }\n  }\n}\n"
}

// TestAttackTierPlatformTagOfAnotherVersion: the tier's index of
// acme/cloud 1.1.0 lacks this platform (another runner wrote another
// platform's), and a hostile writer tags 1.0.0's provider-target manifest
// of this platform as 1.1.0's platform tag, which readers fall back to.
// Nothing in the tier binds the manifest to its version: the zip must be
// checked against what vouches for 1.1.0 (the origin's signed checksums
// on a first install, the lock file's hashes after), refused with a
// warning, and fetched from the origin. The same for a platform tag that
// holds the version's package of another platform, on a first install.
func TestAttackTierPlatformTagOfAnotherVersion(t *testing.T) {
	w := startWorldWith(t, installtest.Options{NoGit: true})
	srv := ocitest.New(t, ocitest.ServerOptions{})
	var mu sync.Mutex
	var warnings []string
	events := source.EventsFunc(func(e source.Event) {
		if e.Kind == source.EventWarning {
			mu.Lock()
			warnings = append(warnings, e.Detail)
			mu.Unlock()
		}
	})
	runner := func() *cache.Cache {
		tier, err := ocitier.New("oci://"+srv.Host()+"/fleet", ocitier.Options{OCI: oci.Options{PlainHTTP: true, HTTPClient: srv.Client()}})
		if err != nil {
			t.Fatal(err)
		}
		c, err := cache.Open(t.TempDir(), cache.Options{Remote: tier, Events: events})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	here := source.CurrentPlatform
	other, err := source.ParsePlatform(installtest.Platforms()[1])
	if err != nil {
		t.Fatal(err)
	}
	old := t.TempDir()
	writeFiles(t, old, map[string]string{"main.tf": cloudConfig("1.0.0")})
	initAndWrite(t, install.Options{Dir: old, Source: w.Source, Cache: runner()})
	elsewhere := t.TempDir()
	writeFiles(t, elsewhere, map[string]string{"main.tf": cloudConfig("1.1.0")})
	initAndWrite(t, install.Options{Dir: elsewhere, Source: w.Source, Cache: runner(), Platform: other})

	ctx := context.Background()
	repo, err := srv.Repository("fleet/" + installtest.RegistryHost + "/acme/cloud")
	if err != nil {
		t.Fatal(err)
	}
	staleIndex, err := repo.Resolve(ctx, "1.1.0")
	if err != nil {
		t.Fatalf("the tier holds no 1.1.0 index: %v", err)
	}
	planted, err := repo.Resolve(ctx, "tflock-1.0.0-"+here.String())
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Tag(ctx, planted, "tflock-1.1.0-"+here.String()); err != nil {
		t.Fatal(err)
	}

	// The reference: what the origin alone gives for 1.1.0.
	clean := t.TempDir()
	writeFiles(t, clean, map[string]string{"main.tf": cloudConfig("1.1.0")})
	initAndWrite(t, install.Options{Dir: clean, Source: w.Source, Cache: openCache(t)})
	want := readLock(t, clean)

	// A first install (no lock): checked against the origin's checksums.
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": cloudConfig("1.1.0")})
	warnings = nil
	initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: runner(), Events: events})
	if got := readLock(t, dir); got != want {
		t.Errorf("lock from the tier:\n%s\nwant (origin):\n%s", got, want)
	}
	if !refusedByTier(warnings) {
		t.Errorf("no warning that the tier's copy was refused: %q", warnings)
	}
	// The origin's copy, written through, took the tag back (and the
	// index lists the platform now): plant it again, and drop the platform
	// from the index by writing the other platform's index over it.
	if d, err := repo.Resolve(ctx, "tflock-1.1.0-"+here.String()); err != nil || d.Digest == planted.Digest {
		t.Errorf("the platform tag after the origin's copy was written through: %v %v", d.Digest, err)
	}
	if err := repo.Tag(ctx, planted, "tflock-1.1.0-"+here.String()); err != nil {
		t.Fatal(err)
	}
	if err := repo.Tag(ctx, staleIndex, "1.1.0"); err != nil {
		t.Fatal(err)
	}
	// With the lock, read-only, on a fresh machine.
	freshMachine(t, dir)
	warnings = nil
	if _, err := install.Init(ctx, install.Options{Dir: dir, Source: w.Source, Cache: runner(), ReadOnly: true, Events: events}); err != nil {
		t.Fatalf("read-only Init: %v", err)
	}
	if !refusedByTier(warnings) {
		t.Errorf("no warning that the tier's copy was refused: %q", warnings)
	}
	if got := readLock(t, dir); got != want {
		t.Errorf("lock changed:\n%s", got)
	}

	// The tag holds the same version's package of another platform: on a
	// first install it is checked against this platform's signed
	// checksums, never recorded as this platform's.
	foreign, err := repo.Resolve(ctx, "tflock-1.1.0-"+other.String())
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Tag(ctx, foreign, "tflock-1.1.0-"+here.String()); err != nil {
		t.Fatal(err)
	}
	if err := repo.Tag(ctx, staleIndex, "1.1.0"); err != nil {
		t.Fatal(err)
	}
	first := t.TempDir()
	writeFiles(t, first, map[string]string{"main.tf": cloudConfig("1.1.0")})
	warnings = nil
	initAndWrite(t, install.Options{Dir: first, Source: w.Source, Cache: runner(), Events: events})
	if got := readLock(t, first); got != want {
		t.Errorf("lock from another platform's tag:\n%s\nwant (origin):\n%s", got, want)
	}
	if !refusedByTier(warnings) {
		t.Errorf("no warning that the tier's copy was refused: %q", warnings)
	}
}

func refusedByTier(warnings []string) bool {
	for _, w := range warnings {
		if strings.Contains(w, "remote cache tier") && strings.Contains(w, "refused") {
			return true
		}
	}
	return false
}
