package install_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source/assemble"
	"github.com/tflock/tflock/source/git"
)

// networkCalls calls the world's git module with a constraint, and, when
// extra is set, a second time pinned to 1.0.0.
func networkCalls(extra bool) string {
	s := "module \"network\" {\n  source  = \"" + installtest.Network + "\"\n  version = \"~> 1.0\"\n}\n"
	if extra {
		s += "\nmodule \"network_old\" {\n  source  = \"" + installtest.Network + "\"\n  version = \"1.0.0\"\n}\n"
	}
	return s
}

// The locked tag of a git module is deleted upstream. A run that must list
// the repository's tags again (here: a second call of it is added, so the
// lock file alone no longer answers) keeps the locked version when the git
// source's cache recorded the tag (with a warning), and fails without it.
func TestInitDeletedGitTagFromCachedTagList(t *testing.T) {
	w := startWorld(t)
	var mu sync.Mutex
	var warnings []string
	gopts := w.Git.SourceOptions()
	gopts.CacheDir = t.TempDir()
	gopts.Warn = func(msg string) {
		mu.Lock()
		warnings = append(warnings, msg)
		mu.Unlock()
	}
	cached := &assemble.Dispatch{Providers: w.Source.Providers, Registry: w.Source.Registry, OCI: w.Source.OCI, HTTP: w.Source.HTTP, Git: git.NewSource(gopts)}

	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": networkCalls(false)})
	c := openCache(t)
	res := initAndWrite(t, install.Options{Dir: dir, Source: cached, Cache: c})
	locked := res.Lock.Module("network")
	if locked == nil || locked.Version.String() != "1.1.0" {
		t.Fatalf("network = %+v, want 1.1.0", locked)
	}

	if _, err := installtest.Git(context.Background(), filepath.Join(w.GitDir, "acme", "network.git"), "tag", "-d", "v1.1.0"); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"main.tf": networkCalls(true)})

	// Without the git cache: the locked version is gone.
	before := snapshot(t, dir)
	_, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: openCache(t)})
	var lu *resolve.LockedUnavailableError
	if !errors.As(err, &lu) {
		t.Errorf("without the git cache: %v, want a *resolve.LockedUnavailableError", err)
	}
	if snapshot(t, dir) != before {
		t.Error("a failed run changed the configuration directory")
	}

	// With it, and a cold package cache: the locked commit is installed.
	res = initAndWrite(t, install.Options{Dir: dir, Source: cached, Cache: openCache(t)})
	if got := res.Lock.Module("network"); got == nil || got.Version != locked.Version || got.Commit != locked.Commit {
		t.Errorf("network = %+v, want the locked %s at %s", got, locked.Version, locked.Commit)
	}
	if got := res.Lock.Module("network_old"); got == nil || got.Version.String() != "1.0.0" {
		t.Errorf("network_old = %+v, want 1.0.0", got)
	}
	if _, err := os.Stat(filepath.Join(dir, ".terraform", "modules", "network", "main.tf")); err != nil {
		t.Errorf("network not installed: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(warnings) == 0 || !strings.Contains(strings.Join(warnings, "\n"), `tag "v1.1.0" of version 1.1.0 no longer exists upstream`) {
		t.Errorf("warnings %q, want one about the deleted tag", warnings)
	}
}
