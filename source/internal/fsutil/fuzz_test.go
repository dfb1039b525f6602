package fsutil

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tflock/tflock/source/internal/archive"
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
	for _, name := range []string{"../evil", "/abs", `a\..\b`, "a/../../b", "c:/x", "./ok.txt"} {
		dir := t.TempDir()
		zp := filepath.Join(t.TempDir(), "z.zip")
		if err := os.WriteFile(zp, zipOf(t, "ok.txt", name), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "out")
		if err := os.Mkdir(out, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := ExtractZip(context.Background(), zp, out, 0); !errors.Is(err, archive.ErrUnsafe) || !strings.Contains(err.Error(), strconv.Quote(name)) {
			t.Errorf("%q: got %v, want an archive.ErrUnsafe error naming the entry", name, err)
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
	if err := ExtractZip(context.Background(), zp, t.TempDir(), 5); !errors.Is(err, archive.ErrTooLarge) {
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
