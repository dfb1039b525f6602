package cache

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/internal/archive"
)

// unpack extracts the archive a source delivered (f.Archive) into dir,
// which must not exist, within the source's limits, and returns its h1:
// (by the module rule when module is set) and its zh:. The archive is read
// once: its bytes are digested for zh: as they are read, each entry is
// inflated once, and each file is digested for h1: as it is written, so
// the tree stored is exactly the tree hashed (hash.Options.Install).
//
// An archive holding symbolic links, which that one-pass reader does not
// create, goes through the extractor the sources share (which allows links
// that resolve inside the package) and is hashed after extraction.
func unpack(ctx context.Context, f *source.Fetched, dir string, module bool) (hash.ZipSum, error) {
	lim := f.Limits.WithDefaults()
	o := hash.Options{Module: module, MaxSize: lim.MaxBytes, MaxFiles: lim.MaxEntries, MaxRatio: -1}
	sum, err := o.Install(ctx, f.Archive, dir, nil)
	switch {
	case err == nil:
		return sum, nil
	case !errors.Is(err, hash.ErrUnsupported):
		return hash.ZipSum{}, archiveErr(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return hash.ZipSum{}, err
	}
	if err := archive.ExtractZipFile(ctx, f.Archive, dir, archive.Options{Limits: lim, Symlinks: true, Module: module}); err != nil {
		return hash.ZipSum{}, err
	}
	if sum.ZH, err = hash.ZH(f.Archive); err != nil {
		return hash.ZipSum{}, err
	}
	if sum.H1, err = h1Dir(dir, module); err != nil {
		return hash.ZipSum{}, err
	}
	return sum, nil
}

// archiveErr makes an archive beyond its source's limits an error wrapping
// source.ErrTooLarge, the one sentinel callers match whatever the source.
func archiveErr(err error) error {
	if errors.Is(err, hash.ErrLimit) {
		return fmt.Errorf("%w: %w", source.ErrTooLarge, err)
	}
	return err
}
