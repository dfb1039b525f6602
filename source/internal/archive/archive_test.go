package archive

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tflock/tflock/source"
)

type entry struct {
	name, body, link string
	mode             int64
}

func zipOf(t testing.TB, entries []entry) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name}
		switch {
		case e.link != "":
			h.SetMode(os.ModeSymlink | 0o777)
			e.body = e.link
		case e.mode != 0:
			h.SetMode(os.FileMode(e.mode))
		default:
			h.SetMode(0o644)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func tgzOf(t testing.TB, entries []entry) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.body)), Typeflag: tar.TypeReg}
		if e.link != "" {
			h = &tar.Header{Name: e.name, Linkname: e.link, Typeflag: tar.TypeSymlink, Mode: 0o777}
		}
		if e.mode != 0 {
			h.Mode = e.mode
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.body)); err != nil {
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

func extract(format string, data []byte, dir string, o Options) error {
	if format == "zip" {
		return ExtractZip(context.Background(), bytes.NewReader(data), int64(len(data)), dir, o)
	}
	return ExtractTarGz(context.Background(), bytes.NewReader(data), dir, o)
}

func TestExtract(t *testing.T) {
	links := Options{Symlinks: true}
	for name, tc := range map[string]struct {
		entries []entry
		opts    Options
		unsafe  bool
	}{
		"Plain":        {entries: []entry{{name: "a.txt", body: "a"}, {name: "d/b.txt", body: "b"}, {name: "tool", body: "x", mode: 0o755}}},
		"DotSlash":     {entries: []entry{{name: "./a.txt", body: "a"}}},
		"DotDot":       {entries: []entry{{name: "../evil", body: "x"}}, unsafe: true},
		"NestedDotDot": {entries: []entry{{name: "a/../../evil", body: "x"}}, unsafe: true},
		"Absolute":     {entries: []entry{{name: "/etc/evil", body: "x"}}, unsafe: true},
		"Backslash":    {entries: []entry{{name: "..\\evil", body: "x"}}, unsafe: true},
		"WindowsDrive": {entries: []entry{{name: "C:/evil", body: "x"}}, unsafe: true},
		"Duplicate":    {entries: []entry{{name: "a.tf", body: "1"}, {name: "./a.tf", body: "2"}}, unsafe: true},
		"LinkRefused":  {entries: []entry{{name: "a.txt", body: "a"}, {name: "l", link: "a.txt"}}, unsafe: true},
		"LinkInside":   {entries: []entry{{name: "a.txt", body: "a"}, {name: "l", link: "a.txt"}}, opts: links},
		"LinkOutside":  {entries: []entry{{name: "l", link: "../outside"}}, opts: links, unsafe: true},
		"LinkAbsolute": {entries: []entry{{name: "l", link: "/etc/passwd"}}, opts: links, unsafe: true},
		"ThroughLink":  {entries: []entry{{name: "d", link: "."}, {name: "d/x", body: "x"}}, opts: links, unsafe: true},
		"LinkChain":    {entries: []entry{{name: "sub", link: "."}, {name: "l", link: "sub/.."}}, opts: links, unsafe: true},
	} {
		for format, data := range map[string][]byte{"zip": zipOf(t, tc.entries), "tgz": tgzOf(t, tc.entries)} {
			if format == "zip" && slices.ContainsFunc(tc.entries, func(e entry) bool { return e.link != "" }) {
				continue // a zip's links are files: TestOnePassReaderInstallsTheExtractorsTree
			}
			t.Run(name+"/"+format, func(t *testing.T) {
				base := t.TempDir()
				dir := filepath.Join(base, "out")
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				err := extract(format, data, dir, tc.opts)
				if entries, _ := os.ReadDir(base); len(entries) != 1 {
					t.Errorf("something was written next to the destination: %v", entries)
				}
				if tc.unsafe {
					var ae *Error
					if !errors.Is(err, ErrUnsafe) || !errors.As(err, &ae) {
						t.Errorf("got %v, want an *Error wrapping ErrUnsafe", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range tc.entries {
					p := filepath.Join(dir, e.name)
					fi, err := os.Lstat(p)
					if err != nil {
						t.Error(err)
						continue
					}
					if e.mode&0o100 != 0 && fi.Mode()&0o100 == 0 {
						t.Errorf("%s lost its executable bit", e.name)
					}
					if e.mode == 0 && e.link == "" && fi.Mode().Perm() != 0o644 {
						t.Errorf("%s has mode %v, want 0644", e.name, fi.Mode().Perm())
					}
					if e.link != "" {
						if got, _ := os.Readlink(p); got != e.link {
							t.Errorf("link %s → %q, want %q", e.name, got, e.link)
						}
					} else if b, _ := os.ReadFile(p); string(b) != e.body {
						t.Errorf("%s = %q, want %q", e.name, b, e.body)
					}
				}
			})
		}
	}
}

func TestErrorNamesEntry(t *testing.T) {
	data := zipOf(t, []entry{{name: "ok", body: "x"}, {name: "../evil.tf", body: "x"}})
	err := extract("zip", data, t.TempDir(), Options{})
	var ae *Error
	if !errors.As(err, &ae) || ae.Entry != "../evil.tf" || !strings.Contains(err.Error(), `"../evil.tf"`) {
		t.Errorf("got %v, want an error naming the entry ../evil.tf", err)
	}
}

func TestLimits(t *testing.T) {
	for _, format := range []string{"zip", "tgz"} {
		of := map[string]func(testing.TB, []entry) []byte{"zip": zipOf, "tgz": tgzOf}[format]
		big := of(t, []entry{{name: "a", body: strings.Repeat("x", 1000)}})
		if err := extract(format, big, t.TempDir(), Options{Limits: source.Limits{MaxBytes: 999}}); !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s size limit: got %v, want ErrTooLarge", format, err)
		}
		if err := extract(format, big, t.TempDir(), Options{Limits: source.Limits{MaxBytes: 1000}}); err != nil {
			t.Errorf("%s size exactly at the limit: %v", format, err)
		}
		across := of(t, []entry{{name: "a", body: strings.Repeat("x", 600)}, {name: "b", body: strings.Repeat("x", 600)}})
		if err := extract(format, across, t.TempDir(), Options{Limits: source.Limits{MaxBytes: 1000}}); !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s size limit across files: got %v, want ErrTooLarge", format, err)
		}
		many := of(t, []entry{{name: "a", body: "a"}, {name: "b", body: "b"}, {name: "c", body: "c"}})
		if err := extract(format, many, t.TempDir(), Options{Limits: source.Limits{MaxEntries: 2}}); !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s file limit: got %v, want ErrTooLarge", format, err)
		}
		if err := extract(format, many, t.TempDir(), Options{Limits: source.Limits{MaxEntries: 3}}); err != nil {
			t.Errorf("%s file count exactly at the limit: %v", format, err)
		}
	}
}

func TestNotAnArchive(t *testing.T) {
	for _, format := range []string{"zip", "tgz"} {
		if err := extract(format, []byte("this is not an archive"), t.TempDir(), Options{}); !errors.Is(err, ErrUnsafe) {
			t.Errorf("%s: got %v, want ErrUnsafe", format, err)
		}
	}
}

func TestCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	data := zipOf(t, []entry{{name: "a", body: "a"}})
	if err := ExtractZip(ctx, bytes.NewReader(data), int64(len(data)), t.TempDir(), Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

func TestExtractZipFile(t *testing.T) {
	zp := filepath.Join(t.TempDir(), "p.zip")
	if err := os.WriteFile(zp, zipOf(t, []entry{{name: "d/f", body: "body"}}), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := ExtractZipFile(context.Background(), zp, dir, Options{}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "d", "f")); err != nil || string(b) != "body" {
		t.Errorf("d/f = %q, %v", b, err)
	}
	if err := ExtractZipFile(context.Background(), filepath.Join(t.TempDir(), "missing.zip"), dir, Options{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: got %v", err)
	}
}

func TestCleanName(t *testing.T) {
	tests := map[string]string{ // name → cleaned ("!" for rejected)
		"a.tf":          "a.tf",
		"dir/":          "dir",
		"./a/b.tf":      "a/b.tf",
		"a//b":          "a/b",
		"./":            "",
		"../a":          "!",
		"a/../../b":     "!",
		"a/..":          "!",
		"/abs":          "!",
		`a\b`:           "!",
		"C:/x":          "!",
		"":              "!",
		"nul\x00byte":   "!",
		"new\nline":     "!",
		"bell\a":        "!",
		"..hidden/file": "..hidden/file",
	}
	for in, want := range tests {
		got, err := CleanName(in)
		if want == "!" {
			if !errors.Is(err, ErrUnsafe) {
				t.Errorf("CleanName(%q) = %q, %v; want ErrUnsafe", in, got, err)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("CleanName(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestFormatOf(t *testing.T) {
	for in, want := range map[string]Format{"a.zip": Zip, "A.TAR.GZ": TarGz, "x.tgz": TarGz, "x.tar": Unknown, "": Unknown} {
		if got := FormatOf(in); got != want {
			t.Errorf("FormatOf(%q) = %v, want %v", in, got, want)
		}
	}
}

// FuzzExtractZip checks that no archive makes extraction panic or put
// anything outside the destination, with or without symbolic links.
func FuzzExtractZip(f *testing.F) {
	f.Add(zipOf(f, []entry{{name: "a.txt", body: "a"}, {name: "d/b", body: "b"}}))
	f.Add(zipOf(f, []entry{{name: "../x", body: "a"}}))
	f.Add(zipOf(f, []entry{{name: "l", link: "../x"}}))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, links := range []bool{false, true} {
			base := t.TempDir()
			dir := filepath.Join(base, "out")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			err := ExtractZip(context.Background(), bytes.NewReader(data), int64(len(data)), dir, Options{Limits: source.Limits{MaxBytes: 1 << 20, MaxEntries: 100}, Symlinks: links})
			if entries, _ := os.ReadDir(base); len(entries) != 1 {
				t.Fatalf("extraction wrote outside its destination: %v", entries)
			}
			if err != nil {
				continue // a refusal or a file-system error; nothing escaped
			}
			_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err != nil || d.Type()&os.ModeSymlink == 0 {
					return nil
				}
				if !links {
					t.Errorf("symbolic link %s extracted although links are refused", p)
				}
				target, _ := filepath.EvalSymlinks(p)
				if rel, err := filepath.Rel(dir, target); target != "" && (err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator))) {
					t.Errorf("symbolic link %s escapes to %s", p, target)
				}
				return nil
			})
		}
	})
}

// FuzzCleanName checks that every accepted name stays inside the root.
func FuzzCleanName(f *testing.F) {
	for _, s := range []string{"a.tf", "../x", "a/../../b", "/abs", `a\b`, "./", "C:/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		clean, err := CleanName(name)
		if err != nil {
			if !errors.Is(err, ErrUnsafe) {
				t.Errorf("CleanName(%q): error %v does not wrap ErrUnsafe", name, err)
			}
			return
		}
		root := filepath.FromSlash("/root/dir")
		target := filepath.Join(root, filepath.FromSlash(clean))
		rel, rerr := filepath.Rel(root, target)
		if rerr != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(clean) {
			t.Errorf("CleanName(%q) = %q escapes the directory", name, clean)
		}
	})
}
