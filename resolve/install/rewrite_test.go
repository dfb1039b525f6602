package install_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source"
)

// netCall is a module block calling the world's git module, constrained
// by a tflock annotation, at ref.
func netCall(name, ref string) string {
	return "module \"" + name + "\" {\n  # tflock: version = \"~> 1.0\"\n  source = \"" + installtest.Network + "?ref=" + ref + "\"\n}\n"
}

// A rewrite of several files is all or nothing (issue 23 item 3): when
// one file cannot be staged (it changed while tflock ran) or replaced
// (the rename fails), no file stays rewritten, nothing is installed,
// the error lists the files, and Init fails, so that no lock file is
// written.
func TestInitRewriteAllOrNothing(t *testing.T) {
	w := startWorld(t)
	c := openCache(t)
	files := map[string]string{"a.tf": netCall("a", "v1.0.0"), "b.tf": netCall("b", "v1.0.0")}

	t.Run("changed while running", func(t *testing.T) {
		dir := t.TempDir()
		writeFiles(t, dir, files)
		bTF := filepath.Join(dir, "b.tf")
		var once sync.Once
		edited := netCall("b", "main")
		// The user edits b.tf's source while tflock resolves.
		events := source.EventsFunc(func(e source.Event) {
			if e.Kind == source.EventVersionChosen {
				once.Do(func() {
					if err := os.WriteFile(bTF, []byte(edited), 0o644); err != nil {
						t.Error(err)
					}
				})
			}
		})
		_, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: c, Events: events})
		var rwe *install.RewriteError
		if !errors.As(err, &rwe) || len(rwe.Changed) != 0 || len(rwe.Unchanged) != 2 || !strings.Contains(err.Error(), bTF+":3 changed while tflock ran") || !strings.Contains(err.Error(), "no file was changed") {
			t.Fatalf("Init: %v, want a *RewriteError naming b.tf:3, with no file changed", err)
		}
		if got := readText(t, filepath.Join(dir, "a.tf")); got != files["a.tf"] {
			t.Errorf("a.tf was rewritten:\n%s", got)
		}
		if got := readText(t, bTF); got != edited {
			t.Errorf("b.tf:\n%s", got)
		}
		if _, err := os.Stat(filepath.Join(dir, ".terraform", "modules", "modules.json")); !os.IsNotExist(err) {
			t.Errorf("modules.json was written: %v", err)
		}
		if tmps, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*")); len(tmps) != 0 {
			t.Errorf("temporary files left: %v", tmps)
		}
	})

	t.Run("rename fails", func(t *testing.T) {
		dir := t.TempDir()
		writeFiles(t, dir, files)
		// A first lock that keeps the refs: the next run rewrites both.
		initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: c, KeepManagedRefs: true})
		before := snapshot(t, dir)
		defer install.SetReplaceFile(func(oldpath, newpath string) error {
			if filepath.Base(newpath) == "b.tf" {
				return errors.New("injected failure")
			}
			return os.Rename(oldpath, newpath)
		})()
		_, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: c})
		var rwe *install.RewriteError
		if !errors.As(err, &rwe) || len(rwe.Changed) != 0 || !slices.Equal(rwe.Unchanged, []string{filepath.Join(dir, "a.tf"), filepath.Join(dir, "b.tf")}) || !strings.Contains(err.Error(), "injected failure") {
			t.Fatalf("Init: %v, want a *RewriteError with a.tf and b.tf unchanged", err)
		}
		if after := snapshot(t, dir); after != before {
			t.Errorf("the failed run changed the directory:\n%s\nwas:\n%s", after, before)
		}
	})
}

// The rewrite touches only the root module's own plain files (issue 23
// item 4): a file without a write bit, a symbolic link, a file with more
// than one hard link, a local module outside the root module's directory
// and a module directory linked to elsewhere are left as they are, with
// a warning naming the file and the source to write, and modules.json
// records the source as it stays. With RewriteProtectedFiles they are
// written: a link's target (the link kept), a hard-linked file in place
// (every link sees it), a read-only file keeping its mode.
func TestInitRewriteProtectedFiles(t *testing.T) {
	w := startWorld(t)
	c := openCache(t)
	call, want := netCall("net", "v1.0.0"), netCall("net", "v1.1.0")
	local := func(src string) string { return "module \"shared\" {\n  source = \"" + src + "\"\n}\n" }
	for _, tc := range []struct {
		name string
		// setup lays out root (the root module) and other (beside it);
		// it returns the file holding the call.
		setup  func(t *testing.T, root, other string) string
		reason string
		check  func(t *testing.T, root, other, file string)
	}{
		{"read-only", func(t *testing.T, root, other string) string {
			writeFiles(t, root, map[string]string{"main.tf": call})
			f := filepath.Join(root, "main.tf")
			chmod(t, f, 0o444)
			return f
		}, "which has no write permission", func(t *testing.T, root, other, file string) {
			if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o444 {
				t.Errorf("mode after the rewrite: %v, %v", fi.Mode(), err)
			}
		}},
		{"symbolic link", func(t *testing.T, root, other string) string {
			writeFiles(t, other, map[string]string{"net.tf": call})
			symlink(t, filepath.Join(other, "net.tf"), filepath.Join(root, "main.tf"))
			return filepath.Join(root, "main.tf")
		}, "which is a symbolic link", func(t *testing.T, root, other, file string) {
			if fi, err := os.Lstat(file); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Errorf("the link was replaced: %v, %v", fi.Mode(), err)
			}
			if got := readText(t, filepath.Join(other, "net.tf")); got != want {
				t.Errorf("the target:\n%s", got)
			}
		}},
		{"hard link", func(t *testing.T, root, other string) string {
			writeFiles(t, other, map[string]string{"net.tf": call})
			if err := os.Link(filepath.Join(other, "net.tf"), filepath.Join(root, "main.tf")); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(root, "main.tf")
		}, "which has 2 hard links", func(t *testing.T, root, other, file string) {
			a, err1 := os.Stat(file)
			b, err2 := os.Stat(filepath.Join(other, "net.tf"))
			if err1 != nil || err2 != nil || !os.SameFile(a, b) {
				t.Errorf("the hard link was broken: %v %v", err1, err2)
			}
		}},
		{"outside the root module", func(t *testing.T, root, other string) string {
			writeFiles(t, root, map[string]string{"main.tf": local("../other")})
			writeFiles(t, other, map[string]string{"main.tf": call})
			return filepath.Join(root, "..", "other", "main.tf")
		}, "which is outside the root module's directory", nil},
		{"linked module directory", func(t *testing.T, root, other string) string {
			writeFiles(t, root, map[string]string{"main.tf": local("./mod")})
			writeFiles(t, other, map[string]string{"main.tf": call})
			symlink(t, other, filepath.Join(root, "mod"))
			return filepath.Join(root, "mod", "main.tf")
		}, "which is reached through a symbolic link", func(t *testing.T, root, other, file string) {
			if got := readText(t, filepath.Join(other, "main.tf")); got != want {
				t.Errorf("the linked module:\n%s", got)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			root, other := filepath.Join(tmp, "root"), filepath.Join(tmp, "other")
			for _, d := range []string{root, other} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			file := tc.setup(t, root, other)
			res := initAndWrite(t, install.Options{Dir: root, Source: w.Source, Cache: c})
			if got := readText(t, file); got != call || len(res.Rewritten) != 0 {
				t.Fatalf("rewritten %+v; the file:\n%s", res.Rewritten, got)
			}
			warned := strings.Join(res.Warnings, "\n")
			for _, s := range []string{"Module source not rewritten", file + ":3", installtest.Network + "?ref=v1.1.0", "(ref v1.1.0)", tc.reason} {
				if !strings.Contains(warned, s) {
					t.Errorf("the warnings lack %q:\n%s", s, warned)
				}
			}
			if m := readText(t, filepath.Join(root, ".terraform", "modules", "modules.json")); !strings.Contains(m, "ref=v1.0.0") || strings.Contains(m, "ref=v1.1.0") {
				t.Errorf("modules.json does not record the source as it stays:\n%s", m)
			}

			res = initAndWrite(t, install.Options{Dir: root, Source: w.Source, Cache: c, RewriteProtectedFiles: true})
			if got := readText(t, file); got != want || len(res.Rewritten) != 1 {
				t.Fatalf("with RewriteProtectedFiles: rewritten %+v; the file:\n%s", res.Rewritten, got)
			}
			if tc.check != nil {
				tc.check(t, root, other, file)
			}
			if tmps, _ := filepath.Glob(filepath.Join(other, ".*.tmp-*")); len(tmps) != 0 {
				t.Errorf("temporary files left: %v", tmps)
			}
		})
	}
}

func chmod(t *testing.T, p string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
}

// The rewrite comes before the install, which puts the sources back when
// it fails (the plugin cache directory is a file): the configuration is
// as it was, and no modules.json nor lock file was written.
func TestInitRewritePutBackWhenInstallFails(t *testing.T) {
	w := startWorld(t)
	dir := t.TempDir()
	providers := "terraform {\n  required_providers {\n    cloud = { source = \"" + installtest.RegistryHost + "/acme/cloud\" }\n  }\n}\n"
	writeFiles(t, dir, map[string]string{"main.tf": providers + netCall("net", "v1.0.0")})
	blocker := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(blocker, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: openCache(t), PluginCacheDir: blocker})
	if err == nil || !strings.Contains(err.Error(), "install: plugin cache") {
		t.Fatalf("Init: %v, want a failure of the install step", err)
	}
	if got := readText(t, filepath.Join(dir, "main.tf")); got != providers+netCall("net", "v1.0.0") {
		t.Errorf("main.tf was not put back:\n%s", got)
	}
	for _, p := range []string{install.LockFileName, filepath.Join(".terraform", "modules", "modules.json")} {
		if _, err := os.Stat(filepath.Join(dir, p)); !os.IsNotExist(err) {
			t.Errorf("%s was written: %v", p, err)
		}
	}
}

// A local module reached under two names (its directory, and a symbolic
// link to it) is one file: with RewriteProtectedFiles its source is
// rewritten once, and the calls through both names must agree on it.
func TestInitRewriteOneFileTwoNames(t *testing.T) {
	w := startWorld(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"main.tf":        "module \"a\" {\n  source = \"./shared\"\n}\n\nmodule \"b\" {\n  source = \"./linked\"\n}\n",
		"shared/main.tf": netCall("net", "v1.0.0"),
	})
	symlink(t, filepath.Join(dir, "shared"), filepath.Join(dir, "linked"))
	res := initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: openCache(t), RewriteProtectedFiles: true})
	if got := readText(t, filepath.Join(dir, "shared", "main.tf")); got != netCall("net", "v1.1.0") || len(res.Rewritten) != 1 {
		t.Errorf("rewritten %+v; shared/main.tf:\n%s", res.Rewritten, got)
	}
}
