// Package benchdata generates the deterministic data that benchmarks and
// test servers use in place of real provider executables: bytes that
// compress about as well as a Go program does (about 2.4:1 with DEFLATE
// at its default level), so that inflating and hashing them costs what a
// real provider costs.
package benchdata

import (
	"archive/zip"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// phrase stands for the symbol and path strings a Go executable repeats.
var phrase = []byte("runtime.gopanic\x00\x00\x00github.com/hashicorp/terraform-plugin-sdk/v2/helper/schema.(*Resource).Apply\x00")

// PseudoBinary returns n bytes of provider-like content for seed: runs of
// random bytes, pieces of a repeated phrase, and runs of zeros, in random
// order. The same seed and n always give the same bytes.
func PseudoBinary(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	out := make([]byte, 0, n+64)
	for len(out) < n {
		switch r.IntN(3) {
		case 0:
			k := 8 + r.IntN(18)
			for range k {
				out = append(out, byte(r.Uint32()))
			}
		case 1:
			k := 8 + r.IntN(40)
			out = append(out, phrase[r.IntN(len(phrase)-k):][:k]...)
		default:
			k := 4 + r.IntN(12)
			for range k {
				out = append(out, 0)
			}
		}
	}
	return out[:n]
}

// ExtractStd extracts the zip archive at zipPath into dir the plain way,
// as OpenTofu's installer does (archive/zip, one io.Copy per file): the
// extraction of the benchmarks' baselines. It trusts the archive's names;
// benchmarks give it archives they made.
func ExtractStd(zipPath, dir string) error {
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		return err
	}
	defer zr.Close()
	for _, f := range zr.File {
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if f.FileInfo().IsDir() {
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := extractFile(f, p); err != nil {
			return err
		}
	}
	return nil
}

func extractFile(f *zip.File, p string) error {
	r, err := f.Open()
	if err != nil {
		return err
	}
	defer r.Close()
	w, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, f.Mode().Perm())
	if err != nil {
		return err
	}
	_, err = io.Copy(w, r)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return err
}
