package hash

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"golang.org/x/mod/sumdb/dirhash"
)

// withRelease decodes the entries of 1 MiB or more being extracted into
// mapped files, and sets how far ahead of the decoder a mapped output is
// populated and how much of it is released at a time.
func withRelease(t *testing.T, ahead, span int) {
	t.Helper()
	a, s, m := populateAhead, releaseSpan, mapMin
	populateAhead, releaseSpan, mapMin = ahead, span, 1<<20
	t.Cleanup(func() { populateAhead, releaseSpan, mapMin = a, s, m })
}

// TestMappedOutputReleased installs, through the mapped path with small
// release spans, entries many spans long whose deflate streams refer back
// across span boundaries: the pages released from the process keep their
// contents (the installed files are byte-identical to the archive's), the
// h1: matches x/mod's dirhash, and most of the output was released.
func TestMappedOutputReleased(t *testing.T) {
	files := []testFile{
		{name: "bin/provider", data: pseudoBinary(21, 3<<20+4321)},
		{name: "docs/text.md", data: bytes.Repeat([]byte("terraform provider documentation, repeated\n"), 40000)},
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
	withDecoderPath(t, 0, 256<<10, 0)
	for _, span := range []int{os.Getpagesize(), 64 << 10, 1 << 20} {
		t.Run(strconv.Itoa(span), func(t *testing.T) {
			withRelease(t, 256<<10, span)
			dir := filepath.Join(t.TempDir(), "installed")
			mapped, released := mappedEntries.Load(), releasedBytes.Load()
			got, err := Options{}.Install(context.Background(), zipPath, dir, want.Hashes())
			if err != nil || got != want {
				t.Fatalf("Install = %v, %v; want %v", got, err, want)
			}
			if n := mappedEntries.Load() - mapped; n != 2 {
				t.Fatalf("%d entries decoded into mapped files; want 2", n)
			}
			total := 0
			for _, f := range files {
				total += len(f.data)
				b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.name)))
				if err != nil || !bytes.Equal(b, f.data) {
					t.Fatalf("installed %s: %d bytes, %v; want the archive's %d", f.name, len(b), err, len(f.data))
				}
			}
			if r := releasedBytes.Load() - released; r < int64(total)/2 {
				t.Fatalf("%d of %d bytes of mapped output released; want most", r, total)
			}
			if h := dirhashDir(t, dir); h != h1 {
				t.Fatalf("installed tree hashes to %s; want %s", h, h1)
			}
		})
	}
}

// TestLargeEntryResident installs a large entry through the mapped path
// and checks that the process's peak resident memory (VmHWM, which counts
// the mapped file's pages, as a CI runner's memory limit does) grows by far
// less than the entry's size. Not timed.
func TestLargeEntryResident(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a large file")
	}
	const mib = 40
	root := t.TempDir()
	zipPath := filepath.Join(root, "p.zip")
	writeRepeatedZip(t, zipPath, "terraform-provider-big", pseudoBinary(101, 1<<20), mib)
	sum, err := HashZip(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	withRelease(t, 1<<20, 1<<20)
	if !resetPeakRSS() {
		t.Skip("cannot reset the peak resident size")
	}
	before := statusKiB(t, "VmHWM")
	mapped := mappedEntries.Load()
	if _, err := (Options{}).Install(context.Background(), zipPath, filepath.Join(root, "p"), sum.Hashes()); err != nil {
		t.Fatal(err)
	}
	if mappedEntries.Load() != mapped+1 {
		t.Fatal("the entry was not decoded into a mapped file")
	}
	if grew := statusKiB(t, "VmHWM") - before; grew > 16<<10 {
		t.Fatalf("peak resident size grew by %d MiB installing a %d MiB entry; want under 16 MiB", grew>>10, mib)
	}
}
