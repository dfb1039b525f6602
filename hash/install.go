package hash

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Install extracts the zip archive at zipPath into the directory dir,
// verifying it against the recorded hashes want as [Verify] does, in a single
// read and a single inflate: the zh is computed from the bytes as they are
// read and the h1 from the files as they are written. It returns both hashes.
//
// dir must not exist, or be empty. The archive is extracted into a new
// directory next to dir, which is renamed to dir only once the archive is
// verified, so that on any error (a [*MismatchError], a malformed archive)
// nothing is installed. Entry types and permission bits are read as
// archive/zip reads them ([archive/zip.FileHeader.Mode]: Unix modes from Unix
// and Mac OS X creators, MS-DOS attributes from FAT, NTFS and VFAT ones), so
// that the tree installed is the one OpenTofu's extraction installs. Files
// are created with mode 0644, or 0755 when the archive records an executable
// bit; directory entries, by name or by attributes, become (possibly empty)
// directories, any data they hold unread and left out of the h1; a symbolic
// link becomes, as in OpenTofu's extraction, a regular file holding the
// link's target.
//
// To learn which hashes may be added to the lock file, call [Verify] with
// the returned hashes.
func (o Options) Install(ctx context.Context, zipPath, dir string, want []Hash) (ZipSum, error) {
	return withFile(zipPath, func(f *os.File, size int64) (ZipSum, error) {
		return o.InstallReader(ctx, zipPath, f, size, dir, want)
	})
}

// InstallReader is [Options.Install] for an archive of the given size read
// from r, named name in errors. It reads the central directory at the end
// first, then every byte once in order, so that r may be an archive still
// arriving whose reads wait for their bytes.
func (o Options) InstallReader(ctx context.Context, name string, r io.ReaderAt, size int64, dir string, want []Hash) (ZipSum, error) {
	zipPath := name
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return ZipSum{}, &PackageError{Path: dir, Err: errors.New("install directory is not empty")}
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return ZipSum{}, &PackageError{Path: dir, Err: err}
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return ZipSum{}, err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return ZipSum{}, err
	}
	installed := false
	defer func() {
		if !installed {
			os.RemoveAll(tmp)
		}
	}()
	out := func(e *zipEntry) (io.WriteCloser, error) {
		p := filepath.Join(tmp, filepath.FromSlash(e.path))
		if e.isDir {
			return nil, os.MkdirAll(p, 0o755)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		perm := os.FileMode(0o644)
		if e.mode&0o111 != 0 {
			perm = 0o755
		}
		// Read and write: a large entry may be decoded into the file mapped
		// into memory (see inflate.go).
		return os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
	}
	sum, err := o.hashZip(ctx, zipPath, r, size, out)
	if err != nil {
		return ZipSum{}, err
	}
	if _, err := Verify(zipPath, sum.Hashes(), want); err != nil {
		return ZipSum{}, err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return ZipSum{}, err
	}
	os.Remove(dir) // empty or absent, checked above
	if err := os.Rename(tmp, dir); err != nil {
		return ZipSum{}, fmt.Errorf("installing %s: %w", zipPath, err)
	}
	installed = true
	return sum, nil
}
