// Package testdir finds the shared conformance data for tests: the
// "shared/conformance" directory that is a sibling of the repository root.
package testdir

import (
	"os"
	"path/filepath"
	"testing"
)

// Conformance returns the path of the conformance data directory, found by
// walking up from the working directory to go.mod. It fails the test when
// the directory is missing: CI always has it.
func Conformance(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the working directory")
		}
		dir = parent
	}
	c := filepath.Join(dir, "..", "shared", "conformance")
	if _, err := os.Stat(c); err != nil {
		t.Fatalf("conformance data missing: %v", err)
	}
	return c
}

// OpenTofu returns the path of the OpenTofu test data within the
// conformance directory, joined with the given elements.
func OpenTofu(t testing.TB, elem ...string) string {
	t.Helper()
	return filepath.Join(append([]string{Conformance(t), "opentofu"}, elem...)...)
}
