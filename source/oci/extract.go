package oci

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/internal/archive"
	"github.com/tflock/tflock/source/internal/fsutil"
)

// downloadBlob writes the blob desc describes to a temporary file next to
// dir, checking its size and digest while reading, and returns the file
// (positioned anywhere) and the SHA-256 of its content.
func (s *Source) downloadBlob(ctx context.Context, repo Repository, desc ocispec.Descriptor, dir string, pkg source.Package) (*os.File, [32]byte, error) {
	var sum [32]byte
	limit := s.opts.Limits.WithDefaults().MaxBytes
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
	source.EmitContext(ctx, s.opts.Events, source.Event{Kind: source.EventFetchStarted, Package: pkg, Total: desc.Size})
	vr := content.NewVerifyReader(rc, desc)
	h := sha256.New()
	pw := &progressWriter{ctx: ctx, s: s, pkg: pkg, total: desc.Size}
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
	ctx        context.Context
	s          *Source
	pkg        source.Package
	done, last int64
	total      int64
}

func (p *progressWriter) Write(b []byte) (int, error) {
	p.done += int64(len(b))
	if p.done-p.last >= 1<<20 || p.done == p.total {
		p.last = p.done
		source.EmitContext(p.ctx, p.s.opts.Events, source.Event{Kind: source.EventFetchProgress, Package: p.pkg, Bytes: p.done, Total: p.total})
	}
	return len(b), nil
}

// unpackLayer downloads the zip layer into a temporary file next to dir
// (checking its size and digest), extracts it into dir (which must be
// absent or empty), and returns the SHA-256 of the zip and the h1: of dir.
// A module package is extracted and hashed by the module rule (no
// version-control metadata), a provider package by the provider rule. On
// error nothing is left in dir.
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
	_, module := pkg.(source.ModulePackage)
	if err := s.extractZip(ctx, f, layer.Size, dir, module); err != nil {
		return sum, "", err
	}
	h1, err = hash.Options{Module: module}.H1Dir(ctx, dir)
	if err != nil {
		return sum, "", fmt.Errorf("hashing %s: %w", dir, err)
	}
	return sum, h1, nil
}

// extractZip extracts the zip archive in f (of the given size) into dir
// with the shared safe extractor: entries that would land outside dir,
// links, devices, an entry present twice, and archives beyond
// [Options.Limits] are refused with an [*ArchiveError]. A module package
// is extracted without its version-control metadata.
func (s *Source) extractZip(ctx context.Context, f *os.File, size int64, dir string, module bool) error {
	err := archive.ExtractZip(ctx, f, size, dir, archive.Options{Limits: s.opts.Limits, Module: module})
	var ae *archive.Error
	if !errors.As(err, &ae) {
		return err
	}
	sentinel := ErrUnsafeArchive
	if errors.Is(ae, archive.ErrTooLarge) {
		sentinel = ErrArchiveTooLarge
	}
	return &ArchiveError{Entry: ae.Entry, Err: fmt.Errorf("%w: %s", sentinel, ae.Reason())}
}
