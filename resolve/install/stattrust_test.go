//go:build unix

package install_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tflock/tflock/internal/testfs"

	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
)

// The warm run: lock file, cache and install present. The installed
// provider, hard links to the cache entry, is kept from metadata alone;
// an edit through the link that shows in the metadata is repaired by the
// next run, and one that hides itself is repaired by Reverify.
func TestWarmRunTrustsLinkedInstall(t *testing.T) {
	w := startWorldWith(t, installtest.Options{NoGit: true})
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": providersOnlyConfig})
	opts := install.Options{Dir: dir, Source: w.Source, Cache: openCache(t)}
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
	testfs.RewriteInPlace(t, exe, true)
	if res := run(false); res.Providers[0].Reused || res.Downloads != 1 {
		t.Errorf("after a visible edit: reused=%v downloads=%d, want a fresh download", res.Providers[0].Reused, res.Downloads)
	}
	if b, _ := os.ReadFile(exe); string(b) != string(want) {
		t.Fatal("the edited executable is still installed")
	}

	// Edited with its time put back: the metadata cannot show it, which
	// is the documented limit of the default check; Reverify hashes and
	// repairs it.
	testfs.RewriteInPlace(t, exe, false)
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
