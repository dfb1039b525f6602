package archive

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"testing"
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
		w.Write([]byte(e.body))
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
		tw.Write([]byte(e.body))
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

func TestExtract(t *testing.T) {
	for name, tc := range map[string]struct {
		entries []entry
		unsafe  bool
	}{
		"Plain":        {entries: []entry{{name: "a.txt", body: "a"}, {name: "d/b.txt", body: "b"}, {name: "tool", body: "x", mode: 0o755}}},
		"DotDot":       {entries: []entry{{name: "../evil", body: "x"}}, unsafe: true},
		"NestedDotDot": {entries: []entry{{name: "a/../../evil", body: "x"}}, unsafe: true},
		"Absolute":     {entries: []entry{{name: "/etc/evil", body: "x"}}, unsafe: true},
		"Backslash":    {entries: []entry{{name: "..\\evil", body: "x"}}, unsafe: true},
		"LinkInside":   {entries: []entry{{name: "a.txt", body: "a"}, {name: "l", link: "a.txt"}}},
		"LinkOutside":  {entries: []entry{{name: "l", link: "../outside"}}, unsafe: true},
		"LinkAbsolute": {entries: []entry{{name: "l", link: "/etc/passwd"}}, unsafe: true},
		"ThroughLink":  {entries: []entry{{name: "d", link: "."}, {name: "d/x", body: "x"}}, unsafe: true},
		"LinkChain":    {entries: []entry{{name: "sub", link: "."}, {name: "l", link: "sub/.."}}, unsafe: true},
		"WindowsDrive": {entries: []entry{{name: "C:/evil", body: "x"}}, unsafe: true},
	} {
		for format, data := range map[string][]byte{"zip": zipOf(t, tc.entries), "tgz": tgzOf(t, tc.entries)} {
			t.Run(name+"/"+format, func(t *testing.T) {
				dir := t.TempDir()
				var err error
				if format == "zip" {
					err = ExtractZip(bytes.NewReader(data), int64(len(data)), dir, Limits{})
				} else {
					err = ExtractTarGz(bytes.NewReader(data), dir, Limits{})
				}
				if tc.unsafe {
					if !errors.Is(err, ErrUnsafe) {
						t.Errorf("got %v, want ErrUnsafe", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range tc.entries {
					fi, err := os.Lstat(filepath.Join(dir, e.name))
					if err != nil {
						t.Error(err)
						continue
					}
					if e.mode&0o100 != 0 && fi.Mode()&0o100 == 0 {
						t.Errorf("%s lost its executable bit", e.name)
					}
					if e.body != "" && e.link == "" {
						b, _ := os.ReadFile(filepath.Join(dir, e.name))
						if string(b) != e.body {
							t.Errorf("%s = %q, want %q", e.name, b, e.body)
						}
					}
				}
			})
		}
	}
}

func TestLimits(t *testing.T) {
	big := zipOf(t, []entry{{name: "a", body: string(make([]byte, 1000))}})
	if err := ExtractZip(bytes.NewReader(big), int64(len(big)), t.TempDir(), Limits{MaxBytes: 999}); !errors.Is(err, ErrUnsafe) {
		t.Errorf("size limit: got %v", err)
	}
	many := tgzOf(t, []entry{{name: "a", body: "a"}, {name: "b", body: "b"}, {name: "c", body: "c"}})
	if err := ExtractTarGz(bytes.NewReader(many), t.TempDir(), Limits{MaxFiles: 2}); !errors.Is(err, ErrUnsafe) {
		t.Errorf("file limit: got %v", err)
	}
	dup := zipOf(t, []entry{{name: "a", body: "1"}, {name: "a", body: "2"}})
	if err := ExtractZip(bytes.NewReader(dup), int64(len(dup)), t.TempDir(), Limits{}); err == nil {
		t.Error("a duplicate entry was accepted")
	}
}

func TestFormatOf(t *testing.T) {
	for in, want := range map[string]Format{"a.zip": Zip, "A.TAR.GZ": TarGz, "x.tgz": TarGz, "x.tar": Unknown, "": Unknown} {
		if got := FormatOf(in); got != want {
			t.Errorf("FormatOf(%q) = %v, want %v", in, got, want)
		}
	}
}

func FuzzExtractZip(f *testing.F) {
	f.Add(zipOf(f, []entry{{name: "a.txt", body: "a"}, {name: "d/b", body: "b"}}))
	f.Add(zipOf(f, []entry{{name: "../x", body: "a"}}))
	f.Add(zipOf(f, []entry{{name: "l", link: "../x"}}))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := ExtractZip(bytes.NewReader(data), int64(len(data)), dir, Limits{MaxBytes: 1 << 20, MaxFiles: 100}); err != nil {
			return
		}
		// Whatever was extracted lies inside dir.
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.Type()&os.ModeSymlink != 0 {
				target, _ := filepath.EvalSymlinks(p)
				if rel, err := filepath.Rel(dir, target); target != "" && (err != nil || rel == ".." || len(rel) > 2 && rel[:3] == "../") {
					t.Errorf("symlink %s escapes to %s", p, target)
				}
			}
			return nil
		})
	})
}
