package install_test

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/source"
)

// providerFetches counts the provider packages a source is asked to fetch.
type providerFetches struct {
	source.Source
	n atomic.Int64
}

func (p *providerFetches) Fetch(ctx context.Context, pkg source.Package, dir string) (*source.Fetched, error) {
	if _, ok := pkg.(source.ProviderPackage); ok {
		p.n.Add(1)
	}
	return p.Source.Fetch(ctx, pkg, dir)
}

// TestInitReusesInstalledProviders: issue 13 item 1. Provider packages
// already installed (by tofu, terraform or an earlier run on another
// machine's cache) that match the lock file are reused with an empty cache:
// nothing is downloaded. One whose files were changed is not: it is
// downloaded again and the installed copy is repaired.
func TestInitReusesInstalledProviders(t *testing.T) {
	dir := newConfig(t)
	first := initAndWrite(t, install.Options{Dir: dir, Source: staticFixtures(), Cache: openCache(t)})

	src := &providerFetches{Source: staticFixtures()}
	res, err := install.Init(context.Background(), install.Options{Dir: dir, Source: src, Cache: openCache(t)})
	if err != nil {
		t.Fatal(err)
	}
	if n := src.n.Load(); n != 0 {
		t.Errorf("%d provider packages downloaded although installed ones match the lock file", n)
	}
	if len(res.Providers) != len(first.Providers) {
		t.Fatalf("%d providers installed, want %d", len(res.Providers), len(first.Providers))
	}
	for _, p := range res.Providers {
		if !p.CacheHit {
			t.Errorf("%s: not reused", p.Package)
		}
	}
	if len(res.Changes) != 0 {
		t.Errorf("changes %v, want none", res.Changes)
	}
	if _, err := install.Check(context.Background(), install.CheckOptions{Dir: dir}); err != nil {
		t.Errorf("Check after reuse: %v", err)
	}

	// A changed installed package is not reused.
	exe := filepath.Join(dir, ".terraform", "providers", host, "hashicorp", "aws", "5.1.0", source.CurrentPlatform.String(), "terraform-provider-aws_v5.1.0")
	if err := os.WriteFile(exe, []byte("changed"), 0o755); err != nil {
		t.Fatal(err)
	}
	src = &providerFetches{Source: staticFixtures()}
	if _, err := install.Init(context.Background(), install.Options{Dir: dir, Source: src, Cache: openCache(t)}); err != nil {
		t.Fatal(err)
	}
	if n := src.n.Load(); n != 1 {
		t.Errorf("%d provider packages downloaded, want 1 (the changed one)", n)
	}
	if _, err := install.Check(context.Background(), install.CheckOptions{Dir: dir}); err != nil {
		t.Errorf("Check after repairing the changed package: %v", err)
	}
}
