package hash

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

// patchCentral rewrites, in the central directory record of the entry
// named name, the little-endian uint32 at offset off.
func patchCentral(t *testing.T, z []byte, name string, off int, v uint32) []byte {
	t.Helper()
	z = bytes.Clone(z)
	sig := []byte{0x50, 0x4b, 0x01, 0x02}
	for i := bytes.Index(z, sig); i >= 0; {
		n := int(binary.LittleEndian.Uint16(z[i+28:]))
		if string(z[i+46:i+46+n]) == name {
			binary.LittleEndian.PutUint32(z[i+off:], v)
			return z
		}
		j := bytes.Index(z[i+4:], sig)
		if j < 0 {
			break
		}
		i += 4 + j
	}
	t.Fatalf("no central directory record for %q", name)
	return nil
}

func TestZipSafety(t *testing.T) {
	ok := []testFile{{name: "a/b.txt", data: []byte("hello\n")}, {name: "c", data: []byte(strings.Repeat("c", 100))}}
	okZip := zipBytes(t, ok, false)
	zeros := zipBytes(t, []testFile{{name: "zeros", data: make([]byte, 4<<20)}}, false)
	// A symbolic link is hashed as the file OpenTofu installs for it (its
	// target as contents); a device cannot be installed at all.
	withMode := func(mode os.FileMode) []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		h := &zip.FileHeader{Name: "link"}
		h.SetMode(mode)
		w, _ := zw.CreateHeader(h)
		w.Write([]byte("/etc/passwd"))
		zw.Close()
		return buf.Bytes()
	}
	tests := map[string]struct {
		zip  []byte
		opts Options
		want error
	}{
		"dot-dot":             {zip: zipBytes(t, []testFile{{name: "../evil", data: []byte("x")}}, false), want: ErrUnsafePath},
		"inner dot-dot":       {zip: zipBytes(t, []testFile{{name: "a/../../evil", data: []byte("x")}}, false), want: ErrUnsafePath},
		"absolute":            {zip: zipBytes(t, []testFile{{name: "/etc/evil", data: []byte("x")}}, false), want: ErrUnsafePath},
		"backslash":           {zip: zipBytes(t, []testFile{{name: `..\evil`, data: []byte("x")}}, false), want: ErrUnsafePath},
		"drive letter":        {zip: zipBytes(t, []testFile{{name: "C:evil", data: []byte("x")}}, false), want: ErrUnsafePath},
		"newline":             {zip: zipBytes(t, []testFile{{name: "a\nb", data: []byte("x")}}, false), want: ErrUnsafePath},
		"duplicate":           {zip: zipBytes(t, []testFile{{name: "a", data: []byte("1")}, {name: "a", data: []byte("2")}}, false), want: ErrDuplicate},
		"file and directory":  {zip: zipBytes(t, []testFile{{name: "a", data: []byte("1")}, {name: "a/b", data: []byte("2")}}, false), want: ErrDuplicate},
		"truncated tail":      {zip: okZip[:len(okZip)-10], want: ErrFormat},
		"truncated half":      {zip: okZip[:len(okZip)/2], want: ErrFormat},
		"empty input":         {zip: nil, want: ErrFormat},
		"not a zip":           {zip: []byte(strings.Repeat("not a zip archive\n", 10)), want: ErrFormat},
		"size too small":      {zip: patchCentral(t, okZip, "c", 24, 50), want: ErrFormat},
		"size too large":      {zip: patchCentral(t, okZip, "c", 24, 150), want: ErrFormat},
		"bad crc":             {zip: patchCentral(t, okZip, "c", 16, 12345), want: ErrFormat},
		"encrypted":           {zip: patchCentral(t, okZip, "c", 8, 0x0001|8<<16), want: ErrUnsupported},
		"offset out of range": {zip: patchCentral(t, okZip, "c", 42, 1<<30), want: ErrFormat},
		"symlink entry":       {zip: withMode(os.ModeSymlink | 0o777)},
		"device entry":        {zip: withMode(os.ModeDevice | 0o644), want: ErrUnsupported},
		"bomb ratio":          {zip: zeros, want: ErrLimit},
		"bomb total":          {zip: zipBytes(t, []testFile{{name: "big", data: pseudoBinary(9, 3<<20)}}, false), opts: Options{MaxSize: 1 << 20}, want: ErrLimit},
		"too many files":      {zip: okZip, opts: Options{MaxFiles: 1}, want: ErrLimit},
		"bomb ratio allowed":  {zip: zeros, opts: Options{MaxRatio: -1}},
		"more records than declared": {zip: func() []byte {
			z := bytes.Clone(okZip) // two entries; the end record says one
			binary.LittleEndian.PutUint16(z[len(z)-22+8:], 1)
			binary.LittleEndian.PutUint16(z[len(z)-22+10:], 1)
			return z
		}(), want: ErrFormat},
		"ok": {zip: okZip},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := tt.opts.HashZipReader(context.Background(), bytes.NewReader(tt.zip), int64(len(tt.zip)))
			if tt.want == nil {
				if err != nil {
					t.Fatalf("HashZipReader: %v", err)
				}
				if string(got.ZH) != sha256Hex(tt.zip) {
					t.Errorf("ZH = %v; want %v", got.ZH, sha256Hex(tt.zip))
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("HashZipReader: error %v; want one wrapping %v", err, tt.want)
			}
			var pe *PackageError
			if !errors.As(err, &pe) || pe.Path == "" {
				t.Errorf("error %v does not name the archive", err)
			}
		})
	}
}

// TestZipSizeLieStreamed checks the streaming path (used for entries above
// 1 MiB compressed) against declared sizes that lie.
func TestZipSizeLieStreamed(t *testing.T) {
	saved := smallEntry
	smallEntry = 0 // every entry through the streaming path
	defer func() { smallEntry = saved }()
	data := pseudoBinary(4, 1<<20+1234)
	z := zipBytes(t, []testFile{{name: "big", data: data}}, false)
	for _, size := range []uint32{uint32(len(data)) - 1, uint32(len(data)) + 1} {
		bad := patchCentral(t, z, "big", 24, size)
		_, err := Options{}.HashZipReader(context.Background(), bytes.NewReader(bad), int64(len(bad)))
		if !errors.Is(err, ErrFormat) {
			t.Errorf("declared size %d of %d: error %v; want ErrFormat", size, len(data), err)
		}
	}
	// Corrupt the compressed data in the middle.
	bad := bytes.Clone(z)
	for i := len(bad) / 3; i < len(bad)/3+1000; i++ {
		bad[i] ^= 0x5a
	}
	if _, err := (Options{}).HashZipReader(context.Background(), bytes.NewReader(bad), int64(len(bad))); !errors.Is(err, ErrFormat) {
		t.Errorf("corrupt deflate stream: error %v; want ErrFormat", err)
	}
}

func TestCanceled(t *testing.T) {
	z := zipBytes(t, []testFile{{name: "big", data: pseudoBinary(5, 256<<10)}, {name: "small", data: []byte("x")}}, false)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (Options{}).HashZipReader(ctx, bytes.NewReader(z), int64(len(z))); !errors.Is(err, context.Canceled) {
		t.Errorf("HashZipReader with a canceled context: %v", err)
	}
}

func TestDirSafety(t *testing.T) {
	tests := map[string]struct {
		setup func(t *testing.T, root, pkg string)
		want  error // nil: must succeed and equal dirhash
	}{
		"absolute symlink out": {func(t *testing.T, root, pkg string) {
			symlink(t, filepath.Join(root, "outside"), filepath.Join(pkg, "link"))
		}, ErrSymlinkOutside},
		"relative symlink out": {func(t *testing.T, root, pkg string) {
			symlink(t, "../outside", filepath.Join(pkg, "link"))
		}, ErrSymlinkOutside},
		"symlink to a directory": {func(t *testing.T, root, pkg string) {
			symlink(t, "sub", filepath.Join(pkg, "link"))
		}, ErrUnsupported},
		"dangling symlink": {func(t *testing.T, root, pkg string) {
			symlink(t, "missing", filepath.Join(pkg, "link"))
		}, os.ErrNotExist},
		"symlink inside": {func(t *testing.T, root, pkg string) {
			symlink(t, "sub/f", filepath.Join(pkg, "link"))
		}, nil},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			pkg := filepath.Join(root, "pkg")
			writeTree(t, pkg, []testFile{{name: "sub/f", data: []byte("f\n")}, {name: "g", data: []byte("g\n")}})
			writeTree(t, root, []testFile{{name: "outside", data: []byte("secret\n")}})
			tt.setup(t, root, pkg)
			got, err := H1Dir(pkg)
			gotFS, errFS := H1FS(os.DirFS(pkg))
			if tt.want == nil {
				want := dirhashDir(t, pkg)
				if err != nil || string(got) != want || errFS != nil || string(gotFS) != want {
					t.Errorf("H1Dir = %v, %v; H1FS = %v, %v; want %v", got, err, gotFS, errFS, want)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("H1Dir: error %v; want %v", err, tt.want)
			}
			if !errors.Is(errFS, tt.want) {
				t.Errorf("H1FS: error %v; want %v", errFS, tt.want)
			}
		})
	}
	t.Run("unreadable file", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("permissions do not apply to root; the dangling symlink case covers open errors")
		}
		pkg := t.TempDir()
		writeTree(t, pkg, []testFile{{name: "f", data: []byte("f")}})
		if err := os.Chmod(filepath.Join(pkg, "f"), 0); err != nil {
			t.Fatal(err)
		}
		if _, err := H1Dir(pkg); !errors.Is(err, os.ErrPermission) {
			t.Errorf("H1Dir: error %v; want permission denied", err)
		}
	})
	t.Run("not a directory", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "f")
		writeTree(t, filepath.Dir(f), []testFile{{name: "f", data: nil}})
		if _, err := H1Dir(f); err == nil {
			t.Error("H1Dir of a regular file succeeded")
		}
	})
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symbolic links unavailable: %v", err)
	}
}

// failFS is a file system whose file "bad" fails when read, as an
// unreadable file does (the permission test above cannot run as root).
type failFS struct{ fstest.MapFS }

type failFile struct{ fs.File }

var errUnreadable = errors.New("input/output error")

func (f failFile) Read([]byte) (int, error) { return 0, errUnreadable }

func (f failFS) Open(name string) (fs.File, error) {
	r, err := f.MapFS.Open(name)
	if err == nil && name == "sub/bad" {
		return failFile{r}, nil
	}
	return r, err
}

func TestFSUnreadable(t *testing.T) {
	fsys := failFS{fstest.MapFS{
		"a":       {Data: []byte("a")},
		"sub/bad": {Data: []byte("b")},
	}}
	_, err := H1FS(fsys)
	var pe *PackageError
	if !errors.Is(err, errUnreadable) || !errors.As(err, &pe) || pe.Entry != "sub/bad" {
		t.Errorf("H1FS: error %v; want the read error, naming the entry sub/bad", err)
	}
}

// TestEndRecordCommentPastTheEnd: the last end of central directory
// signature decides, as in archive/zip (which OpenTofu hashes with). An
// empty archive followed by a second signature whose comment would run
// past the end of the file is refused by archive/zip; it was accepted here
// (the earlier, complete record was taken), found by FuzzHashZip. Both
// must refuse it; the complete record alone is accepted by both.
func TestEndRecordCommentPastTheEnd(t *testing.T) {
	empty := make([]byte, 22)
	binary.LittleEndian.PutUint32(empty, 0x06054b50)
	bad := make([]byte, 22)
	binary.LittleEndian.PutUint32(bad, 0x06054b50)
	binary.LittleEndian.PutUint16(bad[20:], 100) // 100 bytes of comment, none there
	for _, tc := range []struct {
		name string
		data []byte
		ok   bool
	}{
		{"empty archive", empty, true},
		{"then a record whose comment runs past the end", append(append([]byte{}, empty...), bad...), false},
	} {
		_, zerr := zip.NewReader(bytes.NewReader(tc.data), int64(len(tc.data)))
		if (zerr == nil) != tc.ok {
			t.Fatalf("%s: archive/zip says %v, the test expects ok=%v", tc.name, zerr, tc.ok)
		}
		_, err := Options{}.HashZipReader(context.Background(), bytes.NewReader(tc.data), int64(len(tc.data)))
		if (err == nil) != tc.ok {
			t.Errorf("%s: HashZipReader = %v, want ok=%v like archive/zip", tc.name, err, tc.ok)
		}
	}
}
