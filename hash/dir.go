package hash

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
)

// H1Dir returns the h1 hash of the files in dir, with the zero [Options].
// It equals dirhash.HashDir(dir, "", dirhash.Hash1) wherever that succeeds
// on a directory without symbolic links leaving it.
func H1Dir(dir string) (Hash, error) {
	return Options{}.H1Dir(context.Background(), dir)
}

// H1FS returns the h1 hash of the files in fsys, with the zero [Options].
func H1FS(fsys fs.FS) (Hash, error) {
	return Options{}.H1FS(context.Background(), fsys)
}

// dirFile is a file found by a walk: its slash-separated name in the hash
// and how to read it.
type dirFile struct {
	name string // name in the summary
	open string // OS path or fs.FS path of the (resolved) regular file
}

// H1Dir returns the h1 hash of the files in dir. Regular files count;
// symbolic links count as the regular file they point to, which must lie
// inside dir (else [ErrSymlinkOutside]); links to directories and other file
// types are [ErrUnsupported]. With o.Module, VCS metadata ([IsVCSMetadata]) is left out.
func (o Options) H1Dir(ctx context.Context, dir string) (Hash, error) {
	files, err := o.walkDir(dir)
	if err != nil {
		return "", err
	}
	sums, err := o.hashFiles(ctx, dir, files, func(f dirFile, h *fileHasher) ([32]byte, error) {
		return h.hashPath(f.open)
	})
	if err != nil {
		return "", err
	}
	h, err := summarize(sums)
	if err != nil {
		return "", &PackageError{Path: dir, Err: err}
	}
	return h, nil
}

// H1FS returns the h1 hash of the files in fsys, as [Options.H1Dir] does for
// a directory. Symbolic links are followed when fsys implements
// [fs.ReadLinkFS] and resolve to a regular file inside fsys; otherwise they
// are [ErrUnsupported] or [ErrSymlinkOutside].
func (o Options) H1FS(ctx context.Context, fsys fs.FS) (Hash, error) {
	const label = "fs.FS"
	var files []dirFile
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if name == "." {
			return nil
		}
		if o.Module && isVCSName(d.Name()) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		switch t := d.Type(); {
		case t.IsDir():
			return nil
		case t.IsRegular():
			files = append(files, dirFile{name: name, open: name})
		case t&fs.ModeSymlink != 0:
			target, err := resolveFSLink(fsys, name)
			if err != nil {
				return &PackageError{Path: label, Entry: name, Err: err}
			}
			files = append(files, dirFile{name: name, open: target})
		default:
			return &PackageError{Path: label, Entry: name, Err: fmt.Errorf("%w: file type %v", ErrUnsupported, t)}
		}
		if len(files) > o.maxFiles() {
			return &PackageError{Path: label, Err: fmt.Errorf("%w: more than %d files", ErrLimit, o.maxFiles())}
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	sums, err := o.hashFiles(ctx, label, files, func(f dirFile, h *fileHasher) ([32]byte, error) {
		r, err := fsys.Open(f.open)
		if err != nil {
			return [32]byte{}, err
		}
		defer r.Close()
		return h.hashReader(r)
	})
	if err != nil {
		return "", err
	}
	h, err := summarize(sums)
	if err != nil {
		return "", &PackageError{Path: label, Err: err}
	}
	return h, nil
}

// resolveFSLink follows the symbolic link at name inside fsys to a regular
// file inside fsys.
func resolveFSLink(fsys fs.FS, name string) (string, error) {
	rl, ok := fsys.(fs.ReadLinkFS)
	if !ok {
		return "", fmt.Errorf("%w: symbolic link in a file system that cannot read links", ErrUnsupported)
	}
	cur := name
	for range 40 {
		target, err := rl.ReadLink(cur)
		if err != nil {
			return "", err
		}
		if path.IsAbs(target) || filepath.IsAbs(target) {
			return "", fmt.Errorf("%w: %q", ErrSymlinkOutside, target)
		}
		next := path.Join(path.Dir(cur), filepath.ToSlash(target))
		if next == ".." || strings.HasPrefix(next, "../") {
			return "", fmt.Errorf("%w: %q", ErrSymlinkOutside, target)
		}
		info, err := rl.Lstat(next)
		if err != nil {
			return "", err
		}
		switch {
		case info.Mode().IsRegular():
			return next, nil
		case info.Mode()&fs.ModeSymlink != 0:
			cur = next
		default:
			return "", fmt.Errorf("%w: symbolic link to %v", ErrUnsupported, info.Mode().Type())
		}
	}
	return "", fmt.Errorf("%w: too many levels of symbolic links", ErrUnsupported)
}

// walkDir lists the files of dir.
func (o Options) walkDir(dir string) ([]dirFile, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, &PackageError{Path: dir, Err: err}
	}
	info, err := os.Stat(root)
	if err != nil {
		return nil, &PackageError{Path: dir, Err: err}
	}
	if !info.IsDir() {
		return nil, &PackageError{Path: dir, Err: errors.New("not a directory")}
	}
	realRoot := "" // computed on the first symbolic link
	var files []dirFile
	var walk func(osDir, name string) error
	walk = func(osDir, name string) error {
		entries, err := os.ReadDir(osDir)
		if err != nil {
			return &PackageError{Path: dir, Entry: name, Err: err}
		}
		for _, d := range entries {
			if o.Module && isVCSName(d.Name()) {
				continue
			}
			osPath := osDir + string(filepath.Separator) + d.Name()
			rel := d.Name()
			if name != "" {
				rel = name + "/" + d.Name()
			}
			switch t := d.Type(); {
			case t.IsDir():
				if err := walk(osPath, rel); err != nil {
					return err
				}
				continue
			case t.IsRegular():
				files = append(files, dirFile{name: rel, open: osPath})
			case t&fs.ModeSymlink != 0:
				if realRoot == "" {
					if realRoot, err = filepath.EvalSymlinks(root); err != nil {
						return &PackageError{Path: dir, Err: err}
					}
				}
				target, err := resolveOSLink(realRoot, osPath)
				if err != nil {
					return &PackageError{Path: dir, Entry: rel, Err: err}
				}
				files = append(files, dirFile{name: rel, open: target})
			default:
				return &PackageError{Path: dir, Entry: rel, Err: fmt.Errorf("%w: file type %v", ErrUnsupported, t)}
			}
			if len(files) > o.maxFiles() {
				return &PackageError{Path: dir, Err: fmt.Errorf("%w: more than %d files", ErrLimit, o.maxFiles())}
			}
		}
		return nil
	}
	if err := walk(root, ""); err != nil {
		return nil, err
	}
	return files, nil
}

// resolveOSLink resolves the symbolic link at p to a regular file inside
// realRoot (itself free of symbolic links).
func resolveOSLink(realRoot, p string) (string, error) {
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(realRoot, target)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		link, _ := os.Readlink(p)
		return "", fmt.Errorf("%w: %q", ErrSymlinkOutside, link)
	}
	info, err := os.Stat(target)
	if err != nil {
		return "", err
	}
	if !info.Mode().IsRegular() {
		return "", fmt.Errorf("%w: symbolic link to %v", ErrUnsupported, info.Mode().Type())
	}
	return target, nil
}

// fileHasher holds one worker's reusable digest and buffer.
type fileHasher struct {
	h interface {
		io.Writer
		Sum([]byte) []byte
		Reset()
	}
	buf []byte
}

func newFileHasher() *fileHasher {
	return &fileHasher{h: sha256.New(), buf: make([]byte, 128<<10)}
}

func (fh *fileHasher) hashReader(r io.Reader) ([32]byte, error) {
	fh.h.Reset()
	var sum [32]byte
	for {
		n, err := r.Read(fh.buf)
		fh.h.Write(fh.buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			return sum, err
		}
	}
	fh.h.Sum(sum[:0])
	return sum, nil
}

// hashFiles computes the SHA-256 of every file on o.workers() goroutines.
func (o Options) hashFiles(ctx context.Context, label string, files []dirFile, hashOne func(dirFile, *fileHasher) ([32]byte, error)) ([]fileSum, error) {
	sums := make([]fileSum, len(files))
	var next atomic.Int64
	var firstErr error
	var errOnce sync.Once
	var failed atomic.Bool
	work := func() {
		fh := newFileHasher()
		for !failed.Load() {
			i := int(next.Add(1) - 1)
			if i >= len(files) {
				return
			}
			if i%64 == 0 && ctx.Err() != nil {
				errOnce.Do(func() { firstErr = &PackageError{Path: label, Err: ctx.Err()} })
				failed.Store(true)
				return
			}
			sum, err := hashOne(files[i], fh)
			if err != nil {
				errOnce.Do(func() { firstErr = &PackageError{Path: label, Entry: files[i].name, Err: err} })
				failed.Store(true)
				return
			}
			sums[i] = fileSum{name: files[i].name, sum: sum}
		}
	}
	n := min(o.workers(), len(files))
	var wg sync.WaitGroup
	for range n - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return sums, nil
}
