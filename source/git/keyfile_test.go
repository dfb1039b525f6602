package git

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tflock/tflock/internal/flock"
)

// TestKeyFilesOfKilledRunsAreSwept: a run killed while it held an "sshkey"
// argument left the private key in the temporary directory; the next run
// that needs a key file removes it, and leaves a live run's alone.
func TestKeyFilesOfKilledRunsAreSwept(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	old := time.Now().Add(-time.Minute)
	stale := filepath.Join(tmp, "tflock-sshkey-killed")
	if err := os.WriteFile(stale, []byte("PRIVATE KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	live := filepath.Join(tmp, "tflock-sshkey-live")
	lf, err := os.Create(live)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	if ok, err := flock.LockOpenFile(lf); err != nil || !ok {
		t.Fatalf("lock: %v %v", ok, err)
	}
	for _, p := range []string{stale, live} {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	s := NewSource(Options{})
	r, err := s.newRunner(base64.StdEncoding.EncodeToString([]byte("KEY")), false)
	if err != nil {
		t.Skip(err) // no git binary
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the killed run's key file is still there: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live run's key file was removed: %v", err)
	}
	own := r.keyFile
	if b, err := os.ReadFile(own); err != nil || string(b) != "KEY" {
		t.Errorf("own key file: %q, %v", b, err)
	}
	r.close()
	if _, err := os.Stat(own); !os.IsNotExist(err) {
		t.Errorf("the run's own key file outlived it: %v", err)
	}
}
