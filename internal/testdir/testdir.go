// Package testdir finds the conformance data for tests: the
// testdata/conformance directory at the repository root (see its README.md
// for what it holds and where it comes from). It is for tests only: no
// non-test code may import it.
package testdir

import (
	"os"
	"path/filepath"
	"testing"
)

// Root returns the repository root: the nearest directory holding go.mod,
// walking up from the working directory (a test's package directory).
func Root(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("testdir: go.mod not found above the working directory")
		}
		dir = parent
	}
}

// Conformance returns the path of the conformance data directory,
// testdata/conformance under the repository root, joined with the given
// elements. It fails the test when the directory is missing: it is part of
// the repository.
func Conformance(t testing.TB, elem ...string) string {
	t.Helper()
	c := filepath.Join(Root(t), "testdata", "conformance")
	if _, err := os.Stat(c); err != nil {
		t.Fatalf("testdir: conformance data missing: %v", err)
	}
	return filepath.Join(append([]string{c}, elem...)...)
}

// OpenTofu returns the path of the OpenTofu test data within the
// conformance directory, joined with the given elements.
func OpenTofu(t testing.TB, elem ...string) string {
	t.Helper()
	return Conformance(t, append([]string{"opentofu"}, elem...)...)
}
