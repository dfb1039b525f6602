package hash

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"testing"

	"golang.org/x/mod/sumdb/dirhash"

	"github.com/tflock/tflock/internal/longtest"
)

// decoderPaths are the ways an entry can be inflated (see inflate.go), each
// set up by adjusting the thresholds.
var decoderPaths = []struct {
	name                 string
	small, whole, mapMin int64
}{
	{"small entries whole", 1 << 20, 256 << 10, 1 << 20},
	{"small entries with klauspost", 1 << 20, -1, 1 << 20},
	{"streamed in chunks", 0, 256 << 10, 1 << 62},
	{"streamed into mapped files", 0, 256 << 10, 0},
}

func withDecoderPath(t *testing.T, small, whole, mapAt int64) {
	t.Helper()
	s, w, m := smallEntry, wholeSmall, mapMin
	smallEntry, wholeSmall, mapMin = small, whole, mapAt
	t.Cleanup(func() { smallEntry, wholeSmall, mapMin = s, w, m })
}

// TestDecoderPathsAgree hashes and installs the same archive through every
// decoder path and checks the results against x/mod's dirhash (h1), the
// SHA-256 of the archive (zh) and the files' contents.
func TestDecoderPathsAgree(t *testing.T) {
	files := []testFile{
		{name: "bin/provider", data: pseudoBinary(11, 3<<20+77)},
		{name: "empty", data: nil},
		{name: "one", data: []byte("1")},
		{name: "docs/text.md", data: bytes.Repeat([]byte("terraform provider documentation\n"), 5000)},
		{name: "mid", data: pseudoBinary(12, 300<<10)},
		{name: "stored", data: pseudoBinary(13, 2<<20), stored: true},
	}
	z := zipBytes(t, files, false)
	zipPath := filepath.Join(t.TempDir(), "p.zip")
	if err := os.WriteFile(zipPath, z, 0o644); err != nil {
		t.Fatal(err)
	}
	h1, err := dirhash.HashZip(zipPath, dirhash.Hash1)
	if err != nil {
		t.Fatal(err)
	}
	want := ZipSum{H1: Hash(h1), ZH: Hash(sha256Hex(z))}
	for _, p := range decoderPaths {
		t.Run(p.name, func(t *testing.T) {
			withDecoderPath(t, p.small, p.whole, p.mapMin)
			got, err := HashZip(zipPath)
			if err != nil || got != want {
				t.Fatalf("HashZip = %v, %v; want %v", got, err, want)
			}
			dir := filepath.Join(t.TempDir(), "installed")
			mapped := mappedEntries.Load()
			got, err = Options{}.Install(context.Background(), zipPath, dir, want.Hashes())
			if err != nil || got != want {
				t.Fatalf("Install = %v, %v; want %v", got, err, want)
			}
			if n := mappedEntries.Load() - mapped; p.mapMin == 0 && runtime.GOOS == "linux" && n != 4 {
				t.Fatalf("%d entries decoded into mapped files; want the 4 deflated ones that are not empty", n)
			}
			for _, f := range files {
				b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.name)))
				if err != nil || !bytes.Equal(b, f.data) {
					t.Fatalf("installed %s: %d bytes, %v; want the archive's %d", f.name, len(b), err, len(f.data))
				}
			}
		})
	}
}

// TestDecoderPathsReject checks every decoder path against archives whose
// central directory lies about an entry's size or CRC-32, or whose deflate
// stream is corrupt or cut short: hashing and installing fail with
// ErrFormat, and a failed install leaves nothing behind. By default each
// archive goes through two of the paths, in turn, so that every path sees
// several of them; with TFLOCK_LONG_TESTS=1, through every path.
func TestDecoderPathsReject(t *testing.T) {
	data := pseudoBinary(21, 2<<20+5)
	small := pseudoBinary(22, 100<<10)
	z := zipBytes(t, []testFile{{name: "small", data: small}, {name: "big", data: data}}, false)
	cases := map[string][]byte{
		"big size -1":   patchCentral(t, z, "big", 24, uint32(len(data))-1),
		"big size +1":   patchCentral(t, z, "big", 24, uint32(len(data))+1),
		"big CRC":       patchCentral(t, z, "big", 16, 0x12345678),
		"small size -1": patchCentral(t, z, "small", 24, uint32(len(small))-1),
		"small size +1": patchCentral(t, z, "small", 24, uint32(len(small))+1),
		"small CRC":     patchCentral(t, z, "small", 16, 0x12345678),
	}
	// Corrupt the middle of the big entry's deflate stream, and cut the
	// stream short by shrinking its compressed size in both headers.
	corrupt := bytes.Clone(z)
	for i := len(corrupt) / 2; i < len(corrupt)/2+64; i++ {
		corrupt[i] ^= 0xa5
	}
	cases["big corrupt"] = corrupt
	for i, name := range slices.Sorted(maps.Keys(cases)) {
		bad := cases[name]
		for j, p := range decoderPaths {
			if !longtest.Enabled() && j != i%len(decoderPaths) && j != (i+2)%len(decoderPaths) {
				continue
			}
			t.Run(name+"/"+p.name, func(t *testing.T) {
				withDecoderPath(t, p.small, p.whole, p.mapMin)
				if _, err := (Options{}).HashZipReader(context.Background(), bytes.NewReader(bad), int64(len(bad))); !errors.Is(err, ErrFormat) {
					t.Fatalf("HashZipReader: %v; want ErrFormat", err)
				}
				root := t.TempDir()
				zipPath := filepath.Join(root, "p.zip")
				if err := os.WriteFile(zipPath, bad, 0o644); err != nil {
					t.Fatal(err)
				}
				dir := filepath.Join(root, "installed")
				if _, err := (Options{}).Install(context.Background(), zipPath, dir, nil); !errors.Is(err, ErrFormat) {
					t.Fatalf("Install: %v; want ErrFormat", err)
				}
				left, err := os.ReadDir(root)
				if err != nil || len(left) != 1 {
					t.Fatalf("after a failed install the directory holds %v (%v); want only the archive", left, err)
				}
			})
		}
	}
}

// TestLargeEntryHeap hashes, then installs (in chunks, the default, and
// through the mapped path), a large entry and checks that the memory allocated stays far below the
// entry's size: the output lives in chunk buffers or in the page cache,
// not in the heap. The entry is 96 MiB with TFLOCK_LONG_TESTS=1, 40 MiB
// by default (still well above the bound of 16 MiB: an entry held in the
// heap fails). Not timed.
func TestLargeEntryHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a large file")
	}
	mib := 40
	if longtest.Enabled() {
		mib = 96
	}
	root := t.TempDir()
	zipPath := filepath.Join(root, "p.zip")
	writeRepeatedZip(t, zipPath, "terraform-provider-big", pseudoBinary(100, 1<<20), mib)
	// TotalAlloc counts every allocation made while f runs, so it bounds
	// the peak heap f added.
	allocated := func(f func()) uint64 {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	var sum ZipSum
	if a := allocated(func() {
		var err error
		if sum, err = HashZip(zipPath); err != nil {
			t.Fatal(err)
		}
	}); a > 16<<20 {
		t.Fatalf("HashZip allocated %d MiB for a %d MiB entry; want under 16 MiB", a>>20, mib)
	}
	for i, p := range decoderPaths[2:] { // streamed in chunks, into mapped files
		withDecoderPath(t, smallEntry, wholeSmall, p.mapMin)
		dir := filepath.Join(root, "p"+strconv.Itoa(i))
		if a := allocated(func() {
			if _, err := (Options{}).Install(context.Background(), zipPath, dir, sum.Hashes()); err != nil {
				t.Fatal(err)
			}
		}); a > 16<<20 {
			t.Fatalf("Install %s allocated %d MiB for a %d MiB entry; want under 16 MiB", p.name, a>>20, mib)
		}
	}
}

// FuzzInflatePaths checks that every decoder path gives the same verdict
// and the same hashes on arbitrary archives (the whole-buffer decoder, in
// every way it is used, against klauspost), and never panics. Its seed
// corpus is in testdata/fuzz/FuzzInflatePaths.
func FuzzInflatePaths(f *testing.F) {
	f.Add(zipBytes(f, []testFile{{name: "a", data: bytes.Repeat([]byte("abc"), 100)}, {name: "b", data: pseudoBinary(1, 3000)}}, false))
	f.Fuzz(func(t *testing.T, data []byte) {
		var first ZipSum
		var firstErr error
		for i, p := range decoderPaths {
			withDecoderPath(t, p.small, p.whole, p.mapMin)
			got, err := Options{MaxSize: 64 << 20}.HashZipReader(context.Background(), bytes.NewReader(data), int64(len(data)))
			if i == 0 {
				first, firstErr = got, err
				continue
			}
			if (err == nil) != (firstErr == nil) || got != first {
				t.Fatalf("%s: %v, %v; %s: %v, %v", decoderPaths[0].name, first, firstErr, p.name, got, err)
			}
		}
	})
}

// TestLargeEntryWrittenNotMapped installs a large entry with the default
// thresholds and checks that it was decoded in chunks and written, not
// decoded into a mapped file (see inflate.go: in a whole, cold process a
// mapped output costs the kernel a zeroed page for every page written),
// and that the installed bytes and h1: are right.
func TestLargeEntryWrittenNotMapped(t *testing.T) {
	root := t.TempDir()
	zipPath := filepath.Join(root, "p.zip")
	writeRepeatedZip(t, zipPath, "terraform-provider-big", pseudoBinary(102, 1<<20), 3)
	want, err := dirhash.HashZip(zipPath, dirhash.Hash1)
	if err != nil {
		t.Fatal(err)
	}
	mapped := mappedEntries.Load()
	dir := filepath.Join(root, "p")
	sum, err := (Options{}).Install(context.Background(), zipPath, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := mappedEntries.Load() - mapped; n != 0 {
		t.Errorf("%d entries decoded into mapped files; want none by default", n)
	}
	if sum.H1 != Hash(want) {
		t.Errorf("h1 %s, want %s", sum.H1, want)
	}
	got, err := H1Dir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got != sum.H1 {
		t.Errorf("installed tree hashes to %s, want %s", got, sum.H1)
	}
}
