package mirror_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/mirror"
)

// An unpacked package whose platform directory is a symbolic link to the
// real directory (as a shared mirror often is) is the target's contents,
// as tofu reads it: the regression installed an empty directory and
// recorded its h1:.
func TestFilesystemSymlinkedPlatformDir(t *testing.T) {
	root := t.TempDir()
	real := filepath.Join(root, "store", "null-2.0.0-linux")
	if err := os.MkdirAll(filepath.Join(real, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(real, "terraform-provider-null_v2.0.0"), []byte("#!/bin/sh\necho null\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(real, "docs", "index.md"), []byte("docs\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mir := filepath.Join(root, "mirror")
	verDir := filepath.Join(mir, "registry.opentofu.org", "hashicorp", "null", "2.0.0")
	if err := os.MkdirAll(verDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(verDir, "linux_amd64")); err != nil {
		t.Fatal(err)
	}
	want, err := hash.H1Dir(real)
	if err != nil {
		t.Fatal(err)
	}

	m := mirror.NewFilesystem(mir)
	pkg := ppkg("registry.opentofu.org/hashicorp/null", "2.0.0", "linux_amd64")
	recs, err := m.Checksums(context.Background(), pkg)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Hash != want {
		t.Errorf("checksums = %+v, want the target's %s", recs, want)
	}
	dst := filepath.Join(t.TempDir(), "pkg")
	f, err := m.Fetch(context.Background(), pkg, dst)
	if err != nil {
		t.Fatal(err)
	}
	got, err := hash.H1Dir(dst)
	if err != nil {
		t.Fatal(err)
	}
	if got != want || len(f.Hashes) == 0 || f.Hashes[0] != want {
		t.Errorf("fetched tree hashes to %s (reported %v), want the target's %s", got, f.Hashes, want)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "docs", "index.md")); err != nil || string(b) != "docs\n" {
		t.Errorf("docs/index.md = %q, %v", b, err)
	}
}

// An unpacked package directory with no files is not a package: the
// cache refuses it, so it is never installed or locked.
func TestFilesystemEmptyPlatformDirRefused(t *testing.T) {
	mir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(mir, "registry.opentofu.org", "hashicorp", "null", "2.0.0", "linux_amd64"), 0o755); err != nil {
		t.Fatal(err)
	}
	m := mirror.NewFilesystem(mir)
	pkg := ppkg("registry.opentofu.org/hashicorp/null", "2.0.0", "linux_amd64")
	c, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = c.Fill(context.Background(), pkg, nil, func(ctx context.Context, dir string) (*source.Fetched, error) {
		return source.FetchArchive(ctx, m, pkg, dir)
	})
	if !errors.Is(err, cache.ErrEmptyPackage) {
		t.Errorf("Fill of an empty package directory: %v, want cache.ErrEmptyPackage", err)
	}
}
