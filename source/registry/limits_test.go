package registry_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/registry"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// TestModuleArchiveLimits: a module zip whose entries declare more than
// Options.Limits.MaxBytes (a zip bomb: 12 MiB of zeros in a few kilobytes)
// and a tar.gz with more entries than Limits.MaxEntries are refused with an
// error wrapping source.ErrTooLarge that names the archive's URL, and
// nothing is left behind.
func TestModuleArchiveLimits(t *testing.T) {
	bomb := map[string]string{}
	for i := range 12 {
		bomb[fmt.Sprintf("zeros%02d", i)] = strings.Repeat("\x00", 1<<20)
	}
	many := map[string]string{}
	for i := range 300 {
		many[fmt.Sprintf("d%02d/f%03d.tf", i%30, i)] = "# x\n"
	}
	fx := registrytest.Fixtures{Modules: []registrytest.Module{
		{Addr: "acme/bomb/zip", Versions: []registrytest.ModuleVersion{{Version: "1.0.0", Files: bomb, Delivery: registrytest.DeliverHeader}}},
		{Addr: "acme/many/tgz", Versions: []registrytest.ModuleVersion{{Version: "1.0.0", Files: many, Delivery: registrytest.DeliverJSON}}},
	}}
	srv := registrytest.New(t, fx, registrytest.Options{})
	ctx := context.Background()
	for _, tc := range []struct {
		addr, file string
		limits     source.Limits
	}{
		{"registry.example.test/acme/bomb/zip", "acme/bomb/zip/1.0.0.zip", source.Limits{MaxBytes: 4 << 20}},
		{"registry.example.test/acme/many/tgz", "acme/many/tgz/1.0.0.tar.gz", source.Limits{MaxEntries: 100}},
	} {
		src, _ := newSource(srv, func(o *registry.Options) { o.Limits = tc.limits })
		dir := filepath.Join(t.TempDir(), "m")
		_, err := src.Fetch(ctx, source.ModulePackage{Source: tc.addr, Version: versions.MustParse("1.0.0")}, dir)
		if !errors.Is(err, source.ErrTooLarge) {
			t.Errorf("%s: got %v, want an error wrapping source.ErrTooLarge", tc.addr, err)
		} else if !strings.Contains(err.Error(), tc.file) {
			t.Errorf("%s: error %q does not name the archive", tc.addr, err)
		}
		nothingLeft(t, dir)
		// Within the default limits the same package installs.
		src, _ = newSource(srv, nil)
		if _, err := src.Fetch(ctx, source.ModulePackage{Source: tc.addr, Version: versions.MustParse("1.0.0")}, filepath.Join(t.TempDir(), "ok")); err != nil {
			t.Errorf("%s with the default limits: %v", tc.addr, err)
		}
	}
}

// TestProviderArchiveLimit: a provider archive larger than
// Limits.MaxBytes is refused with source.ErrTooLarge as well as
// registry.ErrTooLarge.
func TestProviderArchiveLimit(t *testing.T) {
	srv := registrytest.New(t, fixtures, registrytest.Options{})
	src, _ := newSource(srv, func(o *registry.Options) { o.Limits.MaxBytes = 100 })
	dir := filepath.Join(t.TempDir(), "p")
	_, err := src.Fetch(context.Background(), providerPkg(t, "registry.example.test/hashicorp/aws", "5.1.0", "linux_amd64"), dir)
	if !errors.Is(err, source.ErrTooLarge) || !errors.Is(err, registry.ErrTooLarge) {
		t.Errorf("got %v, want source.ErrTooLarge and registry.ErrTooLarge", err)
	}
	nothingLeft(t, dir)
}
