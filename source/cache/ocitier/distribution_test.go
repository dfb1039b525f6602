package ocitier_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"oras.land/oras-go/v2/registry/remote"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/internal/distributiontest"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/cache/ocitier"
	"github.com/tflock/tflock/source/oci"
)

// TestDistribution runs the tier against the real CNCF distribution
// registry over TLS: four machines at once on an empty prefix, each
// writing its platform of one provider version, one shared provider and
// one module; the layout is OpenTofu's, every blob verifies, everything
// reads back, a second write is a no-op; then the registry stops, which
// costs an ErrUnavailable and nothing else.
func TestDistribution(t *testing.T) {
	reg := distributiontest.Start(t)
	ctx := context.Background()
	newTier := func() *ocitier.Tier {
		tr, err := ocitier.New("oci://"+reg.Host+"/fleet", ocitier.Options{OCI: oci.Options{HTTPClient: reg.Client()}})
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	repoOf := func(name string) *remote.Repository {
		r, err := remote.NewRepository(reg.Host + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		r.Client = reg.Client()
		return r
	}

	plats := []source.Platform{linux, darwin, win, arm}
	shared := provider(t, "hashicorp/random", "3.6.0", linux)
	sharedZip, sharedHashes := providerZip(t, shared)
	modZip, modH1 := moduleZip(t, moduleTree(t, map[string]string{"main.tf": "# net\n", "scripts/x.sh": "#!/bin/sh\n"}))
	mod := source.ModulePackage{Source: "git::https://git.example.test/net.git", Version: mustVersion(t, "1.0.0")}

	want := map[source.Platform]hash.Hash{}
	errs := make([]error, len(plats))
	var wg sync.WaitGroup
	for i, plat := range plats {
		pkg := provider(t, "hashicorp/aws", "5.1.0+ent", plat)
		zip, hashes := providerZip(t, pkg)
		want[plat] = zhOf(hashes)
		tier := newTier()
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = errors.Join(
				tier.Put(ctx, pkg, cache.RemoteArchive{Hashes: hashes}, zip),
				tier.Put(ctx, shared, cache.RemoteArchive{Hashes: sharedHashes}, sharedZip),
				tier.Put(ctx, mod, cache.RemoteArchive{Hashes: []hash.Hash{modH1}}, modZip),
			)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("machine %d: %v", i, err)
		}
	}
	if got := checkProviderVersion(t, repoOf(providerRepository), "5.1.0_ent"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("index holds %v, want %v", got, want)
	}
	if got := checkProviderVersion(t, repoOf("fleet/registry.example.test/hashicorp/random"), "3.6.0"); len(got) != 1 || got[linux] != zhOf(sharedHashes) {
		t.Fatalf("shared provider: %v", got)
	}
	checkModule(t, repoOf("fleet/tflock/modules"), modH1, "")

	reader := newTier()
	for _, plat := range plats {
		out := filepath.Join(t.TempDir(), "p.zip")
		a, err := reader.Get(ctx, provider(t, "hashicorp/aws", "5.1.0+ent", plat), nil, out)
		if err != nil || a.Hashes[0] != want[plat] {
			t.Fatalf("get %s: %v %v", plat, a.Hashes, err)
		}
	}
	out := filepath.Join(t.TempDir(), "m.zip")
	if _, err := reader.Get(ctx, mod, []hash.Hash{modH1}, out); err != nil || !sameFile(t, modZip, out) {
		t.Fatalf("module: %v", err)
	}
	if err := reader.Put(ctx, shared, cache.RemoteArchive{Hashes: sharedHashes}, sharedZip); err != nil {
		t.Fatalf("re-put: %v", err)
	}

	reg.Stop()
	if _, err := reader.Get(ctx, provider(t, "hashicorp/aws", "5.1.0+ent", linux), nil, filepath.Join(t.TempDir(), "x.zip")); !errors.Is(err, ocitier.ErrUnavailable) {
		t.Fatalf("registry stopped: %v, want ErrUnavailable", err)
	}
}
