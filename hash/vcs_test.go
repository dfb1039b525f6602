package hash

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestIsVCSMetadata states the one rule for what a module package excludes.
func TestIsVCSMetadata(t *testing.T) {
	for name, want := range map[string]bool{
		".git":                true,
		".git/config":         true,
		"sub/.hg/store/data":  true,
		"a/b/.svn":            true,
		".bzr/branch":         true,
		".GIT/config":         true, // the same directory on a case-insensitive file system
		"sub/.Hg/hgrc":        true,
		".git./config":        true, // Windows drops trailing dots and spaces
		".git /config":        true,
		"main.tf":             false,
		".gitignore":          false,
		".gitmodules":         false,
		"sub/.github/x.yml":   false,
		"git/config":          false,
		"x.git/config":        false,
		".hgignore":           false,
		"modules/.svnignore":  false,
		"":                    false,
		"a/b/c/.terraform.tf": false,
	} {
		if got := IsVCSMetadata(name); got != want {
			t.Errorf("IsVCSMetadata(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestInstallModuleLeavesOutVCS checks that a module package installed with
// Options.Install holds no VCS metadata, not even an empty directory from a
// directory entry, and that the installed tree hashes to the h1: returned.
func TestInstallModuleLeavesOutVCS(t *testing.T) {
	ctx := context.Background()
	files := []testFile{
		{name: "main.tf", data: []byte("x")},
		{name: ".git/config", data: []byte("[core]\n\tfsmonitor = touch pwned\n")},
		{name: ".svn/entries", data: []byte("x")},
		{name: "sub/.hg/hgrc", data: []byte("x")},
		{name: "sub/.GIT/config", data: []byte("x")},
		{name: "sub/a.tf", data: []byte("a")},
	}
	tmp := t.TempDir()
	zipPath := filepath.Join(tmp, "m.zip")
	writeZip(t, zipPath, files, true)
	dir := filepath.Join(tmp, "installed")
	mod := Options{Module: true}
	sum, err := mod.Install(ctx, zipPath, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		got = append(got, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := ". main.tf sub sub/a.tf"; strings.Join(got, " ") != want {
		t.Errorf("installed tree = %v, want %s", got, want)
	}
	if h1, err := H1Dir(dir); err != nil || h1 != sum.H1 {
		t.Errorf("provider-rule h1 of the installed tree = %v, %v; want the module h1 %v Install returned", h1, err, sum.H1)
	}
}
