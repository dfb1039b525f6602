//go:build unix

package install_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source/cache"
)

// rewriteInPlace overwrites the file at p with as many other bytes, through
// whatever hard links it has, and puts back its modification time unless
// touch is set.
func rewriteInPlace(t *testing.T, p string, touch bool) {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o755); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, fi.Size())
	for i := range b {
		b[i] = 'X'
	}
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if !touch {
		if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
	}
}

// The warm run: lock file, cache and install present. The installed
// provider, hard links to the cache entry, is kept from metadata alone;
// an edit through the link that shows in the metadata is repaired by the
// next run, and one that hides itself is repaired by Reverify.
func TestWarmRunTrustsLinkedInstall(t *testing.T) {
	w, err := installtest.Start(context.Background(), installtest.Options{NoGit: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": providersOnlyConfig})
	c, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	opts := install.Options{Dir: dir, Source: w.Source, Cache: c}
	first := initAndWrite(t, opts)
	exe := filepath.Join(first.Providers[0].Dir, "terraform-provider-cloud_v1.1.0")
	want, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	run := func(reverify bool) *install.Result {
		o := opts
		o.Reverify = reverify
		return initAndWrite(t, o)
	}
	if res := run(false); !res.Providers[0].Reused || res.Downloads != 0 {
		t.Fatalf("warm run: reused=%v downloads=%d, want the install kept", res.Providers[0].Reused, res.Downloads)
	}

	// Edited through the link, the modification time showing it: the next
	// run sees it, and the cache entry it shares files with is damaged
	// too, so the package is downloaded again.
	rewriteInPlace(t, exe, true)
	if res := run(false); res.Providers[0].Reused || res.Downloads != 1 {
		t.Errorf("after a visible edit: reused=%v downloads=%d, want a fresh download", res.Providers[0].Reused, res.Downloads)
	}
	if b, _ := os.ReadFile(exe); string(b) != string(want) {
		t.Fatal("the edited executable is still installed")
	}

	// Edited with its time put back: the metadata cannot show it, which
	// is the documented limit of the default check; Reverify hashes and
	// repairs it.
	rewriteInPlace(t, exe, false)
	if res := run(false); !res.Providers[0].Reused {
		t.Errorf("a hidden edit was noticed without Reverify: the install was not trusted from its metadata")
	}
	if res := run(true); res.Providers[0].Reused || res.Downloads != 1 {
		t.Errorf("Reverify: reused=%v downloads=%d, want the damage found and a fresh download", res.Providers[0].Reused, res.Downloads)
	}
	if b, _ := os.ReadFile(exe); string(b) != string(want) {
		t.Fatal("Reverify left the edited executable installed")
	}
}
