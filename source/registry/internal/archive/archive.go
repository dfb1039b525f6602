// Package archive extracts zip and gzip-compressed tar archives into a
// directory safely: no entry may leave the destination (absolute paths, ".."
// elements, symbolic links pointing outside), and the total size and number
// of entries are bounded.
package archive

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Limits bound what an archive may expand to. Zero fields take the stated
// defaults.
type Limits struct {
	// MaxBytes is the largest total uncompressed size. Default 4 GiB.
	MaxBytes int64
	// MaxFiles is the largest number of entries. Default 100000.
	MaxFiles int
}

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = 4 << 30
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = 100000
	}
	return l
}

// ErrUnsafe is wrapped by errors about entries that would escape the
// destination or exceed the limits.
var ErrUnsafe = errors.New("unsafe archive")

// Format is an archive format.
type Format int

// The supported formats.
const (
	Unknown Format = iota
	Zip
	TarGz
)

// FormatOf guesses the format from a file name or URL path: ".zip",
// ".tar.gz" or ".tgz".
func FormatOf(name string) Format {
	n := strings.ToLower(name)
	switch {
	case strings.HasSuffix(n, ".zip"):
		return Zip
	case strings.HasSuffix(n, ".tar.gz"), strings.HasSuffix(n, ".tgz"):
		return TarGz
	}
	return Unknown
}

// cleanName validates an entry name and returns it as a slash-separated path
// relative to the root, or "" for the root itself.
func cleanName(name string) (string, error) {
	n := strings.ReplaceAll(name, "\\", "/")
	if strings.HasPrefix(n, "/") || (len(n) >= 2 && n[1] == ':') {
		return "", fmt.Errorf("%w: entry %q has an absolute path", ErrUnsafe, name)
	}
	for _, el := range strings.Split(n, "/") {
		if el == ".." {
			return "", fmt.Errorf("%w: entry %q leaves the destination directory", ErrUnsafe, name)
		}
	}
	c := path.Clean(n)
	if c == "." {
		return "", nil
	}
	return c, nil
}

type extractor struct {
	root  string
	lim   Limits
	total int64
	files int
	links []string // symbolic links created, to check once all exist
}

// checkLinks makes sure that every symbolic link, now that the whole tree
// exists, resolves inside the root: a lexical check of each target alone
// misses chains of links.
func (x *extractor) checkLinks() error {
	if len(x.links) == 0 {
		return nil
	}
	root, err := filepath.EvalSymlinks(x.root)
	if err != nil {
		return err
	}
	for _, l := range x.links {
		target, err := filepath.EvalSymlinks(l)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue // dangling, and lexically inside
			}
			return fmt.Errorf("%w: symbolic link %s: %v", ErrUnsafe, l, err)
		}
		rel, err := filepath.Rel(root, target)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			rel, _ := filepath.Rel(x.root, l)
			return fmt.Errorf("%w: symbolic link %q resolves outside the destination", ErrUnsafe, filepath.ToSlash(rel))
		}
	}
	return nil
}

func (x *extractor) count() error {
	x.files++
	if x.files > x.lim.MaxFiles {
		return fmt.Errorf("%w: more than %d entries", ErrUnsafe, x.lim.MaxFiles)
	}
	return nil
}

func (x *extractor) writeFile(rel string, mode fs.FileMode, r io.Reader) error {
	dst := filepath.Join(x.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	perm := fs.FileMode(0o644)
	if mode&0o111 != 0 {
		perm = 0o755
	}
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
	if err != nil {
		return err
	}
	remaining := x.lim.MaxBytes - x.total
	n, err := io.Copy(f, io.LimitReader(r, remaining+1))
	x.total += n
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if x.total > x.lim.MaxBytes {
		return fmt.Errorf("%w: expands to more than %d bytes", ErrUnsafe, x.lim.MaxBytes)
	}
	return nil
}

func (x *extractor) symlink(rel, target string) error {
	if strings.HasPrefix(target, "/") || filepath.IsAbs(target) {
		return fmt.Errorf("%w: symbolic link %q points to an absolute path", ErrUnsafe, rel)
	}
	resolved := path.Join(path.Dir(rel), target)
	if resolved == ".." || strings.HasPrefix(resolved, "../") {
		return fmt.Errorf("%w: symbolic link %q points outside the destination", ErrUnsafe, rel)
	}
	dst := filepath.Join(x.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := os.Symlink(target, dst); err != nil {
		return err
	}
	x.links = append(x.links, dst)
	return nil
}

// checkParents refuses to write through a symbolic link created earlier by
// the same archive.
func (x *extractor) checkParents(rel string) error {
	dir := path.Dir(rel)
	for dir != "." && dir != "/" {
		fi, err := os.Lstat(filepath.Join(x.root, filepath.FromSlash(dir)))
		if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%w: entry %q is written through a symbolic link", ErrUnsafe, rel)
		}
		dir = path.Dir(dir)
	}
	return nil
}

// ExtractZip extracts the zip file at src (of the given size) into dir,
// which must exist.
func ExtractZip(src io.ReaderAt, size int64, dir string, lim Limits) error {
	zr, err := zip.NewReader(src, size)
	if err != nil {
		return fmt.Errorf("reading zip archive: %w", err)
	}
	x := &extractor{root: dir, lim: lim.withDefaults()}
	for _, f := range zr.File {
		if err := x.count(); err != nil {
			return err
		}
		rel, err := cleanName(f.Name)
		if err != nil {
			return err
		}
		if rel == "" {
			continue
		}
		if err := x.checkParents(rel); err != nil {
			return err
		}
		mode := f.Mode()
		switch {
		case mode.IsDir():
			if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(rel)), 0o755); err != nil {
				return err
			}
		case mode&fs.ModeSymlink != 0:
			rc, err := f.Open()
			if err != nil {
				return err
			}
			target, err := io.ReadAll(io.LimitReader(rc, 4096))
			rc.Close()
			if err != nil {
				return err
			}
			if err := x.symlink(rel, string(target)); err != nil {
				return err
			}
		case mode.IsRegular():
			rc, err := f.Open()
			if err != nil {
				return err
			}
			err = x.writeFile(rel, mode, rc)
			rc.Close()
			if err != nil {
				return fmt.Errorf("extracting %q: %w", f.Name, err)
			}
		default:
			return fmt.Errorf("%w: entry %q has unsupported type %v", ErrUnsafe, f.Name, mode.Type())
		}
	}
	return x.checkLinks()
}

// ExtractTarGz extracts a gzip-compressed tar stream into dir, which must
// exist.
func ExtractTarGz(r io.Reader, dir string, lim Limits) error {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("reading gzip stream: %w", err)
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	x := &extractor{root: dir, lim: lim.withDefaults()}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return x.checkLinks()
		}
		if err != nil {
			return fmt.Errorf("reading tar archive: %w", err)
		}
		if err := x.count(); err != nil {
			return err
		}
		rel, err := cleanName(h.Name)
		if err != nil {
			return err
		}
		if rel == "" {
			continue
		}
		if err := x.checkParents(rel); err != nil {
			return err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(rel)), 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := x.writeFile(rel, fs.FileMode(h.Mode), tr); err != nil {
				return fmt.Errorf("extracting %q: %w", h.Name, err)
			}
		case tar.TypeSymlink:
			if err := x.symlink(rel, h.Linkname); err != nil {
				return err
			}
		case tar.TypeXGlobalHeader, tar.TypeXHeader:
			continue
		default:
			return fmt.Errorf("%w: entry %q has unsupported type %q", ErrUnsafe, h.Name, h.Typeflag)
		}
	}
}
