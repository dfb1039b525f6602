// Package testfs changes files the way the tests of the cache's trust in
// file metadata need: in place, through every hard link, with or without
// the modification time showing it.
package testfs

import (
	"os"
	"testing"
)

// RewriteInPlace overwrites the file at p with as many other bytes ('X'),
// through whatever hard links it has (the file is opened, not replaced),
// making it writable first. Unless touch is set, it then puts the file's
// modification time back, so that only its contents show the change.
func RewriteInPlace(tb testing.TB, p string, touch bool) {
	tb.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.Chmod(p, fi.Mode().Perm()|0o200); err != nil {
		tb.Fatal(err)
	}
	b := make([]byte, fi.Size())
	for i := range b {
		b[i] = 'X'
	}
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	if !touch {
		if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
			tb.Fatal(err)
		}
	}
}
