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

// TestArchiveFile checks where a handed-over archive is downloaded: in the
// directory given when it exists, as the file of that name when only its
// parent does (no directory made), and in the directory, made, when its
// parent is missing too.
func TestArchiveFile(t *testing.T) {
	root := t.TempDir()
	for _, c := range []struct {
		name     string
		dir      string
		make     bool // dir exists, as a directory
		asDirArg bool // the archive is the file dir itself
	}{
		{"existing directory", filepath.Join(root, "a"), true, false},
		{"absent, parent present", filepath.Join(root, "b"), false, true},
		{"absent, parent absent", filepath.Join(root, "c", "d"), false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.make {
				if err := os.Mkdir(c.dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			f, err := ArchiveFile(c.dir)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.Write([]byte("PK")); err != nil {
				t.Fatal(err)
			}
			if c.asDirArg {
				if f.Name() != c.dir {
					t.Fatalf("archive at %s, want the file %s", f.Name(), c.dir)
				}
				if info, err := os.Lstat(c.dir); err != nil || !info.Mode().IsRegular() {
					t.Fatalf("%s: %v, %v; want a regular file", c.dir, info, err)
				}
				return
			}
			if filepath.Dir(f.Name()) != c.dir {
				t.Fatalf("archive at %s, want it in %s", f.Name(), c.dir)
			}
		})
	}
}
