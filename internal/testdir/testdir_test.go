package testdir

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestProvenance checks that the conformance data and its SOURCES.tsv
// lists agree: every listed file exists, and every file is listed, except
// the documented derived NNN.want.hcl files and the directory's own README
// and .gitattributes.
func TestProvenance(t *testing.T) {
	root := Conformance(t)
	listed := map[string]bool{}
	for _, dir := range []string{"constraints", "lockfiles", "opentofu"} {
		b, err := os.ReadFile(filepath.Join(root, dir, "SOURCES.tsv"))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			cols := strings.Split(line, "\t")
			if len(cols) < 4 {
				t.Errorf("%s/SOURCES.tsv:%d: %d columns, want at least 4", dir, i+1, len(cols))
				continue
			}
			if i == 0 {
				continue // header
			}
			name := path.Join(dir, cols[0])
			if listed[name] {
				t.Errorf("%s/SOURCES.tsv:%d: %s listed twice", dir, i+1, cols[0])
			}
			listed[name] = true
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(name))); err != nil {
				t.Errorf("%s/SOURCES.tsv:%d: %v", dir, i+1, err)
			}
		}
	}
	files := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch {
		case listed[rel],
			slices.Contains([]string{"README.md", ".gitattributes"}, rel),
			path.Base(rel) == "SOURCES.tsv",
			path.Dir(rel) == "lockfiles" && strings.HasSuffix(rel, ".want.hcl"):
		default:
			t.Errorf("%s is not listed in a SOURCES.tsv", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < len(listed) {
		t.Errorf("walked %d files, fewer than the %d listed", files, len(listed))
	}
}
