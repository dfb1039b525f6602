package fsutil

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func TestPrepare(t *testing.T) {
	base := t.TempDir()
	nonEmpty := filepath.Join(base, "full")
	if err := os.MkdirAll(filepath.Join(nonEmpty, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Prepare(nonEmpty); err == nil {
		t.Error("a non-empty directory was accepted")
	}
	fresh := filepath.Join(base, "a", "b")
	cleanup, err := Prepare(fresh)
	if err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(fresh, "f"), nil, 0o644)
	cleanup()
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Error("cleanup left the directory it created")
	}
	existing := t.TempDir()
	cleanup, err = Prepare(existing)
	if err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(existing, "f"), nil, 0o644)
	cleanup()
	if entries, err := os.ReadDir(existing); err != nil || len(entries) != 0 {
		t.Errorf("cleanup of an existing directory: %v %v", entries, err)
	}
}

// CopyDir follows symbolic links (a mirror's package may be a link);
// CopyDirLinks, for module packages, keeps them as links.
func TestCopyDirLinks(t *testing.T) {
	src := t.TempDir()
	if err := os.MkdirAll(filepath.Join(src, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "sub", "main.tf"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub/main.tf", filepath.Join(src, "link.tf")); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, keep := range []bool{false, true} {
		dst := t.TempDir()
		copyDir := CopyDir
		if keep {
			copyDir = CopyDirLinks
		}
		if err := copyDir(ctx, src, dst); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Lstat(filepath.Join(dst, "link.tf"))
		if err != nil {
			t.Fatal(err)
		}
		if isLink := fi.Mode()&os.ModeSymlink != 0; isLink != keep {
			t.Errorf("keep links %v: link.tf is a link: %v", keep, isLink)
		}
		if b, err := os.ReadFile(filepath.Join(dst, "link.tf")); err != nil || string(b) != "x" {
			t.Errorf("keep links %v: link.tf reads %q, %v", keep, b, err)
		}
	}
}
