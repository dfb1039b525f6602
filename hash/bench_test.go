package hash

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	kflate "github.com/klauspost/compress/flate"
	wflate "github.com/tflock/tflock/hash/internal/flate"
	"github.com/tflock/tflock/internal/benchdata"
	"golang.org/x/mod/sumdb/dirhash"
)

// Benchmarks over generated packages, each measured with its baseline (the
// way OpenTofu does the same job with x/mod dirhash and archive/zip) in the
// same run; see BENCHMARKS.md. The packages are generated deterministically
// once and cached under os.TempDir(), keyed by their parameters.
//
// TFLOCK_BENCH_PROVIDER_MIB sets the size of the provider binary inside the
// provider-like zip (default 400, as in BENCHMARKS.md); use a smaller value
// for a quick run.

func providerMiB() int {
	if n, err := strconv.Atoi(os.Getenv("TFLOCK_BENCH_PROVIDER_MIB")); err == nil && n > 0 {
		return n
	}
	return 400
}

var benchMu sync.Mutex

func benchCache(b *testing.B) string {
	d := filepath.Join(os.TempDir(), "tflock-hash-bench")
	if err := os.MkdirAll(d, 0o755); err != nil {
		b.Fatal(err)
	}
	return d
}

// providerZip returns a zip holding one deflated entry of mib MiB of
// pseudo-binary content (compressing about 2.5:1), like a provider release.
func providerZip(b *testing.B) string { return providerZipMiB(b, providerMiB()) }

// providerZipMiB is providerZip for a binary of mib MiB.
func providerZipMiB(b *testing.B, mib int) string {
	benchMu.Lock()
	defer benchMu.Unlock()
	p := filepath.Join(benchCache(b), fmt.Sprintf("provider-%dMiB-v2.zip", mib))
	if _, err := os.Stat(p); err == nil {
		return p
	}
	tmp := p + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		b.Fatal(err)
	}
	zw := zip.NewWriter(f)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) { return kflate.NewWriter(w, 6) })
	h := &zip.FileHeader{Name: "terraform-provider-bench_v1.0.0", Method: zip.Deflate}
	h.SetMode(0o755)
	w, err := zw.CreateHeader(h)
	if err != nil {
		b.Fatal(err)
	}
	for i := range mib {
		if _, err := w.Write(pseudoBinary(uint64(i), 1<<20)); err != nil {
			b.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		b.Fatal(err)
	}
	return p
}

// moduleFiles returns 5,000 small text files in nested directories, like a
// large Terraform module repository.
func moduleFiles() []testFile {
	files := make([]testFile, 0, 5000)
	for i := range 5000 {
		var buf bytes.Buffer
		for j := range 4 + i%40 {
			fmt.Fprintf(&buf, "resource \"aws_instance\" \"r%d_%d\" {\n  ami           = var.ami_%d\n  instance_type = \"t3.micro\"\n  tags = { Name = \"n%d\" }\n}\n\n", i, j, j%7, i*j)
		}
		files = append(files, testFile{name: fmt.Sprintf("modules/m%02d/sub%d/file%04d.tf", i%50, i%7, i), data: buf.Bytes()})
	}
	return files
}

func moduleZip(b *testing.B) string {
	benchMu.Lock()
	defer benchMu.Unlock()
	p := filepath.Join(benchCache(b), "module-5000-v1.zip")
	if _, err := os.Stat(p); err != nil {
		writeZip(b, p+".tmp", moduleFiles(), false)
		if err := os.Rename(p+".tmp", p); err != nil {
			b.Fatal(err)
		}
	}
	return p
}

func moduleDir(b *testing.B) string {
	benchMu.Lock()
	defer benchMu.Unlock()
	p := filepath.Join(benchCache(b), "module-5000-v1")
	if _, err := os.Stat(p); err != nil {
		os.RemoveAll(p + ".tmp")
		writeTree(b, p+".tmp", moduleFiles())
		if err := os.Rename(p+".tmp", p); err != nil {
			b.Fatal(err)
		}
	}
	return p
}

// peakHeap samples the live heap while f runs b.N times and reports the
// peak as the metric "peak-heap-MB", and, where it can be read, the
// process's peak resident size as "peak-RSS-MiB" (mapped files included).
// cleanup, if not nil, runs after each call with the timer stopped.
func peakHeap(b *testing.B, f func(), cleanup ...func()) {
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	rss := resetPeakRSS()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f()
		if len(cleanup) > 0 {
			b.StopTimer()
			cleanup[0]()
			b.StartTimer()
		}
	}
	b.StopTimer()
	close(done)
	wg.Wait()
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MB")
	if rss {
		// The whole process's, mapped files included.
		b.ReportMetric(peakRSS(b)/(1<<20), "peak-RSS-MiB")
	}
}

// baselineZH is OpenTofu's zh: a second pass over the archive.
func baselineZH(b *testing.B, path string) string {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		b.Fatal(err)
	}
	return fmt.Sprintf("zh:%x", h.Sum(nil))
}

func benchZipHashes(b *testing.B, path string) {
	want, err := HashZip(path)
	if err != nil {
		b.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("impl=baseline", func(b *testing.B) {
		b.SetBytes(info.Size())
		peakHeap(b, func() {
			if _, err := dirhash.HashZip(path, dirhash.Hash1); err != nil {
				b.Fatal(err)
			}
			if zh := baselineZH(b, path); zh != string(want.ZH) {
				b.Fatal(zh)
			}
		})
	})
	b.Run("impl=tflock", func(b *testing.B) {
		b.SetBytes(info.Size())
		peakHeap(b, func() {
			got, err := HashZip(path)
			if err != nil || got != want {
				b.Fatal(got, err)
			}
		})
	})
}

// BenchmarkProviderZip: h1 and zh of a provider-like zip. Baseline:
// dirhash.HashZip, then a second pass for the SHA-256 of the file.
func BenchmarkProviderZip(b *testing.B) { benchZipHashes(b, providerZip(b)) }

// smallZips returns n zips of one deflated entry of 128 KiB of
// pseudo-binary content each: the packages of a "providers lock" of many
// small providers.
func smallZips(b *testing.B, n int) []string {
	benchMu.Lock()
	defer benchMu.Unlock()
	var paths []string
	for i := range n {
		p := filepath.Join(benchCache(b), fmt.Sprintf("small-%03d.zip", i))
		paths = append(paths, p)
		if _, err := os.Stat(p); err == nil {
			continue
		}
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) { return kflate.NewWriter(w, 6) })
		h := &zip.FileHeader{Name: fmt.Sprintf("terraform-provider-p%03d_v1.0.0", i), Method: zip.Deflate}
		h.SetMode(0o755)
		w, err := zw.CreateHeader(h)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := w.Write(pseudoBinary(uint64(i), 128<<10)); err != nil {
			b.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return paths
}

// BenchmarkSmallZips: h1 and zh of 150 small provider zips (128 KiB of
// binary each), one after another, as "providers lock" hashes the
// packages of other platforms. Baseline as for BenchmarkProviderZip. The
// allocations (B/op) are the measure of the buffers the pipeline reuses.
func BenchmarkSmallZips(b *testing.B) {
	paths := smallZips(b, 150)
	want := make([]ZipSum, len(paths))
	for i, p := range paths {
		var err error
		if want[i], err = HashZip(p); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("impl=baseline", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for i, p := range paths {
				if _, err := dirhash.HashZip(p, dirhash.Hash1); err != nil {
					b.Fatal(err)
				}
				if zh := baselineZH(b, p); zh != string(want[i].ZH) {
					b.Fatal(zh)
				}
			}
		}
	})
	b.Run("impl=tflock", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for i, p := range paths {
				if got, err := HashZip(p); err != nil || got != want[i] {
					b.Fatal(got, err)
				}
			}
		}
	})
}

// BenchmarkModuleZip: h1 and zh of a module-like zip of 5,000 files.
// Baseline as for BenchmarkProviderZip.
func BenchmarkModuleZip(b *testing.B) { benchZipHashes(b, moduleZip(b)) }

// BenchmarkModuleDir: h1 of a module-like directory of 5,000 files.
// Baseline: dirhash.HashDir.
func BenchmarkModuleDir(b *testing.B) {
	dir := moduleDir(b)
	want := dirhashDir(b, dir)
	b.Run("impl=baseline", func(b *testing.B) {
		peakHeap(b, func() {
			if h, err := dirhash.HashDir(dir, "", dirhash.Hash1); err != nil || h != want {
				b.Fatal(h, err)
			}
		})
	})
	b.Run("impl=tflock", func(b *testing.B) {
		peakHeap(b, func() {
			if h, err := H1Dir(dir); err != nil || string(h) != want {
				b.Fatal(h, err)
			}
		})
	})
}

// BenchmarkInstall: verify, extract and hash a provider-like zip. Baseline:
// OpenTofu's sequence, dirhash.HashZip to verify, extraction with
// archive/zip, dirhash.HashDir of the result. The removal of the extracted
// tree is not timed.
func BenchmarkInstall(b *testing.B) {
	path := providerZip(b)
	sum, err := HashZip(path)
	if err != nil {
		b.Fatal(err)
	}
	want := sum.Hashes()
	root := b.TempDir()
	n := 0
	fresh := func() string {
		n++
		return filepath.Join(root, strconv.Itoa(n))
	}
	remove := func() { os.RemoveAll(filepath.Join(root, strconv.Itoa(n))) }
	b.Run("impl=baseline", func(b *testing.B) {
		peakHeap(b, func() {
			dir := fresh()
			h1, err := dirhash.HashZip(path, dirhash.Hash1)
			if err != nil || Hash(h1) != sum.H1 {
				b.Fatal(h1, err)
			}
			if err := benchdata.ExtractStd(path, dir); err != nil {
				b.Fatal(err)
			}
			if h, err := dirhash.HashDir(dir, "", dirhash.Hash1); err != nil || Hash(h) != sum.H1 {
				b.Fatal(h, err)
			}
		}, remove)
	})
	b.Run("impl=tflock", func(b *testing.B) {
		peakHeap(b, func() {
			if got, err := (Options{}).Install(context.Background(), path, fresh(), want); err != nil || got != sum {
				b.Fatal(got, err)
			}
		}, remove)
	})
}

// BenchmarkVerifyZH: verify a provider-like zip whose zh: is recorded.
// Baseline: dirhash.HashZip.
func BenchmarkVerifyZH(b *testing.B) {
	path := providerZip(b)
	sum, err := HashZip(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("impl=baseline", func(b *testing.B) {
		peakHeap(b, func() {
			if h, err := dirhash.HashZip(path, dirhash.Hash1); err != nil || Hash(h) != sum.H1 {
				b.Fatal(h, err)
			}
		})
	})
	b.Run("impl=tflock", func(b *testing.B) {
		peakHeap(b, func() {
			if err := VerifyZip(path, []Hash{sum.ZH}); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// BenchmarkInflate measures the inflaters alone on the provider entry, from
// memory: the standard library's compress/flate (baseline) and
// klauspost/compress/flate (tflock's).
func BenchmarkInflate(b *testing.B) {
	path := providerZip(b)
	zr, err := zip.OpenReader(path)
	if err != nil {
		b.Fatal(err)
	}
	defer zr.Close()
	f := zr.File[0]
	off, err := f.DataOffset()
	if err != nil {
		b.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	data := raw[off : off+int64(f.CompressedSize64)]
	buf := make([]byte, 512<<10)
	run := func(b *testing.B, r io.Reader) {
		var n int64
		for {
			m, err := r.Read(buf)
			n += int64(m)
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		if n != int64(f.UncompressedSize64) {
			b.Fatal(n)
		}
	}
	b.Run("impl=baseline", func(b *testing.B) {
		b.SetBytes(int64(f.UncompressedSize64))
		for b.Loop() {
			run(b, flate.NewReader(bytes.NewReader(data)))
		}
	})
	b.Run("impl=tflock", func(b *testing.B) {
		b.SetBytes(int64(f.UncompressedSize64))
		for b.Loop() {
			run(b, kflate.NewReader(bytes.NewReader(data)))
		}
	})
}

// zipEntries returns the compressed data and uncompressed size of every
// deflated entry of the zip at path.
func zipEntries(b *testing.B, path string) (data [][]byte, sizes []int) {
	raw, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range zr.File {
		if f.Method != zip.Deflate {
			continue
		}
		off, err := f.DataOffset()
		if err != nil {
			b.Fatal(err)
		}
		data = append(data, raw[off:off+int64(f.CompressedSize64)])
		sizes = append(sizes, int(f.UncompressedSize64))
	}
	return data, sizes
}

// BenchmarkDecoders measures the three DEFLATE decoders alone, from memory,
// each in the way it is meant to be used: compress/flate and
// klauspost/compress/flate (until issue 16, tflock's) as streaming readers
// into a 512 KiB buffer; hash/internal/flate into an output buffer of the
// entry's declared size (allocated outside the timed loop, as the install
// path maps the output file, its pages faulted in). Entries: the
// provider-like binary of
// TFLOCK_BENCH_PROVIDER_MIB (400) MiB, one of 128 MiB, and the 5,000 files
// of the module-like zip.
func BenchmarkDecoders(b *testing.B) {
	for _, c := range []struct {
		name string
		path func(*testing.B) string
	}{
		{"provider" + strconv.Itoa(providerMiB()) + "MiB", providerZip},
		{"provider128MiB", func(b *testing.B) string { return providerZipMiB(b, 128) }},
		{"module5000", moduleZip},
	} {
		b.Run("entry="+c.name, func(b *testing.B) {
			data, sizes := zipEntries(b, c.path(b))
			total, largest := 0, 0
			for _, n := range sizes {
				total += n
				largest = max(largest, n)
			}
			buf := make([]byte, 512<<10)
			stream := func(b *testing.B, r io.Reader, want int) {
				n, err := io.CopyBuffer(io.Discard, onlyReader{r}, buf)
				if err != nil || n != int64(want) {
					b.Fatal(n, err)
				}
			}
			// The two streaming readers, in the same order in every round.
			for _, r := range []struct {
				name string
				new  func(io.Reader) io.Reader
			}{
				{"stdlib", func(r io.Reader) io.Reader { return flate.NewReader(r) }},
				{"klauspost", func(r io.Reader) io.Reader { return kflate.NewReader(r) }},
			} {
				b.Run("impl="+r.name, func(b *testing.B) {
					b.SetBytes(int64(total))
					br := new(bytes.Reader)
					fr := r.new(br)
					for b.Loop() {
						for i, d := range data {
							br.Reset(d)
							// Both packages' readers have this method.
							fr.(interface {
								Reset(io.Reader, []byte) error
							}).Reset(br, nil)
							stream(b, fr, sizes[i])
						}
					}
				})
			}
			b.Run("impl=tflock", func(b *testing.B) {
				b.SetBytes(int64(total))
				out := make([]byte, largest)
				// Fault the pages in before timing: the other two
				// decoders reuse a small buffer, and the install path
				// faults the output file's pages in ahead of the decoder.
				for i := 0; i < len(out); i += 4096 {
					out[i] = 1
				}
				var d wflate.Decoder
				for b.Loop() {
					for i, in := range data {
						d.ResetBytes(in)
						if err := d.DecodeAll(out[:sizes[i]], 0, nil); err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		})
	}
}

// BenchmarkInstallOutput compares the ways Install writes a large entry's
// output (see inflate.go): decoded in chunks and written through the file
// (the portable path), decoded whole into the file mapped into memory, the
// same with the pages faulted in ahead of the decoder by the goroutine
// that hashes, and that with the finished pages released from the process
// 8 MiB (the default on Linux) or 32 MiB at a time. The removal of the tree
// is not timed.
func BenchmarkInstallOutput(b *testing.B) {
	path := providerZip(b)
	sum, err := HashZip(path)
	if err != nil {
		b.Fatal(err)
	}
	root := b.TempDir()
	n := 0
	remove := func() { os.RemoveAll(filepath.Join(root, strconv.Itoa(n))) }
	for _, c := range []struct {
		name                   string
		mapMin, ahead, release int64
	}{
		{"chunks+write", 1 << 62, 8 << 20, 8 << 20},
		{"mapped", 1 << 20, 0, 0},
		{"mapped+populate", 1 << 20, 8 << 20, 0},
		{"mapped+populate+release", 1 << 20, 8 << 20, 8 << 20},
		{"mapped+populate+release32M", 1 << 20, 8 << 20, 32 << 20},
	} {
		b.Run("impl="+c.name, func(b *testing.B) {
			savedMap, savedAhead, savedRelease := mapMin, populateAhead, releaseSpan
			mapMin, populateAhead, releaseSpan = c.mapMin, int(c.ahead), int(c.release)
			defer func() { mapMin, populateAhead, releaseSpan = savedMap, savedAhead, savedRelease }()
			peakHeap(b, func() {
				n++
				if got, err := (Options{}).Install(context.Background(), path, filepath.Join(root, strconv.Itoa(n)), sum.Hashes()); err != nil || got != sum {
					b.Fatal(got, err)
				}
			}, remove)
		})
	}
}
