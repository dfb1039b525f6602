package cache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
)

// unpack extracts the archive a source delivered (f.Archive) into dir,
// which must not exist, within the source's limits, and returns its h1:
// (by the module rule when module is set) and its zh:. The archive is read
// once: its bytes are digested for zh: as they are read, each entry is
// inflated once, and each file is digested for h1: as it is written, so
// the tree stored is exactly the tree hashed (hash.Options.Install). That
// reader takes the same rules as the extractor the sources share (entry
// types and modes, names, limits, errors), so there is no second path: an
// archive it refuses, the shared extractor refuses too.
//
// An archive still arriving (f.Pending) is read as its bytes come.
func unpack(ctx context.Context, f *source.Fetched, dir string, module bool) (hash.ZipSum, error) {
	o := archiveOptions(f, module)
	return readArchive(f, func(r io.ReaderAt, size int64) (hash.ZipSum, error) {
		return o.InstallReader(ctx, archiveName(f), r, size, dir, nil)
	})
}

// hasArchive reports whether f handed an archive over (a file, or
// memory) rather than files.
func hasArchive(f *source.Fetched) bool { return f.Archive != "" || f.ArchiveData != nil }

// archiveName names the archive f handed over in errors: its file, or,
// in memory, where it came from.
func archiveName(f *source.Fetched) string {
	if f.Archive != "" {
		return f.Archive
	}
	return f.Location
}

// release gives back the memory of an archive f handed over in memory.
func release(f *source.Fetched) {
	if f.Release != nil {
		f.Release()
		f.Release = nil
	}
}

// archiveOptions are the hashing options for reading the archive f
// delivered: its source's limits, and the module rule for a module.
func archiveOptions(f *source.Fetched, module bool) hash.Options {
	lim := f.Limits.WithDefaults()
	return hash.Options{Module: module, MaxSize: lim.MaxBytes, MaxFiles: lim.MaxEntries, MaxRatio: -1}
}

// readArchive runs read on the archive f delivered. An archive still
// arriving (f.Pending) is read as its bytes come; then its download is
// waited for and f.Pending cleared: the file is then complete, or the
// download's error is returned. An archive whose download restarted is
// read again, whole, from the file. When reading fails, the complete
// archive is checked against the zh: its source stated, so that bytes that
// are not the package's report a checksum mismatch rather than a malformed
// archive, whether or not the source checked them before handing them over.
func readArchive(f *source.Fetched, read func(r io.ReaderAt, size int64) (hash.ZipSum, error)) (hash.ZipSum, error) {
	if f.ArchiveData != nil {
		sum, err := read(bytes.NewReader(f.ArchiveData), int64(len(f.ArchiveData)))
		if err != nil {
			return hash.ZipSum{}, statedZHOr(f, err)
		}
		return sum, nil
	}
	if p := f.Pending; p != nil {
		sum, err := read(p, p.Size())
		werr := p.Wait()
		f.Pending = nil
		switch {
		case werr != nil:
			return hash.ZipSum{}, werr // the archive is gone
		case err == nil:
			return sum, nil
		case !errors.Is(err, source.ErrArchiveRestarted):
			return hash.ZipSum{}, statedZHOr(f, err)
		}
	}
	file, err := os.Open(f.Archive)
	if err != nil {
		return hash.ZipSum{}, err
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		return hash.ZipSum{}, err
	}
	sum, err := read(file, info.Size())
	if err != nil {
		return hash.ZipSum{}, statedZHOr(f, err)
	}
	return sum, nil
}

// statedZHOr returns the mismatch error if the complete archive f
// delivered is not the one whose zh: its source stated, else err.
func statedZHOr(f *source.Fetched, err error) error {
	if merr := checkStatedZH(f); merr != nil {
		return merr
	}
	return err
}

// checkStatedZH returns an error wrapping source.ErrChecksumMismatch if
// the archive f delivered is not the one whose zh: its source stated.
func checkStatedZH(f *source.Fetched) error {
	for _, h := range f.Hashes {
		if h.Scheme() != hash.SchemeZH {
			continue
		}
		got := hash.NewHash(hash.SchemeZH, sha256.Sum256(f.ArchiveData))
		if f.ArchiveData == nil {
			var err error
			if got, err = hash.ZH(f.Archive); err != nil {
				return err
			}
		}
		if got != h {
			return fmt.Errorf("%w: the source reported %s but the archive hashes to %s", source.ErrChecksumMismatch, h, got)
		}
	}
	return nil
}
