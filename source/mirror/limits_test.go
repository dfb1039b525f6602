package mirror_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/mirror"
)

// bombFiles are 3 MiB of zeros, a few kilobytes zipped (above the 1 MiB
// limit the tests set; small enough to make quickly under -race).
func bombFiles() map[string]string {
	files := map[string]string{}
	for i := range 12 {
		files[fmt.Sprintf("zeros%02d", i)] = strings.Repeat("\x00", 256<<10)
	}
	return files
}

// TestNetworkArchiveLimits: a network mirror's package whose zip declares
// more than NetworkOptions.Limits.MaxBytes, or is larger than it, is
// refused with source.ErrTooLarge, naming the URL, leaving nothing.
func TestNetworkArchiveLimits(t *testing.T) {
	s := newMirrorServer(t)
	name := "terraform-provider-null_2.0.0_linux_amd64.zip"
	s.zips[name], s.h1[name], s.zh[name] = makeZip(t, bombFiles())
	// The address the shared mirror fixture serves.
	pkg := ppkg("registry.opentofu.org/hashicorp/null", "2.0.0", "linux_amd64")
	for what, limits := range map[string]source.Limits{
		"declared sizes": {MaxBytes: 1 << 20},
		"download size":  {MaxBytes: 1000},
	} {
		n, err := mirror.NewNetwork(mirror.NetworkOptions{URL: s.URL + "/mirror", Client: s.Client(), Limits: limits})
		if err != nil {
			t.Fatal(err)
		}
		root := t.TempDir()
		_, err = n.Fetch(context.Background(), pkg, filepath.Join(root, "p"))
		if !errors.Is(err, source.ErrTooLarge) {
			t.Errorf("%s: got %v, want an error wrapping source.ErrTooLarge", what, err)
		} else if !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %q does not name the archive", what, err)
		}
		if left, _ := os.ReadDir(root); len(left) != 0 {
			t.Errorf("%s: left behind: %v", what, left)
		}
	}
	if _, err := newNetwork(t, s, false).Fetch(context.Background(), pkg, filepath.Join(t.TempDir(), "ok")); err != nil {
		t.Errorf("with the default limits: %v", err)
	}
}

// TestFilesystemArchiveLimits: the same for a packed package in a
// filesystem mirror, with Filesystem.Limits.
func TestFilesystemArchiveLimits(t *testing.T) {
	root := t.TempDir()
	typeDir := filepath.Join(root, "registry.example.test", "hashicorp", "null")
	if err := os.MkdirAll(typeDir, 0o755); err != nil {
		t.Fatal(err)
	}
	const name = "terraform-provider-null_2.1.0_linux_amd64.zip"
	z, _, _ := makeZip(t, bombFiles())
	if err := os.WriteFile(filepath.Join(typeDir, name), z, 0o644); err != nil {
		t.Fatal(err)
	}
	pkg := ppkg("registry.example.test/hashicorp/null", "2.1.0", "linux_amd64")
	m := mirror.NewFilesystem(root)
	m.Limits = source.Limits{MaxBytes: 1 << 20}
	out := t.TempDir()
	_, err := m.Fetch(context.Background(), pkg, filepath.Join(out, "p"))
	if !errors.Is(err, source.ErrTooLarge) {
		t.Errorf("got %v, want an error wrapping source.ErrTooLarge", err)
	} else if !strings.Contains(err.Error(), name) {
		t.Errorf("error %q does not name the archive", err)
	}
	if left, _ := os.ReadDir(out); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
	if _, err := mirror.NewFilesystem(root).Fetch(context.Background(), pkg, filepath.Join(t.TempDir(), "ok")); err != nil {
		t.Errorf("with the default limits: %v", err)
	}
}
