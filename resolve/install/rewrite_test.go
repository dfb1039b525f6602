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
