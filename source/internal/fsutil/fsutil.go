// Package fsutil holds the file-system steps the sources share: preparing a
// destination directory so that a failed fetch leaves nothing behind,
// copying a package directory, and removing a module package's
// version-control metadata. Archives are extracted by the one extractor,
// source/internal/archive.
package fsutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/tflock/tflock/hash"
)

// Prepare makes dir ready to receive a package: it must not exist or be an
// empty directory. It returns a cleanup function that, called after a
// failure, removes everything the fetch put there (and dir itself if
// Prepare created it).
func Prepare(dir string) (cleanup func(), err error) {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		return func() { _ = os.RemoveAll(dir) }, nil
	case err != nil:
		return nil, err
	case len(entries) > 0:
		return nil, fmt.Errorf("destination directory %s is not empty", dir)
	}
	return func() {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			_ = os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}, nil
}

// ValidName reports whether name is a safe relative slash-separated file
// name: not empty, not absolute, no "." or ".." element, no backslash, no
// NUL.
func ValidName(name string) bool {
	if name == "" || strings.HasPrefix(name, "/") || strings.ContainsAny(name, "\\\x00") || strings.Contains(name, ":") {
		return false
	}
	for _, el := range strings.Split(name, "/") {
		if el == "" || el == "." || el == ".." {
			return false
		}
	}
	return path.Clean(name) == name
}

// CopyDir copies the regular files under src into dst (which exists),
// keeping the executable bits. Symbolic links are followed, src itself
// included (a mirror's package directory may be a link to the real one).
func CopyDir(ctx context.Context, src, dst string) error {
	return copyTree(ctx, src, dst, copyFile, false)
}

// CopyDirLinks is [CopyDir] that copies symbolic links below src as links,
// their targets as written, instead of following them: for module
// packages, whose links the extractor checked to stay inside the package
// and which a module may rely on being links.
func CopyDirLinks(ctx context.Context, src, dst string) error {
	return copyTree(ctx, src, dst, copyFile, true)
}

// LinkDir is [CopyDir] with each regular file hard-linked where the file
// system allows it (same device, links permitted), else copied. The files
// then share their contents with src: for trees that nobody writes, such
// as package-cache entries and the packages installed from them.
func LinkDir(ctx context.Context, src, dst string) error {
	return copyTree(ctx, src, dst, func(from, to string, perm fs.FileMode) error {
		if err := os.Link(from, to); err == nil {
			return nil
		}
		return copyFile(from, to, perm)
	}, false)
}

func copyTree(ctx context.Context, src, dst string, copyFile func(from, to string, perm fs.FileMode) error, keepLinks bool) error {
	src, err := filepath.EvalSymlinks(src)
	if err != nil {
		return err
	}
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		target := filepath.Join(dst, rel)
		if keepLinks && d.Type()&fs.ModeSymlink != 0 {
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		}
		info, err := os.Stat(p) // follows links
		if err != nil {
			return err
		}
		if info.IsDir() {
			if d.Type()&fs.ModeSymlink != 0 {
				if err := os.MkdirAll(target, 0o755); err != nil {
					return err
				}
				return copyTree(ctx, p, target, copyFile, keepLinks)
			}
			return os.MkdirAll(target, 0o755)
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		return copyFile(p, target, info.Mode().Perm())
	})
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm|0o200)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// RemoveVCSMetadata removes, under root, every directory or file that the
// one rule for module packages, [hash.IsVCSMetadata], names, so that the
// tree left is exactly the tree a module h1: covers.
func RemoveVCSMetadata(root string) error {
	found, err := findVCSMetadata(root, false)
	if err != nil {
		return err
	}
	for _, p := range found {
		if err := os.RemoveAll(p); err != nil {
			return err
		}
	}
	return nil
}

// HasVCSMetadata reports whether root holds a directory or file that
// [hash.IsVCSMetadata] names. An unreadable tree reports true: it cannot
// be shown free of it.
func HasVCSMetadata(root string) bool {
	found, err := findVCSMetadata(root, true)
	return err != nil || len(found) > 0
}

// findVCSMetadata lists the VCS metadata under root, stopping at the first
// if first is set.
func findVCSMetadata(root string, first bool) ([]string, error) {
	var found []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != root && hash.IsVCSMetadata(d.Name()) {
			found = append(found, p)
			if first {
				return filepath.SkipAll
			}
			if d.IsDir() {
				return filepath.SkipDir
			}
		}
		return nil
	})
	return found, err
}

// WriteFile writes one file of a package, creating parent directories.
func WriteFile(dir, name string, data []byte, perm fs.FileMode) error {
	if !ValidName(name) {
		return fmt.Errorf("invalid file name %q in package", name)
	}
	target := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	return os.WriteFile(target, data, perm)
}

// ArchiveFile creates the file into which a source downloads an archive it
// hands over unextracted (source.ArchiveFetcher): in dir (the caller's
// own), named package-*.zip. When dir does not exist but its parent does,
// the file is dir itself: a caller that only reads the archive (the
// cache's hash-only path, a mirror's fetch) then has no directory made
// and removed for it, which on some file systems costs as much as the
// download of a small package. When the parent is missing too, dir is
// created. The archive is the result; the source removes it if anything
// fails.
func ArchiveFile(dir string) (*os.File, error) {
	f, err := os.OpenFile(dir, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case err == nil:
		return f, nil
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	return os.CreateTemp(dir, "package-*.zip")
}

// CopyFile copies the regular file src to dst, which must not exist,
// with the permission bits perm (made writable by its owner).
func CopyFile(src, dst string, perm fs.FileMode) error { return copyFile(src, dst, perm) }
