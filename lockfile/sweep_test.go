package lockfile_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tflock/tflock/internal/flock"
	"github.com/tflock/tflock/lockfile"
)

// TestKilledWritesAreSwept kills (SIGKILL) processes that are writing a
// lock file over and over, as a user interrupting runs would, then checks
// that the next write leaves no temporary file behind, while a temporary
// file another live writer holds is left alone.
func TestKilledWritesAreSwept(t *testing.T) {
	if path := os.Getenv("TFLOCK_LOCKFILE_WRITER"); path != "" {
		f := lockfile.New()
		for {
			if err := lockfile.WriteFile(path, f); err != nil {
				t.Fatal(err)
			}
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, ".terraform.lock.hcl")
	for range 20 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKilledWritesAreSwept$", "-test.count=1")
		cmd.Env = append(os.Environ(), "TFLOCK_LOCKFILE_WRITER="+path)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	// What a writer killed between creating its temporary file and
	// renaming it leaves, whether or not the loop above hit that moment.
	stale := filepath.Join(dir, "..terraform.lock.hcl.tmp-killed")
	if err := os.WriteFile(stale, []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A live writer's temporary file: locked through an open descriptor.
	live := filepath.Join(dir, "..terraform.lock.hcl.tmp-live")
	lf, err := os.Create(live)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	if ok, err := flock.LockOpenFile(lf); err != nil || !ok {
		t.Fatalf("locking the live temporary file: ok=%v err=%v", ok, err)
	}
	// Temporary files younger than a few seconds may be a writer's that has
	// not locked its file yet; these are old enough.
	old := time.Now().Add(-time.Minute)
	temps, _ := filepath.Glob(filepath.Join(dir, "..terraform.lock.hcl.tmp-*"))
	for _, p := range temps {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}

	if err := lockfile.WriteFile(path, lockfile.New()); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "..terraform.lock.hcl.tmp-*"))
	if len(left) != 1 || left[0] != live {
		t.Errorf("temporary files after the next write: %v, want only the live writer's %s", left, live)
	}
	if _, err := lockfile.ParseFile(path); err != nil {
		t.Errorf("the lock file after the killed writes: %v", err)
	}
}
