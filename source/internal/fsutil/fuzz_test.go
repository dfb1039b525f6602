package fsutil

import (
	"archive/zip"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func zipOf(t testing.TB, names ...string) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range names {
		w, err := zw.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write([]byte("content of " + n))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestExtractZipRejectsUnsafeNames(t *testing.T) {
	for _, name := range []string{"../evil", "/abs", `a\..\b`, "a/../../b", "c:/x", "./a"} {
		dir := t.TempDir()
		zp := filepath.Join(t.TempDir(), "z.zip")
		if err := os.WriteFile(zp, zipOf(t, "ok.txt", name), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "out")
		if err := os.Mkdir(out, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := ExtractZip(context.Background(), zp, out, 0); err == nil || !strings.Contains(err.Error(), "unsafe name") {
			t.Errorf("%q: got %v, want an unsafe-name error", name, err)
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != 1 {
			t.Errorf("%q: something was written next to the destination: %v", name, entries)
		}
	}
}

func TestExtractZipLimit(t *testing.T) {
	zp := filepath.Join(t.TempDir(), "z.zip")
	if err := os.WriteFile(zp, zipOf(t, "a", "b"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ExtractZip(context.Background(), zp, t.TempDir(), 5); err == nil {
		t.Error("the size limit was not enforced")
	}
	if err := ExtractZip(context.Background(), zp, t.TempDir(), 0); err != nil {
		t.Error(err)
	}
}

func TestPrepare(t *testing.T) {
	base := t.TempDir()
	nonEmpty := filepath.Join(base, "full")
	if err := os.MkdirAll(filepath.Join(nonEmpty, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Prepare(nonEmpty); err == nil {
		t.Error("a non-empty directory was accepted")
	}
	fresh := filepath.Join(base, "a", "b")
	cleanup, err := Prepare(fresh)
	if err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(fresh, "f"), nil, 0o644)
	cleanup()
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Error("cleanup left the directory it created")
	}
	existing := t.TempDir()
	cleanup, err = Prepare(existing)
	if err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(existing, "f"), nil, 0o644)
	cleanup()
	if entries, err := os.ReadDir(existing); err != nil || len(entries) != 0 {
		t.Errorf("cleanup of an existing directory: %v %v", entries, err)
	}
}

// FuzzExtractZip checks that no archive makes extraction panic or write
// outside the destination.
func FuzzExtractZip(f *testing.F) {
	f.Add(zipOf(f, "terraform-provider-x", "docs/README.md"))
	f.Add(zipOf(f, "../escape"))
	f.Fuzz(func(t *testing.T, data []byte) {
		base := t.TempDir()
		zp := filepath.Join(base, "in.zip")
		if err := os.WriteFile(zp, data, 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(base, "out")
		if err := os.Mkdir(out, 0o755); err != nil {
			t.Fatal(err)
		}
		_ = ExtractZip(context.Background(), zp, out, 1<<20)
		entries, err := os.ReadDir(base)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 2 {
			t.Fatalf("extraction wrote outside its destination: %v", entries)
		}
	})
}
