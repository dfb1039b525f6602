// Package killtest runs the sequence "a process is killed in the middle of
// a cache fill, then the next run" for tests: a test of the current test
// binary runs again in a child process, which fills into a cache and
// signals once it is in the middle of it; the parent checks that the
// child's work is left alone while the child could be alive, kills it
// (SIGKILL), and checks that the next cache.Open sweeps what it left.
package killtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tflock/tflock/source/cache"
)

const (
	dirEnv   = "TFLOCK_KILLTEST_DIR"
	readyEnv = "TFLOCK_KILLTEST_READY"
)

// ChildDir returns, in the child process, the cache directory to fill;
// "" in the parent.
func ChildDir() string { return os.Getenv(dirEnv) }

// Ready signals the parent, from the child, that the fill is under way
// and the child may be killed.
func Ready() error { return os.WriteFile(os.Getenv(readyEnv), nil, 0o644) }

// KilledFill runs the test named test (the caller, which must call
// [ChildDir] first and, in the child, fill into that cache and call
// [Ready] in the middle of the fill) in a child process, and checks the
// sequence: while the child lives, its one fill directory survives
// cache.Open; once the child is killed, the next Open removes it and the
// cache holds no object. It returns that cache, for the fill that
// follows.
func KilledFill(t *testing.T, test string) *cache.Cache {
	t.Helper()
	dir := t.TempDir()
	ready := filepath.Join(t.TempDir(), "ready")
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), dirEnv+"="+dir, readyEnv+"="+ready)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child never got to the middle of its fill\n%s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	fills := func() []string {
		m, _ := filepath.Glob(filepath.Join(dir, "tmp", "fill-*"))
		return m
	}
	if len(fills()) != 1 {
		t.Fatalf("fill directories during the child's fill: %v, want 1", fills())
	}
	// A live fill is not debris.
	if _, err := cache.Open(dir, cache.Options{}); err != nil {
		t.Fatal(err)
	}
	if len(fills()) != 1 {
		t.Fatalf("Open removed the work of a fill still in progress: %v", fills())
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if len(fills()) != 1 {
		t.Fatalf("the killed child left %v, want its fill directory (the debris this test is about)", fills())
	}
	c, err := cache.Open(dir, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if left := fills(); len(left) != 0 {
		t.Fatalf("Open after the kill left %v", left)
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "objects")); len(ents) != 0 {
		t.Fatalf("the killed fill published %d objects", len(ents))
	}
	return c
}
