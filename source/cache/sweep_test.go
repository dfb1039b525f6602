package cache_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
)

// TestKilledFillIsSwept kills (SIGKILL) a process in the middle of a fill,
// then checks the sequence a user meets: while another process's fill is in
// progress its work directory is left alone; once that process is dead,
// the next Open sweeps what it left, and a fill of the same package works.
func TestKilledFillIsSwept(t *testing.T) {
	if dir := os.Getenv("TFLOCK_CACHE_KILL_DIR"); dir != "" {
		killedChild(t, dir)
		return
	}
	dir := t.TempDir()
	ready := filepath.Join(t.TempDir(), "ready")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledFillIsSwept$", "-test.count=1")
	cmd.Env = append(os.Environ(), "TFLOCK_CACHE_KILL_DIR="+dir, "TFLOCK_CACHE_KILL_READY="+ready)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child never started its fill\n%s", out.String())
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
	e, hit, err := c.Fill(context.Background(), testPkg, nil, func(ctx context.Context, tmp string) (*source.Fetched, error) {
		writeFiles(t, tmp, testFiles)
		return nil, nil
	})
	if err != nil || hit || e.H1 != referenceH1(t, testFiles) {
		t.Fatalf("fill after the kill: hit=%v h1=%s err=%v", hit, e.H1, err)
	}
	if left, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(left) != 0 {
		t.Errorf("tmp/ after a completed fill holds %d entries", len(left))
	}
}

func killedChild(t *testing.T, dir string) {
	c, err := cache.Open(dir, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = c.Fill(context.Background(), testPkg, nil, func(ctx context.Context, tmp string) (*source.Fetched, error) {
		writeFiles(t, tmp, map[string]string{"half": "written"})
		if err := os.WriteFile(os.Getenv("TFLOCK_CACHE_KILL_READY"), nil, 0o644); err != nil {
			return nil, err
		}
		time.Sleep(time.Minute) // killed here
		return nil, errors.New("not killed")
	})
	t.Fatalf("fill returned: %v", err)
}

// A cancelled fill leaves nothing in tmp/.
func TestCancelledFillLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	c, err := cache.Open(dir, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	_, _, err = c.Fill(ctx, testPkg, nil, func(ctx context.Context, tmp string) (*source.Fetched, error) {
		writeFiles(t, tmp, map[string]string{"half": "written"})
		cancel()
		<-ctx.Done()
		return nil, ctx.Err()
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled fill: %v", err)
	}
	if left, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(left) != 0 {
		t.Errorf("tmp/ after a cancelled fill holds %d entries", len(left))
	}
}
