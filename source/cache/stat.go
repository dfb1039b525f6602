package cache

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/internal/flock"
	"github.com/tflock/tflock/source"
)

// fileStat is what the file system said of one file of an entry when the
// entry's contents were last verified (hashed to its name).
type fileStat struct {
	Path  string `json:"path"` // slash-separated, relative to the entry
	Size  int64  `json:"size"`
	MTime int64  `json:"mtime"` // nanoseconds since the epoch
	Mode  uint32 `json:"mode"`
	Dev   uint64 `json:"dev"`
	Ino   uint64 `json:"ino"`
}

// statRecord is the JSON stored in stat/: the files of one verified entry.
type statRecord struct {
	H1    hash.Hash  `json:"h1"`
	Files []fileStat `json:"files"`
}

type reverifyKey struct{}

// Reverify returns a context under which the cache trusts no recorded
// file-system metadata: every entry it uses is hashed again, and so is
// every installed package a caller checks with [Cache.Installed]. An
// entry found damaged is discarded and fetched again, as always.
// resolve/install's Options.Reverify sets it for one run; [Options.Reverify]
// sets it for every call on a cache.
func Reverify(ctx context.Context) context.Context {
	return context.WithValue(ctx, reverifyKey{}, true)
}

func (c *Cache) reverify(ctx context.Context) bool {
	on, _ := ctx.Value(reverifyKey{}).(bool)
	return on || c.opts.Reverify
}

// statTempPrefix names a stat record being written in tmp/, and
// statTempGrace is how old one must be before a sweep may remove it: it
// covers the moment between creating the file and locking it.
const (
	statTempPrefix = "stat-"
	statTempGrace  = 5 * time.Second
)

// snapshot lists the files under dir with their metadata, sorted by path.
// ok is false when the metadata cannot vouch for the contents on this
// platform (no device and inode numbers) or the tree holds something
// other than regular files and directories.
func snapshot(dir string) (files []fileStat, ok bool) {
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return fs.SkipAll
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		dev, ino, known := fileID(fi)
		if !known {
			return fs.SkipAll
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		files = append(files, fileStat{Path: filepath.ToSlash(rel), Size: fi.Size(), MTime: fi.ModTime().UnixNano(), Mode: uint32(fi.Mode()), Dev: dev, Ino: ino})
		return nil
	})
	if err != nil || len(files) == 0 {
		return nil, false
	}
	// WalkDir stops early (SkipAll) on what the metadata cannot vouch for.
	if n := countFiles(dir); n != len(files) {
		return nil, false
	}
	slices.SortFunc(files, func(a, b fileStat) int { return strings.Compare(a.Path, b.Path) })
	return files, true
}

// countFiles counts the non-directory entries under dir.
func countFiles(dir string) int {
	n := 0
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	return n
}

func (c *Cache) statPath(h1 hash.Hash) string {
	return filepath.Join(c.dir, "stat", filepath.Base(c.objectDir(h1))+".json")
}

func (c *Cache) readStat(h1 hash.Hash) ([]fileStat, bool) {
	b, err := readRecord(c.statPath(h1))
	if err != nil {
		return nil, false
	}
	var r statRecord
	if json.Unmarshal(b, &r) != nil || r.H1 != h1 || len(r.Files) == 0 {
		return nil, false
	}
	return r.Files, true
}

// recordStat records the metadata of the files of entry dir, whose contents
// were just verified to hash to h1. Best effort: without a record the
// entry is hashed on its next use.
func (c *Cache) recordStat(dir string, h1 hash.Hash) {
	files, ok := snapshot(dir)
	if !ok || c.makeDirs() != nil {
		return
	}
	b, err := json.Marshal(statRecord{H1: h1, Files: files})
	if err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Join(c.dir, "tmp"), statTempPrefix)
	if err != nil {
		return
	}
	defer os.Remove(tmp.Name())
	// Locked while it is written: a killed writer's file is swept by the
	// next Open (flock.SweepTemps), a live one's is not.
	_, _ = flock.LockOpenFile(tmp)
	_, werr := tmp.Write(b)
	if cerr := tmp.Close(); werr != nil || cerr != nil {
		return
	}
	_ = os.Rename(tmp.Name(), c.statPath(h1))
}

// unchanged reports whether the files of entry dir are, by their metadata,
// the very files that were verified to hash to h1, unchanged since.
func (c *Cache) unchanged(dir string, h1 hash.Hash) bool {
	rec, ok := c.readStat(h1)
	if !ok {
		return false
	}
	now, ok := snapshot(dir)
	return ok && slices.Equal(rec, now)
}

// Installed reports whether dir, a package installed from the cache,
// holds exactly the files of pkg's entry: the same files (hard links made
// by the installer, same device and inode), unchanged since the entry was
// verified (same size, modification time and mode), and nothing else. It
// then returns the entry's h1: without reading any file. It returns false
// when that cannot be told from metadata alone (a copy rather than links,
// an edited file, a platform without inode numbers, or a context from
// [Reverify]); the caller then hashes dir itself.
func (c *Cache) Installed(ctx context.Context, pkg source.Package, dir string) (hash.Hash, bool) {
	if c.reverify(ctx) || !indexed(pkg) {
		return "", false
	}
	rec, ok := c.readIndex(identity(pkg))
	if !ok {
		return "", false
	}
	if !c.unchanged(dir, rec.H1) {
		return "", false
	}
	return rec.H1, true
}
