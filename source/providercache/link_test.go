package providercache_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/providercache"
)

// InstallFromCache shares the cache entry's files (hard links on one file
// system) instead of writing the package again, with the same contents
// and executable bits.
func TestInstallFromCacheLinks(t *testing.T) {
	root := t.TempDir()
	entry := filepath.Join(root, "cache", "entry")
	if err := os.MkdirAll(filepath.Join(entry, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(entry, "terraform-provider-null_v1.0.0")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(entry, "docs", "index.md"), []byte("docs\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pkg := source.ProviderPackage{Addr: tfaddr.MustParseProviderSource("registry.example.test/hashicorp/null"), Version: versions.MustParse("1.0.0"), Platform: source.Platform{OS: "linux", Arch: "amd64"}}
	d := providercache.NewDir(filepath.Join(root, "providers"))
	inst, err := d.InstallFromCache(context.Background(), pkg, entry)
	if err != nil {
		t.Fatal(err)
	}
	got := filepath.Join(inst.Dir, "terraform-provider-null_v1.0.0")
	a, err := os.Stat(got)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.Stat(exe)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(a, b) {
		t.Errorf("%s is a copy of the cache entry's file, want a hard link on one file system", got)
	}
	if a.Mode().Perm()&0o111 == 0 {
		t.Errorf("the executable lost its executable bits: %v", a.Mode())
	}
	if c, err := os.ReadFile(filepath.Join(inst.Dir, "docs", "index.md")); err != nil || string(c) != "docs\n" {
		t.Errorf("docs/index.md = %q, %v", c, err)
	}
}
