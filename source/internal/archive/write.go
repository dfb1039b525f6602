package archive

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// ErrNotArchivable is wrapped by the error [WriteZip] returns for a tree
// that holds something other than regular files and directories (a
// symbolic link, a device): such a tree is not put in a zip archive.
var ErrNotArchivable = errors.New("the tree holds an entry that is not a regular file or directory")

// zipTime is the modification time of every entry [WriteZip] writes, so
// that one tree always gives the same bytes.
var zipTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// WriteZip writes the regular files under dir to w as a zip archive whose
// bytes depend only on the files' names, contents and executable bits:
// entries sorted by slash-separated name, deflated, with one fixed time,
// mode 0755 for a file any of whose executable bits is set and 0644
// otherwise, and no directory entries. Extracted, the archive gives back
// a tree with the same h1: as dir. A symbolic link or any other
// non-regular file gives an error wrapping [ErrNotArchivable].
func WriteZip(ctx context.Context, dir string, w io.Writer) error {
	type file struct{ rel, path string }
	var files []file
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			return fmt.Errorf("%w: %s is %v", ErrNotArchivable, filepath.ToSlash(rel), d.Type())
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		files = append(files, file{rel: filepath.ToSlash(rel), path: p})
		return nil
	})
	if err != nil {
		return err
	}
	sort.Slice(files, func(i, j int) bool { return files[i].rel < files[j].rel })
	zw := zip.NewWriter(w)
	for _, f := range files {
		if err := addFile(zw, f.rel, f.path); err != nil {
			return err
		}
	}
	return zw.Close()
}

func addFile(zw *zip.Writer, name, p string) error {
	in, err := os.Open(p)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is %v", ErrNotArchivable, name, fi.Mode().Type())
	}
	mode := fs.FileMode(0o644)
	if fi.Mode().Perm()&0o111 != 0 {
		mode = 0o755
	}
	h := &zip.FileHeader{Name: name, Method: zip.Deflate, Modified: zipTime}
	h.SetMode(mode)
	out, err := zw.CreateHeader(h)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	return err
}
