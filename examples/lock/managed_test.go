package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tflock/tflock/resolve/install/installtest"
)

// TestDemoManagedRef: the sample's git call is constrained by a
// "# tflock: version" comment (its lock file selects 1.0.0). The first
// run writes the selected tag into
// its source and says so, keeping the rest of main.tf; a re-run changes
// nothing; a hand-edited ref is refused read-only (file and line named)
// and put back by a normal run.
func TestDemoManagedRef(t *testing.T) {
	if err := installtest.HaveGit(); err != nil {
		t.Skip(err)
	}
	tmp := t.TempDir()
	work, cacheDir := filepath.Join(tmp, "work"), filepath.Join(tmp, "cache")
	common := []string{"-work", work, "-cache-dir", cacheDir}
	mainTF := filepath.Join(work, "main.tf")
	read := func() string {
		t.Helper()
		b, err := os.ReadFile(mainTF)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	sample, err := sampleFS.ReadFile("sample/main.tf")
	if err != nil {
		t.Fatal(err)
	}
	const before = `source = "git::https://git.example.test/acme/network.git"`
	const after = `source = "git::https://git.example.test/acme/network.git?ref=v1.0.0"`
	if !strings.Contains(string(sample), before) {
		t.Fatalf("the sample lacks %q", before)
	}
	want := strings.Replace(string(sample), before, after, 1)

	out, code := runLock(t, common...)
	if code != 0 || !strings.Contains(out, `Rewrote the source of module "network" (`+mainTF+`:31) to the locked version: git::https://git.example.test/acme/network.git?ref=v1.0.0`) {
		t.Fatalf("first run: exit %d\n%s", code, out)
	}
	if got := read(); got != want {
		t.Fatalf("main.tf after the first run:\n%s\nwant:\n%s", got, want)
	}
	if out, code = runLock(t, common...); code != 0 || strings.Contains(out, "Rewrote") || read() != want {
		t.Errorf("re-run: exit %d\n%s", code, out)
	}

	if err := os.WriteFile(mainTF, []byte(strings.Replace(want, "?ref=v1.0.0", "?ref=v1.1.0", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code = runLock(t, append(common, "-lockfile=readonly")...)
	if code != 1 || !strings.Contains(out, `module "network" (`+mainTF+`:31): the source is "git::https://git.example.test/acme/network.git?ref=v1.1.0", the lock selects "git::https://git.example.test/acme/network.git?ref=v1.0.0"`) {
		t.Errorf("read-only run on an edited ref: exit %d, want 1 naming the call\n%s", code, out)
	}
	if out, code = runLock(t, common...); code != 0 || read() != want {
		t.Errorf("normal run on an edited ref: exit %d, main.tf:\n%s\n%s", code, read(), out)
	}
}
