package hash

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/dirhash"
)

// FuzzHashZip checks that arbitrary bytes never make the zip path panic or
// hang, and that whenever it accepts an archive its h1 equals Hash1 over the
// files that archive/zip reads from it, and its zh is the SHA-256 of the
// bytes.
func FuzzHashZip(f *testing.F) {
	f.Add(zipBytes(f, nil, false))
	f.Add(zipBytes(f, []testFile{{name: "a/b", data: []byte("x")}, {name: "a.b", data: []byte("y"), stored: true}}, true))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := Options{MaxSize: 64 << 20}.HashZipReader(context.Background(), bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		if string(got.ZH) != sha256Hex(data) {
			t.Fatalf("ZH = %v; want %v", got.ZH, sha256Hex(data))
		}
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatalf("accepted an archive that archive/zip rejects: %v", err)
		}
		contents := map[string][]byte{}
		var names []string
		for _, zf := range zr.File {
			if strings.HasSuffix(zf.Name, "/") {
				continue
			}
			r, err := zf.Open()
			if err != nil {
				t.Fatalf("accepted an entry archive/zip cannot open: %q: %v", zf.Name, err)
			}
			b, err := io.ReadAll(r)
			r.Close()
			if err != nil {
				t.Fatalf("accepted an entry archive/zip cannot read: %q: %v", zf.Name, err)
			}
			names = append(names, zf.Name)
			contents[zf.Name] = b
		}
		want, err := dirhash.Hash1(names, func(name string) (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(contents[name])), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if string(got.H1) != want {
			t.Fatalf("H1 = %v; Hash1 of archive/zip's reading = %v", got.H1, want)
		}
	})
}
