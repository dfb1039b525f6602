package cache_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tflock/tflock/internal/killtest"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
)

// TestKilledFillIsSwept kills (SIGKILL) a process in the middle of a fill,
// then checks the sequence a user meets (killtest.KilledFill): while
// another process's fill is in progress its work directory is left alone;
// once that process is dead, the next Open sweeps what it left, and a fill
// of the same package works.
func TestKilledFillIsSwept(t *testing.T) {
	if dir := killtest.ChildDir(); dir != "" {
		killedChild(t, dir)
		return
	}
	c := killtest.KilledFill(t, "TestKilledFillIsSwept")
	e, hit, err := c.Fill(context.Background(), testPkg, nil, func(ctx context.Context, tmp string) (*source.Fetched, error) {
		writeFiles(t, tmp, testFiles)
		return nil, nil
	})
	if err != nil || hit || e.H1 != referenceH1(t, testFiles) {
		t.Fatalf("fill after the kill: hit=%v h1=%s err=%v", hit, e.H1, err)
	}
	if left, _ := os.ReadDir(filepath.Join(c.Dir(), "tmp")); len(left) != 0 {
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
		if err := killtest.Ready(); err != nil {
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
