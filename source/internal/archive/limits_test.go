package archive

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tflock/tflock/source"
)

// treeSize returns the number of entries under dir and the bytes of its
// files.
func treeSize(t testing.TB, dir string) (entries int, bytes int64) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		entries++
		if d.Type().IsRegular() {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			bytes += fi.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return entries, bytes
}

// zipBomb returns a zip of n entries of size bytes each (zeros, so each
// compresses to a few kilobytes), with sizes declared truthfully.
func zipBomb(t testing.TB, n int, size int) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	zeros := make([]byte, size)
	for i := range n {
		w, err := zw.Create(fmt.Sprintf("f%03d", i))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(zeros); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// lyingZip returns a zip whose one entry declares declared bytes but
// inflates to actual bytes.
func lyingZip(t testing.TB, declared, actual int) []byte {
	data := bytes.Repeat([]byte{'x'}, actual)
	var comp bytes.Buffer
	fw, _ := flate.NewWriter(&comp, flate.BestCompression)
	fw.Write(data)
	fw.Close()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	h := &zip.FileHeader{Name: "liar", Method: zip.Deflate, CRC32: crc32.ChecksumIEEE(data[:declared]), CompressedSize64: uint64(comp.Len()), UncompressedSize64: uint64(declared)}
	h.SetMode(0o644)
	w, err := zw.CreateRaw(h)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(comp.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var (
	bigTarOnce sync.Once
	bigTar     []byte
)

// entries200k returns a tar.gz of 200,000 empty files, made once (60,000,
// still more than DefaultMaxEntries, in a -race build).
func entries200k(t testing.TB) []byte {
	n := 200000
	if raceBuild {
		n = 60000
	}
	bigTarOnce.Do(func() { bigTar = manyEntries(t, n) })
	return bigTar
}

// manyEntries returns a tar.gz of n empty files.
func manyEntries(t testing.TB, n int) []byte {
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	tw := tar.NewWriter(gz)
	for i := range n {
		if err := tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("d%03d/f%06d", i%1000, i), Mode: 0o644, Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func wantTooLarge(t *testing.T, err error) {
	t.Helper()
	var ae *Error
	if !errors.Is(err, source.ErrTooLarge) || !errors.As(err, &ae) {
		t.Fatalf("got %v, want an *Error wrapping source.ErrTooLarge", err)
	}
}

// TestZipBombRefusedBeforeWriting: the central directory declares more
// bytes than the limit, so nothing at all is written.
func TestZipBombRefusedBeforeWriting(t *testing.T) {
	data := zipBomb(t, 12, 256<<10) // 3 MiB declared, a few KiB compressed
	dir := t.TempDir()
	err := extract("zip", data, dir, Options{Limits: source.Limits{MaxBytes: 1 << 20}})
	wantTooLarge(t, err)
	if !strings.Contains(err.Error(), "declares more than 1048576 bytes") {
		t.Errorf("error %q does not say what the archive declares", err)
	}
	if n, b := treeSize(t, dir); n != 0 || b != 0 {
		t.Errorf("refused zip bomb left %d entries, %d bytes", n, b)
	}
	if err := extract("zip", data, t.TempDir(), Options{Limits: source.Limits{MaxBytes: 3 << 20}}); err != nil {
		t.Errorf("the same archive within the limit: %v", err)
	}
}

// TestZipTooManyEntriesRefusedBeforeWriting: the central directory's entry
// count is checked before anything is written.
func TestZipTooManyEntriesRefusedBeforeWriting(t *testing.T) {
	data := zipBomb(t, 20, 10)
	dir := t.TempDir()
	wantTooLarge(t, extract("zip", data, dir, Options{Limits: source.Limits{MaxEntries: 19}}))
	if n, _ := treeSize(t, dir); n != 0 {
		t.Errorf("refused archive left %d entries", n)
	}
}

// TestZipLyingSizes: an entry that inflates to more than its header
// declares is refused once it passes the declared size, the bytes written
// never passing the limit, and what was written is removed.
func TestZipLyingSizes(t *testing.T) {
	const limit = 64 << 10
	for _, declared := range []int{10, limit} {
		t.Run(fmt.Sprint(declared), func(t *testing.T) {
			data := lyingZip(t, declared, 1<<20)
			dir := t.TempDir()
			err := extract("zip", data, dir, Options{Limits: source.Limits{MaxBytes: limit}})
			wantTooLarge(t, err)
			var ae *Error
			if errors.As(err, &ae); ae.Entry != "liar" {
				t.Errorf("error %v does not name the entry", err)
			}
			if n, b := treeSize(t, dir); n != 0 || b != 0 {
				t.Errorf("refused archive left %d entries, %d bytes", n, b)
			}
		})
	}
}

// onlyReader hides every method but Read: a stream that cannot be read
// twice.
type onlyReader struct{ io.Reader }

// notADir returns a path where nothing can be written: a regular file. An
// extraction into it that fails with ErrTooLarge has written nothing.
func notADir(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTarGzEntryLimit: a tar.gz of 1,000 entries is refused at a limit of
// 100. Read from a file, it is refused before anything is written; read
// from a stream, at the first entry past the limit, and what was written
// before is removed. (The default limit, with the large archive:
// TestTarGzEntryLimitDefault.)
func TestTarGzEntryLimit(t *testing.T) {
	data := manyEntries(t, 1000)
	lim := Options{Limits: source.Limits{MaxEntries: 100}}
	err := ExtractTarGz(context.Background(), bytes.NewReader(data), notADir(t), lim)
	wantTooLarge(t, err)
	if !strings.Contains(err.Error(), "more than 100 entries") {
		t.Errorf("error %q does not state the limit", err)
	}
	dir := t.TempDir()
	wantTooLarge(t, ExtractTarGz(context.Background(), onlyReader{bytes.NewReader(data)}, dir, lim))
	if n, _ := treeSize(t, dir); n != 0 {
		t.Errorf("refused archive left %d entries", n)
	}
}

// TestTarGzEntryLimitDefault: the same archive at the default limit, from
// a file: refused having written nothing, in well under 5 seconds.
func TestTarGzEntryLimitDefault(t *testing.T) {
	data := entries200k(t)
	start := time.Now()
	err := ExtractTarGz(context.Background(), bytes.NewReader(data), notADir(t), Options{})
	wantTooLarge(t, err)
	if !strings.Contains(err.Error(), fmt.Sprintf("more than %d entries", source.DefaultMaxEntries)) {
		t.Errorf("error %q does not state the default limit", err)
	}
	t.Logf("refused after %v", time.Since(start))
}

// TestTarGzLimitsFromStream: a stream is counted as it is extracted; the
// declared size of an entry is checked before it is written.
func TestTarGzLimitsFromStream(t *testing.T) {
	across := tgzOf(t, []entry{{name: "a", body: strings.Repeat("x", 600)}, {name: "b", body: strings.Repeat("x", 600)}})
	dir := t.TempDir()
	wantTooLarge(t, ExtractTarGz(context.Background(), onlyReader{bytes.NewReader(across)}, dir, Options{Limits: source.Limits{MaxBytes: 1000}}))
	if n, _ := treeSize(t, dir); n != 0 {
		t.Errorf("refused archive left %d entries", n)
	}
	if err := ExtractTarGz(context.Background(), onlyReader{bytes.NewReader(across)}, t.TempDir(), Options{Limits: source.Limits{MaxBytes: 1200}}); err != nil {
		t.Errorf("at the limit: %v", err)
	}
}

// TestTarGzDeclaredSize: an entry whose header declares more than the
// limit is refused before a byte of it is written.
func TestTarGzDeclaredSize(t *testing.T) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	tw.WriteHeader(&tar.Header{Name: "small", Mode: 0o644, Size: 3, Typeflag: tar.TypeReg})
	tw.Write([]byte("abc"))
	tw.WriteHeader(&tar.Header{Name: "huge", Mode: 0o644, Size: 1 << 40, Typeflag: tar.TypeReg})
	tw.Write(make([]byte, 1<<20)) // the rest never comes
	gz.Close()
	dir := t.TempDir()
	wantTooLarge(t, extract("tgz", buf.Bytes(), dir, Options{Limits: source.Limits{MaxBytes: 1 << 30}}))
	if n, _ := treeSize(t, dir); n != 0 {
		t.Errorf("refused archive left %d entries", n)
	}
}

// TestFailureRemovesOnlyWhatWasWritten: on error the extractor removes
// what it wrote and keeps what the destination already held.
func TestFailureRemovesOnlyWhatWasWritten(t *testing.T) {
	for _, format := range []string{"zip", "tgz"} {
		of := map[string]func(testing.TB, []entry) []byte{"zip": zipOf, "tgz": tgzOf}[format]
		data := of(t, []entry{{name: "a/b.tf", body: "b"}, {name: "c.tf", body: "c"}, {name: "../evil", body: "x"}})
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "keep"), []byte("k"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := extract(format, data, dir, Options{}); !errors.Is(err, ErrUnsafe) {
			t.Errorf("%s: got %v, want ErrUnsafe", format, err)
		}
		des, _ := os.ReadDir(dir)
		if len(des) != 1 || des[0].Name() != "keep" {
			t.Errorf("%s: after the failure the destination holds %v, want only keep", format, des)
		}
	}
}

// TestModuleSkipsVCS: a module package is extracted without its
// version-control metadata, in any case and at any depth; a provider
// package keeps everything.
func TestModuleSkipsVCS(t *testing.T) {
	entries := []entry{
		{name: "main.tf", body: "m"},
		{name: ".git/config", body: "[core]\n\tfsmonitor = touch pwned\n"},
		{name: ".svn/entries", body: "x"},
		{name: "sub/.hg/hgrc", body: "x"},
		{name: "sub/.GIT/config", body: "x"},
		{name: "sub/.bzr", link: "../main.tf"},
		{name: "sub/a.tf", body: "a"},
		{name: ".gitignore", body: "x"},
	}
	// zip archives may have directory entries; tgzOf writes files only.
	zipEntries := append([]entry{{name: ".git/", mode: int64(fs.ModeDir | 0o755)}}, entries...)
	for format, data := range map[string][]byte{"zip": zipOf(t, zipEntries), "tgz": tgzOf(t, entries)} {
		for module, want := range map[bool]string{
			true:  ".gitignore main.tf sub sub/a.tf",
			false: ".git .git/config .gitignore .svn .svn/entries main.tf sub sub/.GIT sub/.GIT/config sub/.bzr sub/.hg sub/.hg/hgrc sub/a.tf",
		} {
			dir := t.TempDir()
			if err := extract(format, data, dir, Options{Module: module, Symlinks: true}); err != nil {
				t.Fatalf("%s module=%v: %v", format, module, err)
			}
			var got []string
			filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if p != dir {
					rel, _ := filepath.Rel(dir, p)
					got = append(got, filepath.ToSlash(rel))
				}
				return nil
			})
			sort.Strings(got)
			if strings.Join(got, " ") != want {
				t.Errorf("%s module=%v: extracted %v, want %s", format, module, got, want)
			}
		}
	}
}
