package git

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/address"
)

// TestLockAcrossProcesses checks that a cache entry's lock held by this
// process keeps another process out until it is released, and that the
// other process's wait honours its context.
func TestLockAcrossProcesses(t *testing.T) {
	r := address.Remote{Kind: address.KindGit, URL: "https://example.com/org/repo.git"}
	if cache := os.Getenv("TFLOCK_GIT_LOCK_CHILD"); cache != "" {
		s := NewSource(Options{CacheDir: cache})
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		unlock, err := s.lockEntry(ctx, r, source.ModulePackage{}, repoLock)
		switch {
		case err == nil:
			unlock()
			os.Stdout.WriteString("LOCKED\n")
		case errors.Is(err, context.DeadlineExceeded):
			os.Stdout.WriteString("TIMEOUT\n")
		default:
			t.Fatal(err)
		}
		return
	}
	cache := t.TempDir()
	child := func() string {
		t.Helper()
		cmd := exec.Command(os.Args[0], "-test.run=^TestLockAcrossProcesses$", "-test.count=1")
		cmd.Env = append(os.Environ(), "TFLOCK_GIT_LOCK_CHILD="+cache)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		for _, w := range []string{"LOCKED", "TIMEOUT"} {
			if strings.Contains(string(out), w+"\n") {
				return w
			}
		}
		t.Fatalf("child said:\n%s", out)
		return ""
	}
	s := NewSource(Options{CacheDir: cache})
	var events []source.Event
	s.opts.Events = source.EventsFunc(func(e source.Event) { events = append(events, e) })
	unlock, err := s.lockEntry(context.Background(), r, source.ModulePackage{}, repoLock)
	if err != nil {
		t.Fatal(err)
	}
	if got := child(); got != "TIMEOUT" {
		t.Errorf("with the lock held here, the child %s; want TIMEOUT", got)
	}
	// The tags lock of the same entry is independent.
	unlockTags, err := s.lockEntry(context.Background(), r, source.ModulePackage{}, tagsLock)
	if err != nil {
		t.Fatal(err)
	}
	unlockTags()
	// Within the process, a second taker waits, honouring its context.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := s.lockEntry(ctx, r, source.ModulePackage{}, repoLock); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("second lock in the process: got %v, want DeadlineExceeded", err)
	}
	if len(events) != 1 || events[0].Kind != source.EventCacheWait {
		t.Errorf("events = %v, want one EventCacheWait", events)
	}
	unlock()
	if got := child(); got != "LOCKED" {
		t.Errorf("after the unlock, the child %s; want LOCKED", got)
	}
	// The lock file stays.
	if _, err := os.Stat(s.cacheDir(r) + string(os.PathSeparator) + repoLock); err != nil {
		t.Errorf("lock file: %v", err)
	}
}
