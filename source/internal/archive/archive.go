// Package archive extracts zip and gzip-compressed tar archives into a
// directory safely. It is the one extractor every source uses (registry,
// mirrors, OCI).
//
// No entry may leave the destination: absolute paths, drive letters,
// backslashes, NUL bytes and ".." elements are refused, as is writing
// through a symbolic link. Symbolic links are refused unless
// [Options.Symlinks] is set; then each must resolve inside the destination,
// which is checked once the whole tree exists so that chains of links are
// caught. An entry present twice is refused. The number of entries and the
// total uncompressed size (counted while writing, never taken from headers)
// are bounded.
//
// Every refusal is an [*Error] wrapping [ErrUnsafe] or [ErrTooLarge]. The
// caller removes a partly extracted destination on error.
package archive

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Default limits, used when the [Options] fields are zero.
const (
	DefaultMaxBytes = 4 << 30 // 4 GiB
	DefaultMaxFiles = 100000
)

// Options bound and shape an extraction. The zero value applies the
// defaults stated on each field.
type Options struct {
	// MaxBytes is the largest total uncompressed size.
	// Zero or negative means DefaultMaxBytes (4 GiB).
	MaxBytes int64
	// MaxFiles is the largest number of entries (directories included).
	// Zero or negative means DefaultMaxFiles (100000).
	MaxFiles int
	// Symlinks allows symbolic links that resolve inside the destination.
	// Default false: any symbolic link is refused.
	Symlinks bool
}

func (o Options) withDefaults() Options {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxFiles <= 0 {
		o.MaxFiles = DefaultMaxFiles
	}
	return o
}

var (
	// ErrUnsafe is wrapped by errors about an archive that is not valid or
	// holds an entry that would escape the destination, a link where none
	// is allowed, an entry present twice, or an unsupported entry type.
	ErrUnsafe = errors.New("unsafe archive")
	// ErrTooLarge is wrapped by errors about an archive with too many
	// entries or that expands to too many bytes.
	ErrTooLarge = errors.New("archive exceeds the extraction limits")
)

// Error reports an archive that cannot be extracted safely. Err wraps
// [ErrUnsafe] or [ErrTooLarge].
type Error struct {
	Entry  string // the offending entry as the archive names it; empty when about the whole archive
	Err    error
	reason string // Err's text without the sentinel's
}

// Reason returns what is wrong, without the sentinel's text and the entry
// name, for callers that wrap the error in their own sentinels.
func (e *Error) Reason() string {
	if e.reason == "" {
		return e.Err.Error()
	}
	return e.reason
}

func (e *Error) Error() string {
	if e.Entry == "" {
		return e.Err.Error()
	}
	return fmt.Sprintf("archive entry %q: %v", e.Entry, e.Err)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

func newError(entry string, sentinel error, format string, args ...any) *Error {
	reason := fmt.Sprintf(format, args...)
	return &Error{Entry: entry, Err: fmt.Errorf("%w: %s", sentinel, reason), reason: reason}
}

func unsafeErr(entry, format string, args ...any) error {
	return newError(entry, ErrUnsafe, format, args...)
}

func tooLarge(format string, args ...any) error {
	return newError("", ErrTooLarge, format, args...)
}

// Format is an archive format.
type Format int

// The supported formats.
const (
	Unknown Format = iota
	Zip
	TarGz
)

// FormatOf guesses the format from a file name or URL path: ".zip",
// ".tar.gz" or ".tgz" (any case).
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

// CleanName validates an entry name and returns it as a clean
// slash-separated path relative to the root, or "" for the root itself. The
// error wraps [ErrUnsafe].
func CleanName(name string) (string, error) {
	switch {
	case name == "":
		return "", unsafeErr(name, "empty name")
	case strings.ContainsRune(name, 0):
		return "", unsafeErr(name, "the name contains a NUL byte")
	case strings.Contains(name, `\`):
		return "", unsafeErr(name, "the name contains a backslash")
	case strings.HasPrefix(name, "/") || filepath.IsAbs(name) || (len(name) >= 2 && name[1] == ':'):
		return "", unsafeErr(name, "absolute path")
	}
	for _, el := range strings.Split(name, "/") {
		if el == ".." {
			return "", unsafeErr(name, "the path leaves the destination directory")
		}
	}
	c := path.Clean(name)
	if c == "." {
		return "", nil
	}
	return c, nil
}

type extractor struct {
	ctx   context.Context
	root  string
	o     Options
	total int64
	files int
	links []string // symbolic links created, to check once all exist
}

func newExtractor(ctx context.Context, dir string, o Options) *extractor {
	return &extractor{ctx: ctx, root: dir, o: o.withDefaults()}
}

// entry validates the next entry name and counts it. It returns "" for the
// root directory itself.
func (x *extractor) entry(name string) (string, error) {
	if err := x.ctx.Err(); err != nil {
		return "", err
	}
	x.files++
	if x.files > x.o.MaxFiles {
		return "", tooLarge("more than %d entries", x.o.MaxFiles)
	}
	rel, err := CleanName(name)
	if err != nil || rel == "" {
		return rel, err
	}
	// Refuse to write through a symbolic link created earlier by the same
	// archive.
	for dir := path.Dir(rel); dir != "."; dir = path.Dir(dir) {
		fi, err := os.Lstat(filepath.Join(x.root, filepath.FromSlash(dir)))
		if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return "", unsafeErr(name, "written through a symbolic link")
		}
	}
	return rel, nil
}

func (x *extractor) mkdir(rel string) error {
	return os.MkdirAll(filepath.Join(x.root, filepath.FromSlash(rel)), 0o755)
}

func (x *extractor) writeFile(name, rel string, mode fs.FileMode, r io.Reader) error {
	dst := filepath.Join(x.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	perm := fs.FileMode(0o644)
	if mode&0o111 != 0 {
		perm = 0o755
	}
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
	if errors.Is(err, fs.ErrExist) {
		return unsafeErr(name, "the archive holds this file twice")
	}
	if err != nil {
		return err
	}
	n, err := io.Copy(f, io.LimitReader(r, x.o.MaxBytes-x.total+1))
	x.total += n
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return unsafeErr(name, "%v", err)
	}
	if x.total > x.o.MaxBytes {
		return tooLarge("the archive expands to more than %d bytes", x.o.MaxBytes)
	}
	return nil
}

func (x *extractor) symlink(name, rel, target string) error {
	if !x.o.Symlinks {
		return unsafeErr(name, "symbolic links are not allowed")
	}
	if strings.HasPrefix(target, "/") || filepath.IsAbs(target) || strings.ContainsAny(target, "\\\x00") {
		return unsafeErr(name, "the symbolic link points to an absolute path")
	}
	resolved := path.Join(path.Dir(rel), target)
	if resolved == ".." || strings.HasPrefix(resolved, "../") {
		return unsafeErr(name, "the symbolic link points outside the destination")
	}
	dst := filepath.Join(x.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := os.Symlink(target, dst); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return unsafeErr(name, "the archive holds this file twice")
		}
		return err
	}
	x.links = append(x.links, dst)
	return nil
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
		rel, _ := filepath.Rel(x.root, l)
		name := filepath.ToSlash(rel)
		target, err := filepath.EvalSymlinks(l)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue // dangling, and lexically inside
			}
			return unsafeErr(name, "%v", err)
		}
		r, err := filepath.Rel(root, target)
		if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return unsafeErr(name, "the symbolic link resolves outside the destination")
		}
	}
	return nil
}

// ExtractZipFile extracts the zip archive at file into dir, which must exist.
func ExtractZipFile(ctx context.Context, file, dir string, o Options) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	return ExtractZip(ctx, f, fi.Size(), dir, o)
}

// ExtractZip extracts the zip archive read from r (of the given size) into
// dir, which must exist.
func ExtractZip(ctx context.Context, r io.ReaderAt, size int64, dir string, o Options) error {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return unsafeErr("", "not a valid zip archive: %v", err)
	}
	x := newExtractor(ctx, dir, o)
	if len(zr.File) > x.o.MaxFiles {
		return tooLarge("the archive has %d entries and the limit is %d", len(zr.File), x.o.MaxFiles)
	}
	for _, f := range zr.File {
		rel, err := x.entry(f.Name)
		if err != nil {
			return err
		}
		if rel == "" {
			continue
		}
		mode := f.Mode()
		switch {
		case mode.IsDir():
			err = x.mkdir(rel)
		case mode&fs.ModeSymlink != 0:
			var target []byte
			rc, oerr := f.Open()
			if oerr != nil {
				return unsafeErr(f.Name, "%v", oerr)
			}
			target, err = io.ReadAll(io.LimitReader(rc, 4096))
			rc.Close()
			if err == nil {
				err = x.symlink(f.Name, rel, string(target))
			}
		case mode.IsRegular():
			rc, oerr := f.Open()
			if oerr != nil {
				return unsafeErr(f.Name, "%v", oerr)
			}
			err = x.writeFile(f.Name, rel, mode, rc)
			rc.Close()
		default:
			err = unsafeErr(f.Name, "unsupported entry type %v", mode.Type())
		}
		if err != nil {
			return err
		}
	}
	return x.checkLinks()
}

// ExtractTarGz extracts a gzip-compressed tar stream into dir, which must
// exist.
func ExtractTarGz(ctx context.Context, r io.Reader, dir string, o Options) error {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return unsafeErr("", "not a valid gzip stream: %v", err)
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	x := newExtractor(ctx, dir, o)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return x.checkLinks()
		}
		if err != nil {
			return unsafeErr("", "not a valid tar archive: %v", err)
		}
		if h.Typeflag == tar.TypeXGlobalHeader {
			continue
		}
		rel, err := x.entry(h.Name)
		if err != nil {
			return err
		}
		if rel == "" {
			continue
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = x.mkdir(rel)
		case tar.TypeReg:
			err = x.writeFile(h.Name, rel, fs.FileMode(h.Mode), tr)
		case tar.TypeSymlink:
			err = x.symlink(h.Name, rel, h.Linkname)
		default:
			err = unsafeErr(h.Name, "unsupported entry type %q", h.Typeflag)
		}
		if err != nil {
			return err
		}
	}
}
