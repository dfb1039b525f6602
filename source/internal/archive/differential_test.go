package archive

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
)

// rawEntry is one zip entry written with the creator and external
// attributes given, as tools other than Go's archive/zip write them.
type rawEntry struct {
	name    string
	body    string
	creator uint16 // high byte of the "version made by" field
	attrs   uint32 // external file attributes
}

// The "version made by" hosts that archive/zip reads attributes for.
const (
	creatorFAT    = 0
	creatorUnix   = 3
	creatorNTFS   = 11
	creatorMacOSX = 19
	msdosDir      = 0x10
)

// rawZip writes the entries, deflated, with exactly their creator and
// attributes (zip.Writer.CreateRaw keeps both). archive/zip writes no data
// under a name ending in "/": such an entry is written under the name with
// its last byte 0x7f, patched afterwards.
func rawZip(t testing.TB, entries []rawEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	var patches [][2]string
	for _, e := range entries {
		if strings.HasSuffix(e.name, "/") {
			p := e.name[:len(e.name)-1] + "\x7f"
			patches = append(patches, [2]string{p, e.name})
			e.name = p
		}
		// Deflate the body through a throw-away archive, then copy its
		// compressed bytes: CreateRaw takes them as they are.
		var tmp bytes.Buffer
		tw := zip.NewWriter(&tmp)
		w, err := tw.CreateHeader(&zip.FileHeader{Name: "x", Method: zip.Deflate})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
		zr, err := zip.NewReader(bytes.NewReader(tmp.Bytes()), int64(tmp.Len()))
		if err != nil {
			t.Fatal(err)
		}
		f := zr.File[0]
		h := f.FileHeader
		h.Name = e.name
		h.CreatorVersion = e.creator<<8 | 20
		h.ExternalAttrs = e.attrs
		h.Flags &^= 0x8 // sizes in the headers
		rw, err := zw.CreateRaw(&h)
		if err != nil {
			t.Fatal(err)
		}
		rc, err := f.OpenRaw()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(rw, rc); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	for _, p := range patches {
		data = bytes.ReplaceAll(data, []byte(p[0]), []byte(p[1]))
	}
	return data
}

// node is what a tree holds at one path: its type and permission bits,
// and a file's contents or a link's target.
type node struct {
	mode fs.FileMode
	data string
}

func treeNodes(t testing.TB, dir string) map[string]node {
	t.Helper()
	got := map[string]node{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		n := node{mode: info.Mode().Type() | info.Mode().Perm()}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			n.mode = fs.ModeSymlink // a link's own bits vary by system
			n.data, err = os.Readlink(p)
		case info.Mode().IsRegular():
			var b []byte
			b, err = os.ReadFile(p)
			n.data = string(b)
		}
		got[filepath.ToSlash(rel)] = n
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// The cache's one-pass reader (hash.Options.InstallReader) and the
// extractor built on archive/zip install the same tree from the same
// archive, the tree OpenTofu 1.12.6 installs (checked by hand with its
// binary and a filesystem mirror: a Mac OS X creator's 0755 file is 0755,
// an MS-DOS directory with data an empty directory, "dot/./x" is dot/x, and
// a symbolic link, of either creator, a regular file holding its target),
// and the h1: the one-pass reader computes is the h1: of that tree.
func TestOnePassReaderInstallsTheExtractorsTree(t *testing.T) {
	const exe = 0o100755 << 16
	const file = 0o100644 << 16
	const link = 0o120777 << 16
	cases := map[string]struct {
		entries []rawEntry
		want    map[string]node // what both install
	}{
		// MS-DOS attributes mark a directory, whatever the name: archive/zip
		// makes it a directory, whose data nobody reads.
		"msdos directory with contents": {
			entries: []rawEntry{
				{name: "docs", body: "not a file", creator: creatorNTFS, attrs: msdosDir},
				{name: "docs/index.md", body: "index\n", creator: creatorNTFS},
			},
			want: map[string]node{"docs": {mode: fs.ModeDir | 0o755}, "docs/index.md": {mode: 0o644, data: "index\n"}},
		},
		"fat directory with contents, alone": {
			entries: []rawEntry{{name: "empty", body: "data", creator: creatorFAT, attrs: msdosDir}},
			want:    map[string]node{"empty": {mode: fs.ModeDir | 0o755}},
		},
		"directory name with contents": {
			entries: []rawEntry{{name: "d/", body: "data", creator: creatorUnix, attrs: 0o040755 << 16}},
			want:    map[string]node{"d": {mode: fs.ModeDir | 0o755}},
		},
		"unix directory mode without a slash": {
			entries: []rawEntry{{name: "d", creator: creatorUnix, attrs: 0o040755 << 16}, {name: "d/f", body: "f", creator: creatorUnix, attrs: file}},
			want:    map[string]node{"d": {mode: fs.ModeDir | 0o755}, "d/f": {mode: 0o644, data: "f"}},
		},
		// A Mac OS X creator's attributes are Unix modes, as archive/zip reads
		// them.
		"mac os x executable": {
			entries: []rawEntry{
				{name: "terraform-provider-x", body: "#!/bin/sh\n", creator: creatorMacOSX, attrs: exe},
				{name: "README.md", body: "readme\n", creator: creatorMacOSX, attrs: file},
			},
			want: map[string]node{"terraform-provider-x": {mode: 0o755, data: "#!/bin/sh\n"}, "README.md": {mode: 0o644, data: "readme\n"}},
		},
		"mac os x directory": {
			entries: []rawEntry{{name: "bin", creator: creatorMacOSX, attrs: 0o040755 << 16}, {name: "bin/tool", body: "t", creator: creatorMacOSX, attrs: exe}},
			want:    map[string]node{"bin": {mode: fs.ModeDir | 0o755}, "bin/tool": {mode: 0o755, data: "t"}},
		},
		"mac os x symbolic link": {
			entries: []rawEntry{
				{name: "bin/tool", body: "t", creator: creatorMacOSX, attrs: exe},
				{name: "tool", body: "bin/tool", creator: creatorMacOSX, attrs: link},
			},
			want: map[string]node{"bin": {mode: fs.ModeDir | 0o755}, "bin/tool": {mode: 0o755, data: "t"}, "tool": {mode: 0o755, data: "bin/tool"}},
		},
		"unix symbolic link": {
			entries: []rawEntry{
				{name: "bin/tool", body: "t", creator: creatorUnix, attrs: exe},
				{name: "tool", body: "bin/tool", creator: creatorUnix, attrs: link},
			},
			want: map[string]node{"bin": {mode: fs.ModeDir | 0o755}, "bin/tool": {mode: 0o755, data: "t"}, "tool": {mode: 0o755, data: "bin/tool"}},
		},
		// One name rule: "." and empty elements are cleaned away by both.
		"unclean names": {
			entries: []rawEntry{
				{name: "./", creator: creatorUnix, attrs: 0o040755 << 16},
				{name: "./main.tf", body: "m", creator: creatorUnix, attrs: file},
				{name: "modules//a/./b.tf", body: "b", creator: creatorUnix, attrs: file},
			},
			want: map[string]node{"main.tf": {mode: 0o644, data: "m"}, "modules": {mode: fs.ModeDir | 0o755}, "modules/a": {mode: fs.ModeDir | 0o755}, "modules/a/b.tf": {mode: 0o644, data: "b"}},
		},
		// No link is created from a zip, wherever it points.
		"links that would leave": {
			entries: []rawEntry{
				{name: "up", body: "../../outside", creator: creatorUnix, attrs: link},
				{name: "abs", body: "/etc/passwd", creator: creatorMacOSX, attrs: link},
				{name: "self", body: ".", creator: creatorUnix, attrs: link},
			},
			want: map[string]node{"up": {mode: 0o755, data: "../../outside"}, "abs": {mode: 0o755, data: "/etc/passwd"}, "self": {mode: 0o755, data: "."}},
		},
		// MS-DOS attributes carry no executable bit.
		"ntfs file": {
			entries: []rawEntry{{name: "f.exe", body: "MZ", creator: creatorNTFS, attrs: 0x20}},
			want:    map[string]node{"f.exe": {mode: 0o644, data: "MZ"}},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			data := rawZip(t, c.entries)
			ctx := context.Background()

			xdir := t.TempDir()
			if err := ExtractZip(ctx, bytes.NewReader(data), int64(len(data)), xdir, Options{Symlinks: true}); err != nil {
				t.Fatalf("ExtractZip: %v", err)
			}
			if got := treeNodes(t, xdir); !maps.Equal(got, c.want) {
				t.Errorf("ExtractZip installed %v\nwant %v", got, c.want)
			}
			want, err := hash.H1Dir(xdir)
			if err != nil {
				t.Fatal(err)
			}

			idir := filepath.Join(t.TempDir(), "pkg")
			sum, err := hash.Options{}.InstallReader(ctx, "test.zip", bytes.NewReader(data), int64(len(data)), idir, nil)
			if err != nil {
				t.Fatalf("InstallReader: %v", err)
			}
			if got := treeNodes(t, idir); !maps.Equal(got, c.want) {
				t.Errorf("InstallReader installed %v\nwant %v", got, c.want)
			}
			if sum.H1 != want {
				t.Errorf("InstallReader h1 = %s, want the installed tree's %s", sum.H1, want)
			}
			if hs, err := (hash.Options{}).HashZipReader(ctx, bytes.NewReader(data), int64(len(data))); err != nil || hs.H1 != want {
				t.Errorf("HashZipReader h1 = %s, %v; want the installed tree's %s", hs.H1, err, want)
			}
		})
	}
}

// Both readers refuse the same archives with the same errors: each refusal
// matches the hash package's sentinel, whichever reader made it, and a
// limit is source.ErrTooLarge (which is hash.ErrLimit) from both, with the
// same default limits.
func TestOneSetOfErrorsAndLimits(t *testing.T) {
	const file = 0o100644 << 16
	many := make([]entry, source.DefaultMaxEntries+1)
	for i := range many {
		many[i] = entry{name: fmt.Sprintf("f%d", i)}
	}
	cases := map[string]struct {
		data []byte
		want error
	}{
		"dot-dot":       {rawZip(t, []rawEntry{{name: "../x", body: "x", creator: creatorUnix, attrs: file}}), hash.ErrUnsafePath},
		"control":       {rawZip(t, []rawEntry{{name: "a\x01b", body: "x", creator: creatorUnix, attrs: file}}), hash.ErrUnsafePath},
		"duplicate":     {rawZip(t, []rawEntry{{name: "a", body: "x", creator: creatorUnix, attrs: file}, {name: "./a", body: "y", creator: creatorUnix, attrs: file}}), hash.ErrDuplicate},
		"not a zip":     {[]byte("this is not a zip archive, not at all, not even close"), hash.ErrFormat},
		"default limit": {zipOf(t, many), source.ErrTooLarge},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			xerr := ExtractZip(ctx, bytes.NewReader(c.data), int64(len(c.data)), t.TempDir(), Options{})
			if !errors.Is(xerr, c.want) {
				t.Errorf("ExtractZip = %v, want an error matching %v", xerr, c.want)
			}
			_, ierr := hash.Options{}.InstallReader(ctx, "test.zip", bytes.NewReader(c.data), int64(len(c.data)), filepath.Join(t.TempDir(), "pkg"), nil)
			if !errors.Is(ierr, c.want) {
				t.Errorf("InstallReader = %v, want an error matching %v", ierr, c.want)
			}
			if errors.Is(c.want, hash.ErrLimit) && !(errors.Is(xerr, hash.ErrLimit) && errors.Is(ierr, source.ErrTooLarge)) {
				t.Errorf("the limit errors %v and %v do not match both hash.ErrLimit and source.ErrTooLarge", xerr, ierr)
			}
		})
	}
}
