package install_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/source"
)

func TestDispatchRoutes(t *testing.T) {
	static := staticFixtures()
	d := &install.Dispatch{Providers: static}
	ctx := context.Background()
	// Registry modules go to the provider source when Registry is unset.
	if _, err := d.Versions(ctx, source.ModulePackage{Source: vpcSource}); err != nil {
		t.Errorf("registry module: %v", err)
	}
	if _, err := d.Versions(ctx, source.ProviderPackage{Addr: awsAddr}); err != nil {
		t.Errorf("provider: %v", err)
	}
	// (HTTP archives have a default source: see httparchive_test.go.)
	for _, src := range []string{"git::https://example.test/a/b.git", "oci://example.test/a/b"} {
		_, err := d.Versions(ctx, source.ModulePackage{Source: src})
		if !errors.Is(err, source.ErrNotFound) || !strings.Contains(err.Error(), "no source configured") {
			t.Errorf("%s without a source: %v, want ErrNotFound naming the missing source", src, err)
		}
	}
	recs, err := d.Checksums(ctx, source.ProviderPackage{Addr: awsAddr, Version: mustV("5.1.0"), Platform: source.CurrentPlatform})
	if err != nil || len(recs) != len(testPlats) {
		t.Errorf("Checksums = %v, %v; want one record per platform", recs, err)
	}
	if _, err := (&install.Dispatch{}).Versions(ctx, source.ProviderPackage{Addr: awsAddr}); !errors.Is(err, source.ErrNotFound) {
		t.Errorf("no provider source: %v", err)
	}
}
