package archive

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tflock/tflock/source"
)

// FuzzExtractTarGz checks that no tar.gz archive makes extraction panic,
// put anything outside the destination, exceed the entry and byte limits,
// or leave a symbolic link that is refused or that escapes; and that a
// refusal is an *Error wrapping ErrUnsafe or ErrTooLarge. The input is a
// tar stream that the target compresses, so that the fuzzer works on tar
// headers rather than on deflate blocks; when raw is set it is the whole
// compressed stream instead.
func FuzzExtractTarGz(f *testing.F) {
	seeds := [][]entry{
		{{name: "a.txt", body: "a"}, {name: "d/b", body: "b"}},
		{{name: "../x", body: "a"}},
		{{name: "l", link: "../x"}},
		{{name: "d/l", link: "../a.txt"}, {name: "a.txt", body: "a"}},
		{{name: "a", body: "1"}, {name: "a", body: "2"}},
		{{name: "x", body: "exe", mode: 0o755}},
		{{name: "l", link: "l2"}, {name: "l2", link: "l"}},
		{{name: "l", link: "d"}, {name: "l/x", body: "through a link"}},
	}
	for _, s := range seeds {
		tgz := tgzOf(f, s)
		f.Add(gunzip(f, tgz), false)
		f.Add(tgz, true)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range []*tar.Header{
		{Name: "d/", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: "pax", Typeflag: tar.TypeXGlobalHeader, PAXRecords: map[string]string{"comment": "x"}},
		{Name: "h", Typeflag: tar.TypeLink, Linkname: "d"},
		{Name: "fifo", Typeflag: tar.TypeFifo},
	} {
		_ = tw.WriteHeader(h)
	}
	tw.Close()
	f.Add(buf.Bytes(), false)

	const maxBytes, maxFiles = 1 << 20, 100
	f.Fuzz(func(t *testing.T, data []byte, raw bool) {
		if !raw {
			var gz bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&gz, gzip.BestSpeed)
			zw.Write(data)
			zw.Close()
			data = gz.Bytes()
		}
		for _, links := range []bool{false, true} {
			base := t.TempDir()
			dir := filepath.Join(base, "out")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			err := ExtractTarGz(context.Background(), bytes.NewReader(data), dir, Options{Limits: source.Limits{MaxBytes: maxBytes, MaxEntries: maxFiles}, Symlinks: links})
			if entries, _ := os.ReadDir(base); len(entries) != 1 {
				t.Fatalf("extraction wrote outside its destination: %v", entries)
			}
			if err != nil {
				var ae *Error
				if !errors.As(err, &ae) || !errors.Is(err, ErrUnsafe) && !errors.Is(err, ErrTooLarge) {
					var pe *fs.PathError
					if !errors.As(err, &pe) {
						t.Errorf("error %v (%T) is neither an *Error wrapping ErrUnsafe or ErrTooLarge nor a file-system error", err, err)
					}
				}
			}
			var files int
			var size int64
			_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, werr error) error {
				if werr != nil || p == dir {
					return nil
				}
				files++
				if d.Type().IsRegular() {
					if fi, err := d.Info(); err == nil {
						size += fi.Size()
					}
				}
				if d.Type()&fs.ModeSymlink == 0 {
					if !d.IsDir() && !d.Type().IsRegular() {
						t.Errorf("%s: extracted a %v, neither a file nor a directory", p, d.Type())
					}
					return nil
				}
				if !links {
					t.Errorf("symbolic link %s extracted although links are refused", p)
				}
				if err != nil {
					return nil // a refused archive may leave a link that the final check refused
				}
				target, _ := filepath.EvalSymlinks(p)
				if rel, rerr := filepath.Rel(dir, target); target != "" && (rerr != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator))) {
					t.Errorf("symbolic link %s escapes to %s", p, target)
				}
				return nil
			})
			if files > maxFiles {
				t.Errorf("%d entries extracted, limit %d", files, maxFiles)
			}
			if size > maxBytes {
				t.Errorf("%d bytes extracted, limit %d", size, maxBytes)
			}
		}
	})
}

func gunzip(t testing.TB, b []byte) []byte {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
