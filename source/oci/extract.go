package oci

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/internal/fsutil"
)

// Default limits, used when the [Options] fields are zero.
const (
	defaultMaxArchiveSize   = 1 << 30 // 1 GiB
	defaultMaxExtractedSize = 4 << 30 // 4 GiB
	defaultMaxFiles         = 100000
)

// downloadBlob writes the blob desc describes to a temporary file next to
// dir, checking its size and digest while reading, and returns the file
// (positioned anywhere) and the SHA-256 of its content.
func (s *Source) downloadBlob(ctx context.Context, repo Repository, desc ocispec.Descriptor, dir string, pkg source.Package) (*os.File, [32]byte, error) {
	var sum [32]byte
	limit := s.opts.MaxArchiveSize
	if limit <= 0 {
		limit = defaultMaxArchiveSize
	}
	if desc.Size > limit || desc.Size < 0 {
		return nil, sum, &ArchiveError{Err: fmt.Errorf("%w: the layer has %d bytes and the limit is %d", ErrArchiveTooLarge, desc.Size, limit)}
	}
	rc, err := repo.Fetch(ctx, desc)
	if err != nil {
		return nil, sum, fmt.Errorf("fetching layer %s: %w", desc.Digest, err)
	}
	defer rc.Close()
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, sum, err
	}
	f, err := os.CreateTemp(parent, ".oci-download-*.zip")
	if err != nil {
		return nil, sum, err
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	source.Emit(s.opts.Events, source.Event{Kind: source.EventFetchStarted, Package: pkg, Total: desc.Size})
	vr := content.NewVerifyReader(rc, desc)
	h := sha256.New()
	pw := &progressWriter{s: s, pkg: pkg, total: desc.Size}
	if _, err := io.Copy(io.MultiWriter(f, h, pw), vr); err != nil {
		return nil, sum, fmt.Errorf("downloading layer %s: %w", desc.Digest, err)
	}
	if err := vr.Verify(); err != nil {
		return nil, sum, fmt.Errorf("layer %s: %w: %v", desc.Digest, source.ErrChecksumMismatch, err)
	}
	copy(sum[:], h.Sum(nil))
	ok = true
	return f, sum, nil
}

// progressWriter reports download progress as events, at most every 1 MiB.
type progressWriter struct {
	s          *Source
	pkg        source.Package
	done, last int64
	total      int64
}

func (p *progressWriter) Write(b []byte) (int, error) {
	p.done += int64(len(b))
	if p.done-p.last >= 1<<20 || p.done == p.total {
		p.last = p.done
		source.Emit(p.s.opts.Events, source.Event{Kind: source.EventFetchProgress, Package: p.pkg, Bytes: p.done, Total: p.total})
	}
	return len(b), nil
}

// unpackLayer downloads the zip layer into a temporary file next to dir
// (checking its size and digest), extracts it into dir (which must be
// absent or empty), and returns the SHA-256 of the zip and the h1: of dir.
// On error nothing is left in dir.
func (s *Source) unpackLayer(ctx context.Context, repo Repository, layer ocispec.Descriptor, dir string, pkg source.Package) (sum [32]byte, h1 hash.Hash, err error) {
	cleanup, err := fsutil.Prepare(dir)
	if err != nil {
		return sum, "", err
	}
	defer func() {
		if err != nil {
			cleanup()
		}
	}()
	f, sum, err := s.downloadBlob(ctx, repo, layer, dir, pkg)
	if err != nil {
		return sum, "", err
	}
	defer func() { f.Close(); os.Remove(f.Name()) }()
	if err := s.extractZip(f, layer.Size, dir); err != nil {
		return sum, "", err
	}
	h1, err = hashDir(dir)
	return sum, h1, err
}

// extractZip extracts the zip archive in f (of the given size) into dir,
// refusing entries that would land outside dir, links and devices, and
// archives that expand beyond the configured limits. Sizes are counted as
// bytes are written, never trusted from the archive's headers.
func (s *Source) extractZip(f *os.File, size int64, dir string) error {
	zr, err := zip.NewReader(f, size)
	if err != nil {
		return &ArchiveError{Err: fmt.Errorf("%w: not a valid zip archive: %v", ErrUnsafeArchive, err)}
	}
	maxFiles := s.opts.MaxFiles
	if maxFiles <= 0 {
		maxFiles = defaultMaxFiles
	}
	if len(zr.File) > maxFiles {
		return &ArchiveError{Err: fmt.Errorf("%w: it has %d entries and the limit is %d", ErrArchiveTooLarge, len(zr.File), maxFiles)}
	}
	remaining := s.opts.MaxExtractedSize
	if remaining <= 0 {
		remaining = defaultMaxExtractedSize
	}
	for _, zf := range zr.File {
		rel, err := safeEntryName(zf.Name)
		if err != nil {
			return &ArchiveError{Entry: zf.Name, Err: err}
		}
		if rel == "" {
			continue
		}
		target := filepath.Join(dir, filepath.FromSlash(rel))
		mode := zf.Mode()
		switch {
		case mode.IsDir():
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
			continue
		case !mode.IsRegular():
			return &ArchiveError{Entry: zf.Name, Err: fmt.Errorf("%w: only regular files and directories are extracted, this entry has mode %v", ErrUnsafeArchive, mode)}
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		n, err := writeEntry(zf, target, remaining)
		if err != nil {
			return err
		}
		remaining -= n
	}
	return nil
}

// writeEntry writes one file entry, at most limit bytes.
func writeEntry(zf *zip.File, target string, limit int64) (int64, error) {
	rc, err := zf.Open()
	if err != nil {
		return 0, &ArchiveError{Entry: zf.Name, Err: fmt.Errorf("%w: %v", ErrUnsafeArchive, err)}
	}
	defer rc.Close()
	perm := os.FileMode(0o644)
	if zf.Mode()&0o111 != 0 {
		perm = 0o755
	}
	out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return 0, &ArchiveError{Entry: zf.Name, Err: fmt.Errorf("%w: the archive holds this file twice", ErrUnsafeArchive)}
		}
		return 0, err
	}
	n, err := io.Copy(out, io.LimitReader(rc, limit+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return n, &ArchiveError{Entry: zf.Name, Err: fmt.Errorf("%w: %v", ErrUnsafeArchive, err)}
	}
	if n > limit {
		return n, &ArchiveError{Err: fmt.Errorf("%w: the archive expands to more than the extraction limit", ErrArchiveTooLarge)}
	}
	return n, nil
}

// safeEntryName checks a zip entry name and returns it cleaned, relative,
// with forward slashes; "" for the root directory itself.
func safeEntryName(name string) (string, error) {
	if name == "" || strings.ContainsRune(name, '\x00') || strings.Contains(name, `\`) {
		return "", fmt.Errorf("%w: invalid file name", ErrUnsafeArchive)
	}
	if path.IsAbs(name) || filepath.IsAbs(name) || filepath.VolumeName(name) != "" || (len(name) >= 2 && name[1] == ':') {
		return "", fmt.Errorf("%w: absolute path", ErrUnsafeArchive)
	}
	for _, part := range strings.Split(strings.TrimSuffix(name, "/"), "/") {
		if part == ".." {
			return "", fmt.Errorf("%w: path escapes the package directory", ErrUnsafeArchive)
		}
	}
	clean := path.Clean(name)
	if clean == "." {
		return "", nil
	}
	return clean, nil
}
