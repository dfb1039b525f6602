package registrytest

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	kflate "github.com/klauspost/compress/flate"
	"golang.org/x/mod/sumdb/dirhash"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/internal/benchdata"
)

var epoch = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)

// file is one file of a generated archive.
type file struct {
	name string
	mode int64
	data []byte
}

// executable returns the deterministic contents of a provider executable.
func executable(addr, version, platform string, size int) []byte {
	head := fmt.Sprintf("#!/bin/sh\n# %s %s %s (registrytest)\n", addr, version, platform)
	b := make([]byte, 0, max(size, len(head)))
	b = append(b, head...)
	for i := 0; len(b) < size; i++ {
		b = append(b, byte('a'+i%26))
	}
	return b
}

// binaryExecutable is executable with provider-like contents
// (benchdata.PseudoBinary after the same first line), seeded by the
// package's identity.
func binaryExecutable(addr, version, platform string, size int) []byte {
	head := executable(addr, version, platform, 0)
	seed := sha256.Sum256(head)
	b := append(head, benchdata.PseudoBinary(binary.LittleEndian.Uint64(seed[:]), max(size-len(head), 0))...)
	return b[:max(size, len(head))]
}

// zips holds the archives makeZip made, by the digest of their files: the
// tests start many servers with the same fixtures, and compressing a
// package of megabytes takes seconds under -race.
var zips sync.Map // [sha256.Size]byte -> []byte

// makeZip returns the zip of files, made once per process for the same
// files (the result is shared: callers must not change it).
func makeZip(files []file) ([]byte, error) {
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%q %o %d\n", f.name, f.mode, len(f.data))
		h.Write(f.data)
	}
	var key [sha256.Size]byte
	h.Sum(key[:0])
	if z, ok := zips.Load(key); ok {
		return z.([]byte), nil
	}
	z, err := buildZip(files)
	if err != nil {
		return nil, err
	}
	zips.Store(key, z)
	return z, nil
}

func buildZip(files []file) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	total := 0
	for _, f := range files {
		total += len(f.data)
	}
	switch {
	case total > 64<<20:
		// Benchmark-sized packages: klauspost's compressor at the same
		// level is several times faster than the standard library's, so
		// the server starts in seconds. Smaller packages keep the
		// standard library's bytes, which tests' expected hashes follow.
		zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) { return kflate.NewWriter(w, kflate.DefaultCompression) })
	case total > 8<<20:
		// Large test packages (a download killed half-way, a streamed
		// provider), whose hashes no test writes down: the fastest
		// level, as the standard library's default takes half a minute
		// for them under -race.
		zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) { return kflate.NewWriter(w, kflate.BestSpeed) })
	}
	for _, f := range files {
		h := &zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: epoch}
		h.SetMode(0o644)
		if f.mode&0o111 != 0 {
			h.SetMode(0o755)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func makeTarGz(files []file) ([]byte, error) {
	var buf bytes.Buffer
	gz, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(gz)
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data)), ModTime: epoch, Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// h1 computes the h1: hash of files with golang.org/x/mod's dirhash, an
// implementation independent of the hash package under test.
func h1(files []file) (hash.Hash, error) {
	byName := map[string][]byte{}
	var names []string
	for _, f := range files {
		byName[f.name] = f.data
		names = append(names, f.name)
	}
	slices.Sort(names)
	s, err := dirhash.Hash1(names, func(n string) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(byName[n])), nil
	})
	if err != nil {
		return "", err
	}
	return hash.ParseHash(s)
}

func zh(b []byte) hash.Hash { return hash.NewHash(hash.SchemeZH, sha256.Sum256(b)) }
