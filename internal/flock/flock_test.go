package flock

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestExclusiveInProcess checks that holders of one path never overlap and
// that each waiter is told once that it waits.
func TestExclusiveInProcess(t *testing.T) {
	var l Locker
	path := filepath.Join(t.TempDir(), "sub", "x.lock")
	var inside, maxInside, waits atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			unlock, err := l.Lock(context.Background(), path, func() { waits.Add(1) })
			if err != nil {
				t.Error(err)
				return
			}
			n := inside.Add(1)
			for {
				m := maxInside.Load()
				if n <= m || maxInside.CompareAndSwap(m, n) {
					break
				}
			}
			time.Sleep(2 * time.Millisecond)
			inside.Add(-1)
			unlock()
		}()
	}
	wg.Wait()
	if maxInside.Load() != 1 {
		t.Fatalf("%d holders at once, want 1", maxInside.Load())
	}
	if waits.Load() > 7 {
		t.Fatalf("%d wait reports for 8 lockers, want at most one each for the 7 that waited", waits.Load())
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the lock file must remain after unlocking: %v", err)
	}
}

// TestExclusiveAcrossLockers uses two Lockers, which share no in-process
// state, on one path: the file lock alone must keep them apart, as it does
// for two processes (flock locks belong to open file descriptions).
func TestExclusiveAcrossLockers(t *testing.T) {
	var a, b Locker
	b.MinPoll, b.MaxPoll = time.Millisecond, time.Millisecond
	path := filepath.Join(t.TempDir(), "x.lock")
	unlockA, err := a.Lock(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	var told atomic.Int32
	_, err = b.Lock(ctx, path, func() { told.Add(1) })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second locker: %v, want it to wait until its context ends", err)
	}
	if told.Load() != 1 {
		t.Fatalf("waiting reported %d times, want once", told.Load())
	}
	unlockA()
	unlockB, err := b.Lock(context.Background(), path, nil)
	if err != nil {
		t.Fatalf("after the first unlocked: %v", err)
	}
	unlockB()
}

func TestCancelledWhileWaitingInProcess(t *testing.T) {
	var l Locker
	path := filepath.Join(t.TempDir(), "x.lock")
	unlock, err := l.Lock(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Lock(ctx, path, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestTryLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	var a, b Locker
	unlock, ok, err := a.TryLock(path)
	if err != nil || !ok {
		t.Fatalf("first TryLock: ok=%v err=%v", ok, err)
	}
	if _, ok, err := a.TryLock(path); err != nil || ok {
		t.Fatalf("TryLock of a lock held in this Locker: ok=%v err=%v, want false", ok, err)
	}
	if _, ok, err := b.TryLock(path); err != nil || ok {
		t.Fatalf("TryLock of a lock held through another file: ok=%v err=%v, want false", ok, err)
	}
	unlock()
	unlock2, ok, err := b.TryLock(path)
	if err != nil || !ok {
		t.Fatalf("TryLock after unlock: ok=%v err=%v", ok, err)
	}
	unlock2()
}

func TestLockOpenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tmp")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := LockOpenFile(f); err != nil || !ok {
		t.Fatalf("LockOpenFile: ok=%v err=%v", ok, err)
	}
	g, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if ok, err := LockOpenFile(g); err != nil || ok {
		t.Fatalf("LockOpenFile of a file locked through another descriptor: ok=%v err=%v, want false", ok, err)
	}
	f.Close()
	if ok, err := LockOpenFile(g); err != nil || !ok {
		t.Fatalf("LockOpenFile after the holder closed: ok=%v err=%v", ok, err)
	}
}
