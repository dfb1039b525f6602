package cache_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"golang.org/x/mod/sumdb/dirhash"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
)

// zipEntry is one entry of a test archive: a file, or a symbolic link when
// link is set.
type zipEntry struct {
	name, body string
	link       bool
}

// writeZip writes a zip archive of the entries to path and returns its zh:
// and the h1: dirhash.HashZip gives it (the definitions of both).
func writeZip(t *testing.T, path string, entries []zipEntry) (zh, h1 hash.Hash) {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		h.SetMode(0o755)
		if e.link {
			h.SetMode(os.ModeSymlink | 0o777)
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
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := dirhash.HashZip(path, dirhash.Hash1)
	if err != nil {
		t.Fatal(err)
	}
	return hash.NewHash(hash.SchemeZH, sha256.Sum256(buf.Bytes())), hash.MustParseHash(s)
}

// archiveFetch hands the cache a zip archive of the entries, as a
// source.ArchiveFetcher does.
func archiveFetch(t *testing.T, entries []zipEntry, stated []hash.Hash, limits source.Limits) cache.FetchFunc {
	return func(ctx context.Context, dir string) (*source.Fetched, error) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		p := filepath.Join(dir, "package.zip")
		zh, _ := writeZip(t, p, entries)
		return &source.Fetched{Location: "test", Archive: p, Hashes: append([]hash.Hash{zh}, stated...), Limits: limits}, nil
	}
}

func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.Type()&os.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			got[filepath.ToSlash(rel)] = "-> " + target
			return err
		}
		b, err := os.ReadFile(p)
		got[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// A source that hands over its archive has it read once by the cache: the
// entry holds the archive's files (and nothing of the archive itself), its
// h1: is the archive's dirhash.HashZip, and the zh: is recorded.
func TestFillFromArchive(t *testing.T) {
	entries := []zipEntry{{name: "terraform-provider-null", body: "#!/bin/sh\necho null\n"}, {name: "docs/index.md", body: "docs\n"}}
	zh, h1 := writeZip(t, filepath.Join(t.TempDir(), "ref.zip"), entries)
	c, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e, hit, err := c.Fill(context.Background(), testPkg, []hash.Hash{zh}, archiveFetch(t, entries, []hash.Hash{h1}, source.Limits{}))
	if err != nil {
		t.Fatal(err)
	}
	if hit {
		t.Fatalf("hit = %v; want the fill to miss", hit)
	}
	if e.H1 != h1 {
		t.Errorf("entry h1 = %s, want the archive's %s", e.H1, h1)
	}
	hs := e.Hashes
	sort.Slice(hs, func(i, j int) bool { return hs[i] < hs[j] })
	if len(hs) != 2 || hs[0] != h1 || hs[1] != zh {
		t.Errorf("entry hashes = %v, want [%s %s]", hs, h1, zh)
	}
	want := map[string]string{"terraform-provider-null": "#!/bin/sh\necho null\n", "docs/index.md": "docs\n"}
	if got := treeOf(t, e.Dir); len(got) != len(want) || got["terraform-provider-null"] != want["terraform-provider-null"] || got["docs/index.md"] != want["docs/index.md"] {
		t.Errorf("entry holds %v, want %v", got, want)
	}
	if fi, err := os.Stat(filepath.Join(e.Dir, "terraform-provider-null")); err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("executable lost its mode: %v %v", fi, err)
	}
	// Hashing the stored tree gives its name: the tree installed is the
	// tree hashed.
	if got, err := hash.H1Dir(e.Dir); err != nil || got != h1 {
		t.Errorf("H1Dir(entry) = %s, %v; want %s", got, err, h1)
	}
	// Warm: found without fetching.
	if _, hit, err := c.Fill(context.Background(), testPkg, []hash.Hash{zh}, func(context.Context, string) (*source.Fetched, error) {
		t.Fatal("fetched again")
		return nil, nil
	}); err != nil || !hit {
		t.Errorf("second fill: hit %v, %v", hit, err)
	}
}

// What the source states about the archive is checked against what the
// cache computes: a wrong h1: or zh: stores nothing.
func TestFillFromArchiveChecksStatedHashes(t *testing.T) {
	entries := []zipEntry{{name: "terraform-provider-null", body: "null\n"}}
	other := []zipEntry{{name: "terraform-provider-null", body: "evil\n"}}
	otherZH, otherH1 := writeZip(t, filepath.Join(t.TempDir(), "other.zip"), other)
	for name, stated := range map[string]hash.Hash{"h1": otherH1, "zh": otherZH} {
		t.Run(name, func(t *testing.T) {
			c, err := cache.Open(t.TempDir(), cache.Options{})
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = c.Fill(context.Background(), testPkg, nil, archiveFetch(t, entries, []hash.Hash{stated}, source.Limits{}))
			if !errors.Is(err, source.ErrChecksumMismatch) {
				t.Fatalf("Fill = %v, want ErrChecksumMismatch", err)
			}
			if objs, _ := os.ReadDir(filepath.Join(c.Dir(), "objects")); len(objs) != 0 {
				t.Errorf("stored %d objects", len(objs))
			}
			if tmp, _ := os.ReadDir(filepath.Join(c.Dir(), "tmp")); len(tmp) != 0 {
				t.Errorf("left %d items in tmp/", len(tmp))
			}
		})
	}
}

// An archive with a symbolic link is read by the one-pass reader like any
// other: the link is installed as OpenTofu installs it, a regular file
// holding its target, and the h1: is that tree's, which is the archive's
// dirhash.HashZip (the h1: tofu records for it).
func TestFillFromArchiveWithSymlink(t *testing.T) {
	entries := []zipEntry{{name: "bin/tool", body: "tool\n"}, {name: "tool", body: "bin/tool", link: true}}
	_, h1 := writeZip(t, filepath.Join(t.TempDir(), "ref.zip"), entries)
	c, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e, _, err := c.Fill(context.Background(), testPkg, nil, archiveFetch(t, entries, nil, source.Limits{}))
	if err != nil {
		t.Fatal(err)
	}
	got := treeOf(t, e.Dir)
	if got["bin/tool"] != "tool\n" || got["tool"] != "bin/tool" {
		t.Errorf("entry holds %v", got)
	}
	want, err := dirhash.HashDir(e.Dir, "", dirhash.Hash1)
	if err != nil {
		t.Fatal(err)
	}
	if e.H1.String() != want || e.H1 != h1 {
		t.Errorf("h1 = %s, want the tree's %s and the archive's %s", e.H1, want, h1)
	}
}

// The source's limits apply to the archive it hands over.
func TestFillFromArchiveLimits(t *testing.T) {
	entries := []zipEntry{{name: "a", body: "aaaa"}, {name: "b", body: "bbbb"}, {name: "c", body: "cccc"}}
	for name, lim := range map[string]source.Limits{"entries": {MaxEntries: 2}, "bytes": {MaxBytes: 10}} {
		t.Run(name, func(t *testing.T) {
			c, err := cache.Open(t.TempDir(), cache.Options{})
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = c.Fill(context.Background(), testPkg, nil, archiveFetch(t, entries, nil, lim))
			if !errors.Is(err, source.ErrTooLarge) {
				t.Fatalf("Fill = %v, want ErrTooLarge", err)
			}
			if objs, _ := os.ReadDir(filepath.Join(c.Dir(), "objects")); len(objs) != 0 {
				t.Errorf("stored %d objects", len(objs))
			}
		})
	}
}

// Hash learns a package's hashes from its archive as it reads it, writes
// none of its files, remembers the hashes for the next Hash, and leaves a
// Fill to fetch the files when they are needed.
func TestHashWithoutStoring(t *testing.T) {
	entries := []zipEntry{{name: "terraform-provider-null", body: "#!/bin/sh\necho null\n"}}
	zh, h1 := writeZip(t, filepath.Join(t.TempDir(), "ref.zip"), entries)
	dir := t.TempDir()
	c, err := cache.Open(dir, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	e, hit, err := c.Hash(ctx, testPkg, []hash.Hash{zh}, archiveFetch(t, entries, []hash.Hash{h1}, source.Limits{}))
	if err != nil {
		t.Fatal(err)
	}
	if hit || e.Dir != "" || e.H1 != h1 {
		t.Fatalf("Hash = %+v, hit %v; want h1 %s, no dir, a miss", e, hit, h1)
	}
	hs := e.Hashes
	sort.Slice(hs, func(i, j int) bool { return hs[i] < hs[j] })
	if len(hs) != 2 || hs[0] != h1 || hs[1] != zh {
		t.Errorf("hashes = %v, want [%s %s]", hs, h1, zh)
	}
	for _, sub := range []string{"objects", "tmp"} {
		if ents, _ := os.ReadDir(filepath.Join(dir, sub)); len(ents) != 0 {
			t.Errorf("%s/ holds %d items after Hash, want none", sub, len(ents))
		}
	}
	again, hit, err := c.Hash(ctx, testPkg, nil, func(context.Context, string) (*source.Fetched, error) {
		t.Fatal("Hash fetched a package whose hashes it recorded")
		return nil, nil
	})
	if err != nil || !hit || again.H1 != h1 {
		t.Errorf("second Hash = %+v, %v, %v", again, hit, err)
	}
	// Fill needs the files: it fetches them.
	f, hit, err := c.Fill(ctx, testPkg, []hash.Hash{zh}, archiveFetch(t, entries, nil, source.Limits{}))
	if err != nil || hit || f.Dir == "" || f.H1 != h1 {
		t.Errorf("Fill after Hash = %+v, hit %v, %v; want a fetch and an entry", f, hit, err)
	}
	// A lying archive is refused by Hash as by Fill.
	other := testPkg
	other.Platform.Arch = "arm64"
	if _, _, err := c.Hash(ctx, other, nil, archiveFetch(t, entries, []hash.Hash{hash.NewHash(hash.SchemeH1, sha256.Sum256([]byte("x")))}, source.Limits{})); !errors.Is(err, source.ErrChecksumMismatch) {
		t.Errorf("Hash of a package whose stated h1: is wrong = %v, want ErrChecksumMismatch", err)
	}
}

// Hash makes no work directory for the fetch: a source that hands its
// archive over downloads it as the file of the path given (as
// fsutil.ArchiveFile does), and nothing is left in tmp/ after.
func TestHashMakesNoDirectory(t *testing.T) {
	entries := []zipEntry{{name: "terraform-provider-null", body: "#!/bin/sh\necho null\n"}}
	dir := t.TempDir()
	c, err := cache.Open(dir, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var zh hash.Hash
	e, _, err := c.Hash(context.Background(), testPkg, nil, func(_ context.Context, work string) (*source.Fetched, error) {
		if _, err := os.Lstat(work); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the fetch's directory %s exists (%v); want it not made", work, err)
		}
		zh, _ = writeZip(t, work, entries)
		return &source.Fetched{Location: "test", Archive: work, Hashes: []hash.Hash{zh}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Hashes) != 2 || !slices.Contains(e.Hashes, zh) {
		t.Errorf("hashes = %v, want an h1: and %s", e.Hashes, zh)
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(ents) != 0 {
		t.Errorf("tmp/ holds %d items after Hash, want none", len(ents))
	}
}
