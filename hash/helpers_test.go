package hash

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"encoding/hex"
	"hash/crc32"
	"io"
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
	// compress/flate's fastest level: archive/zip's default (level 5)
	// takes seconds per MiB under -race, and what the hash tests check
	// does not depend on how the writer matched. The decoder's tests
	// (hash/internal/flate) cover every writer and level.
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) { return flate.NewWriter(w, flate.BestSpeed) })
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

// writeRepeatedZip writes at path a zip of one deflated entry, name, whose
// content is chunk n times over, without compressing it n times: chunk is
// compressed once into a self-contained, byte-aligned run of non-final
// blocks (a fresh writer, flushed), which the entry's stream repeats
// before an empty final block. A large entry costs little to make, even
// under -race.
func writeRepeatedZip(t testing.TB, path, name string, chunk []byte, n int) {
	t.Helper()
	var seg bytes.Buffer
	fw, err := flate.NewWriter(&seg, flate.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fw.Write(chunk); err != nil {
		t.Fatal(err)
	}
	if err := fw.Flush(); err != nil {
		t.Fatal(err)
	}
	final := []byte{0x03, 0x00} // a final fixed-code block holding only its end
	crc := uint32(0)
	for range n {
		crc = crc32.Update(crc, crc32.IEEETable, chunk)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	hdr := &zip.FileHeader{
		Name:               name,
		Method:             zip.Deflate,
		CRC32:              crc,
		CompressedSize64:   uint64(n*seg.Len() + len(final)),
		UncompressedSize64: uint64(n * len(chunk)),
	}
	hdr.SetMode(0o755)
	w, err := zw.CreateRaw(hdr)
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		if _, err := w.Write(seg.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Write(final); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
