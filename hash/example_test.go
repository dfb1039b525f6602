package hash_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing/fstest"

	"golang.org/x/mod/sumdb/dirhash"

	"github.com/tflock/tflock/hash"
)

// The h1 of a package is the same whether it is an fs.FS, a directory or a
// zip archive, and equals x/mod dirhash's Hash1 of its files.
func ExampleH1FS() {
	fsys := fstest.MapFS{
		"main.tf":         {Data: []byte("terraform {}\n")},
		"modules/a/a.tf":  {Data: []byte("variable \"x\" {}\n")},
		".git/HEAD":       {Data: []byte("ref: refs/heads/main\n")},
		"modules/a/b.txt": {Data: []byte("b\n")},
	}
	h1, err := hash.H1FS(fsys)
	if err != nil {
		fmt.Println(err)
		return
	}
	module, err := hash.Options{Module: true}.H1FS(context.Background(), fsys)
	if err != nil {
		fmt.Println(err)
		return
	}
	files := []string{"main.tf", "modules/a/a.tf", "modules/a/b.txt"}
	ref, _ := dirhash.Hash1(files, func(name string) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(fsys[name].Data)), nil
	})
	fmt.Println(h1 != module)
	fmt.Println(string(module) == ref)
	// Output:
	// true
	// true
}

// HashZip computes both hashes of a zip in one read.
func ExampleHashZip() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "terraform-provider-x_1.0.0_linux_amd64.zip")
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("terraform-provider-x_v1.0.0")
	w.Write([]byte("#!/bin/sh\n"))
	zw.Close()
	os.WriteFile(path, buf.Bytes(), 0o644)

	sum, err := hash.HashZip(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	ref, _ := dirhash.HashZip(path, dirhash.Hash1)
	fmt.Println(string(sum.H1) == ref)
	fmt.Println(sum.ZH.Scheme(), len(sum.ZH.Value()))
	// Output:
	// true
	// zh: 64
}

// Verify accepts a package that matches one recorded hash, and returns its
// other hashes to be added to the lock file (trust on first use).
func ExampleVerify() {
	recorded := []hash.Hash{
		hash.MustParseHash("zh:0000000000000000000000000000000000000000000000000000000000000001"),
		hash.MustParseHash("zh:0000000000000000000000000000000000000000000000000000000000000002"),
	}
	computed := []hash.Hash{
		hash.MustParseHash("h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="),
		hash.MustParseHash("zh:0000000000000000000000000000000000000000000000000000000000000002"),
	}
	add, err := hash.Verify("registry.opentofu.org/hashicorp/null 2.1.0 (linux_amd64)", computed, recorded)
	fmt.Println(add, err)

	_, err = hash.Verify("registry.opentofu.org/hashicorp/null 2.1.0 (linux_amd64)", computed[:1], []hash.Hash{
		hash.MustParseHash("h1:AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="),
	})
	var mismatch *hash.MismatchError
	fmt.Println(errors.As(err, &mismatch))
	fmt.Println(err)
	// Output:
	// [h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=] <nil>
	// true
	// registry.opentofu.org/hashicorp/null 2.1.0 (linux_amd64): checksum mismatch: computed h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=; the lock file records h1:AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=
}

// A Set gathers the hashes of a provider release across checks, merging
// what each check learned about a hash: here a signed SHA256SUMS from the
// origin registry, then the local verification of the downloaded zip, whose
// h1 is new.
func ExampleSet() {
	zh := hash.MustParseHash("zh:299dd806df78cb0537e5c111019eaca6e6b7797e1b63cb37cc6a76f91c6c0782")
	h1 := hash.MustParseHash("h1:qjsREM4DqEWECD43FcPqddZ9oxCG+IaMTxvWPciS05g=")
	s := make(hash.Set)
	s.Add(zh, hash.Provenance{SignedBy: []string{"0C0AF313E5FD9F80"}, Registries: []string{"registry.opentofu.org"}, Platforms: []string{"linux_amd64"}})
	s.Add(zh, hash.Provenance{VerifiedLocally: true})
	s.Add(h1, hash.Provenance{VerifiedLocally: true, Platforms: []string{"linux_amd64"}})
	for _, r := range s.Records() {
		p := r.Provenance
		fmt.Println(r.Hash.Scheme(), p.SignedBy, p.Registries, p.VerifiedLocally, p.Platforms)
	}
	// Output:
	// h1: [] [] true [linux_amd64]
	// zh: [0C0AF313E5FD9F80] [registry.opentofu.org] true [linux_amd64]
}
