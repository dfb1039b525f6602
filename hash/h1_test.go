package hash

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/mod/sumdb/dirhash"

	"github.com/tflock/tflock/internal/longtest"
)

// cases returns the generated packages every form is checked on.
var cases = sync.OnceValue(func() map[string][]testFile {
	n := 2000
	if !longtest.Enabled() {
		n = 400 // each file is slow under -race; 400 still cover the concurrency (64 workers)
	}
	many := make([]testFile, 0, n)
	for i := range n {
		many = append(many, testFile{name: fmt.Sprintf("d%02d/f%04d.tf", i%37, i), data: fmt.Appendf(nil, "resource %d {}\n", i)})
	}
	return map[string][]testFile{
		"empty":      nil,
		"one file":   {{name: "terraform-provider-x_v1.0.0", data: []byte("#!/bin/sh\n")}},
		"empty file": {{name: "a", data: nil}},
		"nested": {
			{name: "main.tf", data: []byte("module \"x\" {}\n")},
			{name: "modules/a/main.tf", data: []byte("a")},
			{name: "modules/a/b/c/d/e.tf", data: []byte("deep")},
			{name: "modules/b/variables.tf", data: []byte("variable \"v\" {}\n")},
		},
		"sort care": {
			{name: "a/b", data: []byte("1")}, {name: "a.b", data: []byte("2")}, {name: "a-b", data: []byte("3")},
			{name: "A", data: []byte("4")}, {name: "B", data: []byte("5")}, {name: "b", data: []byte("6")},
			{name: "a0", data: []byte("7")}, {name: "a/b.c", data: []byte("8")}, {name: "Z/a", data: []byte("9")},
			{name: "ä", data: []byte("10")}, {name: "a b", data: []byte("11")},
		},
		"stored and deflated": {
			{name: "stored.txt", data: []byte(strings.Repeat("stored ", 100)), stored: true},
			{name: "deflated.txt", data: []byte(strings.Repeat("deflated ", 100))},
			{name: "empty-stored", data: nil, stored: true},
		},
		"large entries": {
			{name: "bin/provider", data: pseudoBinary(1, 1<<20)},
			{name: "bin/stored", data: pseudoBinary(2, 1<<20+(1<<19)), stored: true},
			{name: "README", data: []byte("small\n")},
			{name: "bin/provider2", data: pseudoBinary(3, 300<<10+17)},
		},
		"thousands": many,
	}
})

func TestH1MatchesDirhash(t *testing.T) {
	ctx := context.Background()
	for name, files := range cases() {
		t.Run(name, func(t *testing.T) {
			tmp := t.TempDir()
			dir := filepath.Join(tmp, "pkg")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			writeTree(t, dir, files)
			want, err := dirhash.HashDir(dir, "", dirhash.Hash1)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := H1Dir(dir); err != nil || string(got) != want {
				t.Errorf("H1Dir = %v, %v; dirhash.HashDir = %v", got, err, want)
			}
			if got, err := (Options{Concurrency: 1}).H1Dir(ctx, dir); err != nil || string(got) != want {
				t.Errorf("H1Dir (one worker) = %v, %v; want %v", got, err, want)
			}
			if got, err := H1FS(os.DirFS(dir)); err != nil || string(got) != want {
				t.Errorf("H1FS = %v, %v; want %v", got, err, want)
			}
			for _, dirEntries := range []bool{false, true} {
				zipPath := filepath.Join(tmp, fmt.Sprintf("pkg-%v.zip", dirEntries))
				writeZip(t, zipPath, files, dirEntries)
				raw, err := os.ReadFile(zipPath)
				if err != nil {
					t.Fatal(err)
				}
				got, err := HashZip(zipPath)
				if err != nil {
					t.Fatalf("HashZip(dir entries %v): %v", dirEntries, err)
				}
				if string(got.H1) != want {
					t.Errorf("HashZip(dir entries %v).H1 = %v; dirhash.HashDir of the tree = %v", dirEntries, got.H1, want)
				}
				if string(got.ZH) != sha256Hex(raw) {
					t.Errorf("HashZip.ZH = %v; want %v", got.ZH, sha256Hex(raw))
				}
				if zh, err := ZH(zipPath); err != nil || zh != got.ZH {
					t.Errorf("ZH = %v, %v; want %v", zh, err, got.ZH)
				}
				ref, err := dirhash.HashZip(zipPath, dirhash.Hash1)
				if err != nil {
					t.Fatal(err)
				}
				hasDirs := dirEntries && strings.Contains(fmt.Sprint(files), "/")
				if !hasDirs && ref != want {
					t.Errorf("dirhash.HashZip = %v; want %v", ref, want)
				}
				if hasDirs && ref == want {
					t.Errorf("dirhash.HashZip counted no directory entries; the test does not cover golang/go#53448")
				}
				for _, workers := range []int{1, 3, 64} {
					got, err := (Options{Concurrency: workers}).HashZip(ctx, zipPath)
					if err != nil || string(got.H1) != want {
						t.Errorf("HashZip(%d workers) = %v, %v; want %v", workers, got.H1, err, want)
					}
				}
				// Readers waiting for the workers: a budget of one entry at a time.
				savedBudget := smallBudget
				smallBudget = 1
				got, err = (Options{Concurrency: 64}).HashZip(ctx, zipPath)
				smallBudget = savedBudget
				if err != nil || got.H1 != Hash(want) {
					t.Errorf("HashZip, one small entry in flight = %v, %v; want %v", got.H1, err, want)
				}
				// Every entry through the streaming path.
				saved := smallEntry
				smallEntry = 0
				got, err = HashZip(zipPath)
				smallEntry = saved
				if err != nil || got.H1 != Hash(want) || string(got.ZH) != sha256Hex(raw) {
					t.Errorf("HashZip, all entries streamed = %v, %v; want %v", got, err, want)
				}
			}
		})
	}
}

// TestModuleMode checks that module hashes leave out VCS metadata, in every
// form, and equal dirhash of the tree without it.
func TestModuleMode(t *testing.T) {
	ctx := context.Background()
	pkg := []testFile{{name: "main.tf", data: []byte("x")}, {name: "sub/.gitignore", data: []byte("*.tfstate\n")}, {name: "sub/a.tf", data: []byte("a")}}
	vcs := []testFile{{name: ".git/HEAD", data: []byte("ref: refs/heads/main\n")}, {name: "sub/.hg/store", data: []byte("x")}, {name: ".svn/entries", data: []byte("x")}, {name: "sub/deep/.bzr/branch", data: []byte("x")}}
	tmp := t.TempDir()
	clean := filepath.Join(tmp, "clean")
	writeTree(t, clean, pkg)
	want := dirhashDir(t, clean)
	full := filepath.Join(tmp, "full")
	writeTree(t, full, append(append([]testFile(nil), pkg...), vcs...))
	mod := Options{Module: true}
	if got, err := mod.H1Dir(ctx, full); err != nil || string(got) != want {
		t.Errorf("module H1Dir = %v, %v; want %v", got, err, want)
	}
	if got, err := mod.H1FS(ctx, os.DirFS(full)); err != nil || string(got) != want {
		t.Errorf("module H1FS = %v, %v; want %v", got, err, want)
	}
	if got, err := H1Dir(full); err != nil || string(got) == want {
		t.Errorf("H1Dir without module mode = %v, %v; want the VCS files counted", got, err)
	}
	zipPath := filepath.Join(tmp, "full.zip")
	writeZip(t, zipPath, append(append([]testFile(nil), pkg...), vcs...), true)
	if got, err := mod.HashZip(ctx, zipPath); err != nil || string(got.H1) != want {
		t.Errorf("module HashZip = %v, %v; want %v", got.H1, err, want)
	}
}
