// Package archive extracts zip and gzip-compressed tar archives into a
// directory safely. It is the one extractor every source uses (registry,
// mirrors, OCI).
//
// No entry may leave the destination: absolute paths, drive letters,
// backslashes, NUL bytes and ".." elements are refused, as is writing
// through a symbolic link. A tar archive's symbolic links are refused unless
// [Options.Symlinks] is set; then each must resolve inside the destination,
// which is checked once the whole tree exists so that chains of links are
// caught. A zip archive's symbolic links are regular files holding their
// target, as OpenTofu's extraction (archive/zip and go-getter) writes them.
// An entry present twice is refused.
//
// A module package ([Options.Module]) is extracted without its
// version-control metadata: entries that [hash.IsVCSMetadata] names are
// skipped, never written, so that the tree installed is the tree its h1:
// covers.
//
// The number of entries and the total size are bounded by the
// [source.Limits]. A zip archive's central directory is checked before
// anything is written (its entry count and the sum of its declared sizes),
// and the bytes written are counted as well, an entry holding more than it
// declares being refused; a tar archive is counted as it is read, each
// entry's declared size checked before the entry is written, and when it
// can be read twice (a file), it is counted once before anything is
// written.
//
// Entry names follow [hash.CleanName], entry types and modes
// archive/zip's FileHeader.Mode: the rules of the cache's one-pass reader
// (hash.Options.InstallReader) too, so that both install one tree.
//
// Every refusal is an [*Error] wrapping [ErrUnsafe] or [ErrTooLarge], and
// matching the hash package's sentinel for the same refusal. On any error,
// what the extraction wrote into the destination is removed.
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

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
)

// Options shape an extraction. The zero value extracts a provider package
// (nothing skipped) within the default [source.Limits], refusing links.
type Options struct {
	// Limits bound the number of entries and the total size. The zero
	// value applies the defaults [source.Limits] states.
	Limits source.Limits
	// Symlinks allows symbolic links in a tar archive that resolve inside
	// the destination. Default false: any such link is refused. A zip
	// archive's links are always files holding their target, as OpenTofu
	// installs them.
	Symlinks bool
	// Module extracts a module package: entries under version-control
	// metadata ([hash.IsVCSMetadata]) are skipped. Default false, the
	// provider rule: every entry is extracted.
	Module bool
}

var (
	// ErrUnsafe is wrapped by errors about an archive that is not valid or
	// holds an entry that would escape the destination, a link where none
	// is allowed, an entry present twice, or an unsupported entry type.
	ErrUnsafe = errors.New("unsafe archive")
	// ErrTooLarge is wrapped by errors about an archive with too many
	// entries or that expands to too many bytes. It is
	// [source.ErrTooLarge], so that callers match one sentinel whatever
	// the source.
	ErrTooLarge = source.ErrTooLarge
)

// Error reports an archive that cannot be extracted safely. Err wraps
// [ErrUnsafe] or [ErrTooLarge]. The error also matches the sentinel of the
// hash package that names the same refusal ([hash.ErrUnsafePath],
// [hash.ErrDuplicate], [hash.ErrFormat], [hash.ErrUnsupported],
// [hash.ErrSymlinkOutside]; [ErrTooLarge] is [hash.ErrLimit]), so that a
// caller matches one set of errors whichever reader refused the archive.
type Error struct {
	Entry  string // the offending entry as the archive names it; empty when about the whole archive
	Err    error
	reason string // Err's text without the sentinel's
	kind   error  // the hash sentinel of the refusal, or nil
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

// Unwrap returns the cause and the hash sentinel of the refusal.
func (e *Error) Unwrap() []error {
	if e.kind == nil {
		return []error{e.Err}
	}
	return []error{e.Err, e.kind}
}

func newError(entry string, sentinel error, format string, args ...any) *Error {
	reason := fmt.Sprintf(format, args...)
	return &Error{Entry: entry, Err: fmt.Errorf("%w: %s", sentinel, reason), reason: reason}
}

// unsafeErr is an error wrapping ErrUnsafe that also matches kind, the
// hash package's sentinel for the same refusal.
func unsafeErr(entry string, kind error, format string, args ...any) error {
	e := newError(entry, ErrUnsafe, format, args...)
	e.kind = kind
	return e
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
// slash-separated path relative to the root, or "" for the root itself, by
// [hash.CleanName], the one name rule of both extractors. The error wraps
// [ErrUnsafe] and [hash.ErrUnsafePath].
func CleanName(name string) (string, error) {
	c, err := hash.CleanName(name)
	if err != nil {
		return "", unsafeErr(name, hash.ErrUnsafePath, "%s", strings.TrimPrefix(err.Error(), hash.ErrUnsafePath.Error()+": "))
	}
	return c, nil
}

type extractor struct {
	ctx     context.Context
	root    string
	o       Options
	lim     source.Limits
	total   int64
	entries int
	links   []string        // symbolic links created, to check once all exist
	before  map[string]bool // what the destination held before
}

func newExtractor(ctx context.Context, dir string, o Options) *extractor {
	x := &extractor{ctx: ctx, root: dir, o: o, lim: o.Limits.WithDefaults(), before: map[string]bool{}}
	if des, err := os.ReadDir(dir); err == nil {
		for _, d := range des {
			x.before[d.Name()] = true
		}
	}
	return x
}

// done returns err, having removed, if it is not nil, what the extraction
// wrote into the destination.
func (x *extractor) done(err error) error {
	if err == nil {
		return nil
	}
	des, _ := os.ReadDir(x.root)
	for _, d := range des {
		if !x.before[d.Name()] {
			_ = os.RemoveAll(filepath.Join(x.root, d.Name()))
		}
	}
	return err
}

// entry validates the next entry name and counts it. It returns "" for an
// entry not to extract: the root directory itself, or version-control
// metadata in a module package.
func (x *extractor) entry(name string) (string, error) {
	if err := x.count(); err != nil {
		return "", err
	}
	rel, err := CleanName(name)
	if err != nil || rel == "" {
		return rel, err
	}
	if x.o.Module && hash.IsVCSMetadata(rel) {
		return "", nil
	}
	// Refuse to write through a symbolic link created earlier by the same
	// archive.
	for dir := path.Dir(rel); dir != "."; dir = path.Dir(dir) {
		fi, err := os.Lstat(filepath.Join(x.root, filepath.FromSlash(dir)))
		if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return "", unsafeErr(name, hash.ErrUnsafePath, "written through a symbolic link")
		}
	}
	return rel, nil
}

// count counts one more entry.
func (x *extractor) count() error {
	if err := x.ctx.Err(); err != nil {
		return err
	}
	x.entries++
	if x.entries > x.lim.MaxEntries {
		return tooLarge("the archive has more than %d entries", x.lim.MaxEntries)
	}
	return nil
}

// reserve counts n more bytes, as an entry's header declares them, before
// the entry is written.
func (x *extractor) reserve(name string, n int64) error {
	if n < 0 {
		return unsafeErr(name, hash.ErrFormat, "negative size %d", n)
	}
	if n > x.lim.MaxBytes-x.total {
		return tooLarge("the archive expands to more than %d bytes", x.lim.MaxBytes)
	}
	x.total += n
	return nil
}

func (x *extractor) mkdir(rel string) error {
	return os.MkdirAll(filepath.Join(x.root, filepath.FromSlash(rel)), 0o755)
}

// writeFile writes the regular file rel from r, which must hold exactly the
// declared number of bytes (already reserved).
func (x *extractor) writeFile(name, rel string, mode fs.FileMode, declared int64, r io.Reader) error {
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
		return unsafeErr(name, hash.ErrDuplicate, "the archive holds this file twice")
	}
	if err != nil {
		return err
	}
	n, err := io.Copy(f, io.LimitReader(r, declared+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	switch {
	case n > declared || errors.Is(err, zip.ErrFormat):
		// archive/zip reports reading past the declared size as ErrFormat.
		return newError(name, ErrTooLarge, "the entry holds more than the %d bytes its header declares", declared)
	case err != nil:
		return unsafeErr(name, hash.ErrFormat, "%v", err)
	case n < declared:
		return unsafeErr(name, hash.ErrFormat, "the entry holds %d bytes, but its header declares %d", n, declared)
	}
	return nil
}

func (x *extractor) symlink(name, rel, target string) error {
	if !x.o.Symlinks {
		return unsafeErr(name, hash.ErrUnsupported, "symbolic links are not allowed")
	}
	if strings.HasPrefix(target, "/") || filepath.IsAbs(target) || strings.ContainsAny(target, "\\\x00") {
		return unsafeErr(name, hash.ErrSymlinkOutside, "the symbolic link points to an absolute path")
	}
	resolved := path.Join(path.Dir(rel), target)
	if resolved == ".." || strings.HasPrefix(resolved, "../") {
		return unsafeErr(name, hash.ErrSymlinkOutside, "the symbolic link points outside the destination")
	}
	dst := filepath.Join(x.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := os.Symlink(target, dst); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return unsafeErr(name, hash.ErrDuplicate, "the archive holds this file twice")
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
			return unsafeErr(name, hash.ErrSymlinkOutside, "%v", err)
		}
		r, err := filepath.Rel(root, target)
		if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return unsafeErr(name, hash.ErrSymlinkOutside, "the symbolic link resolves outside the destination")
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
		return unsafeErr("", hash.ErrFormat, "not a valid zip archive: %v", err)
	}
	x := newExtractor(ctx, dir, o)
	return x.done(x.zip(zr))
}

func (x *extractor) zip(zr *zip.Reader) error {
	// The central directory declares every entry and its size: check both
	// before anything is written.
	if len(zr.File) > x.lim.MaxEntries {
		return tooLarge("the archive has %d entries and the limit is %d", len(zr.File), x.lim.MaxEntries)
	}
	var declared uint64
	for _, f := range zr.File {
		declared += f.UncompressedSize64
		if declared > uint64(x.lim.MaxBytes) || declared < f.UncompressedSize64 {
			return tooLarge("the archive declares more than %d bytes", x.lim.MaxBytes)
		}
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
		if !mode.IsDir() && mode&fs.ModeSymlink != 0 {
			// A symbolic link in a zip is installed as OpenTofu's
			// extraction installs it, and as the cache's one-pass reader
			// does: a regular file holding the link's target.
			mode &^= fs.ModeSymlink
		}
		switch {
		case mode.IsDir():
			err = x.mkdir(rel)
		case mode.IsRegular():
			size := int64(f.UncompressedSize64) // bounded by MaxBytes above
			if err := x.reserve(f.Name, size); err != nil {
				return err
			}
			rc, oerr := f.Open()
			if oerr != nil {
				return unsafeErr(f.Name, hash.ErrFormat, "%v", oerr)
			}
			err = x.writeFile(f.Name, rel, mode, size, rc)
			rc.Close()
		default:
			err = unsafeErr(f.Name, hash.ErrUnsupported, "unsupported entry type %v", mode.Type())
		}
		if err != nil {
			return err
		}
	}
	return x.checkLinks()
}

// ExtractTarGz extracts a gzip-compressed tar stream into dir, which must
// exist. When r can seek (a downloaded file), the stream is first read
// through without writing anything, counting entries and declared sizes, so
// that an archive beyond the limits is refused with nothing written; the
// extraction itself counts again as it goes.
func ExtractTarGz(ctx context.Context, r io.Reader, dir string, o Options) error {
	x := newExtractor(ctx, dir, o)
	if rs, ok := r.(io.ReadSeeker); ok {
		start, err := rs.Seek(0, io.SeekCurrent)
		if err == nil {
			if err := x.tarGz(rs, false); err != nil {
				return err
			}
			if _, err := rs.Seek(start, io.SeekStart); err != nil {
				return err
			}
			x.entries, x.total = 0, 0
		}
	}
	return x.done(x.tarGz(r, true))
}

// tarGz reads the gzip-compressed tar stream r, counting every entry and
// its declared size against the limits, and, if write is set, extracts it.
func (x *extractor) tarGz(r io.Reader, write bool) error {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return unsafeErr("", hash.ErrFormat, "not a valid gzip stream: %v", err)
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			if !write {
				return nil
			}
			return x.checkLinks()
		}
		if err != nil {
			return unsafeErr("", hash.ErrFormat, "not a valid tar archive: %v", err)
		}
		if h.Typeflag == tar.TypeXGlobalHeader || !write {
			// Counted only: metadata for the whole archive, or the
			// counting pass.
			if err := x.count(); err != nil {
				return err
			}
			if h.Typeflag != tar.TypeXGlobalHeader {
				if err := x.reserve(h.Name, h.Size); err != nil {
					return err
				}
			}
			continue
		}
		rel, err := x.entry(h.Name)
		if err != nil {
			return err
		}
		// Every entry's data is read, even one not extracted: its
		// declared size counts.
		if err := x.reserve(h.Name, h.Size); err != nil {
			return err
		}
		if rel == "" {
			continue
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = x.mkdir(rel)
		case tar.TypeReg:
			err = x.writeFile(h.Name, rel, fs.FileMode(h.Mode), h.Size, tr)
		case tar.TypeSymlink:
			err = x.symlink(h.Name, rel, h.Linkname)
		default:
			err = unsafeErr(h.Name, hash.ErrUnsupported, "unsupported entry type %q", h.Typeflag)
		}
		if err != nil {
			return err
		}
	}
}
