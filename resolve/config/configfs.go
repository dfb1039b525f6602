package config

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// ReadTreeFS is [ReadTree] for a configuration held in a file system
// rather than on disk (an embedded configuration, a zip, a
// configuration a wrapper generated in memory): dir is a slash-separated
// path in fsys ("." for its root), and local module calls are followed
// within fsys (one that leads outside it is an error). The file names in
// diagnostics and [Module.Dir] are paths in fsys.
func ReadTreeFS(fsys fs.FS, dir, call string, opts ReadOptions) (*Config, hcl.Diagnostics) {
	return readTreeIn(fsDirs{fsys}, dir, call, opts)
}

// ReadModuleFS is [ReadModule] for a module directory in a file system:
// dir is a slash-separated path in fsys.
func ReadModuleFS(fsys fs.FS, dir, call string, opts ReadOptions) (*Module, hcl.Diagnostics) {
	return readModuleIn(fsDirs{fsys}, dir, call, opts)
}

func readTreeIn(d dirs, dir, call string, opts ReadOptions) (*Config, hcl.Diagnostics) {
	c := &Config{}
	diags := readTree(c, d, dir, call, nil, opts)
	slices.SortStableFunc(c.Modules[1:], func(a, b *Module) int { return strings.Compare(a.Call, b.Call) })
	return c, diags
}

// dirs is where configuration is read from: the operating system's file
// system, paths as given ([osDirs]), or an [fs.FS], slash-separated paths
// ([fsDirs]). The reader has one code path for both.
type dirs interface {
	readDir(dir string) ([]fs.DirEntry, error)
	readFile(name string) ([]byte, error)
	isDir(name string) bool
	// join returns rel (slash-separated) resolved against dir, and false
	// when the result is outside the file system.
	join(dir, rel string) (string, bool)
	// key is the identity of a directory, for cycle detection.
	key(dir string) string
}

type osDirs struct{}

func (osDirs) readDir(dir string) ([]fs.DirEntry, error) { return os.ReadDir(dir) }
func (osDirs) readFile(name string) ([]byte, error)      { return os.ReadFile(name) }
func (osDirs) isDir(name string) bool {
	fi, err := os.Stat(name)
	return err == nil && fi.IsDir()
}
func (osDirs) join(dir, rel string) (string, bool) {
	return filepath.Join(dir, filepath.FromSlash(rel)), true
}
func (osDirs) key(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return filepath.Clean(dir)
	}
	return abs
}

type fsDirs struct{ fsys fs.FS }

func (d fsDirs) readDir(dir string) ([]fs.DirEntry, error) { return fs.ReadDir(d.fsys, dir) }
func (d fsDirs) readFile(name string) ([]byte, error)      { return fs.ReadFile(d.fsys, name) }
func (d fsDirs) isDir(name string) bool {
	fi, err := fs.Stat(d.fsys, name)
	return err == nil && fi.IsDir()
}
func (fsDirs) join(dir, rel string) (string, bool) {
	p := path.Join(dir, rel)
	return p, fs.ValidPath(p)
}
func (fsDirs) key(dir string) string { return path.Clean(dir) }
