package hash

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/mod/sumdb/dirhash"

	"github.com/tflock/tflock/internal/benchdata"
)

// testFile is one file of a generated package.
type testFile struct {
	name   string
	data   []byte
	stored bool // store instead of deflate in zips
}

// writeTree writes files under dir.
func writeTree(t testing.TB, dir string, files []testFile) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// zipBytes builds a zip of files; with dirEntries it also adds an entry for
// every directory, before its files.
func zipBytes(t testing.TB, files []testFile, dirEntries bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	seen := map[string]bool{}
	for _, f := range files {
		if dirEntries {
			for i := 0; i < len(f.name); i++ {
				if f.name[i] == '/' && !seen[f.name[:i+1]] {
					seen[f.name[:i+1]] = true
					if _, err := zw.Create(f.name[:i+1]); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		hdr := &zip.FileHeader{Name: f.name, Method: zip.Deflate}
		if f.stored {
			hdr.Method = zip.Store
		}
		hdr.SetMode(0o755)
		w, err := zw.CreateHeader(hdr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(f.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func writeZip(t testing.TB, path string, files []testFile, dirEntries bool) {
	t.Helper()
	if err := os.WriteFile(path, zipBytes(t, files, dirEntries), 0o644); err != nil {
		t.Fatal(err)
	}
}

// sha256Hex is the definition of zh: applied to b.
func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return "zh:" + hex.EncodeToString(s[:])
}

// pseudoBinary returns n bytes that deflate compresses about 2.5:1: runs of
// random bytes mixed with repeated phrases, from a fixed seed.
func pseudoBinary(seed uint64, n int) []byte { return benchdata.PseudoBinary(seed, n) }

func dirhashDir(t testing.TB, dir string) string {
	t.Helper()
	h, err := dirhash.HashDir(dir, "", dirhash.Hash1)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
