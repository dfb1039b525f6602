package fsutil

import (
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
