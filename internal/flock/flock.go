// Package flock takes exclusive locks named by file paths, both between the
// goroutines of a process and between processes, for caches that many
// processes share.
//
// Across processes the lock is an advisory lock on the file at the path
// (flock on Unix, LockFileEx on Windows). The file is created when needed
// and never removed: removing a lock file after unlocking it races with a
// process that opened it just before, which would then hold a lock on a
// file no one else sees.
package flock

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Locker takes locks by path. The zero value is ready to use. A Locker
// must not be copied after first use.
type Locker struct {
	// MinPoll and MaxPoll bound the interval at which a lock held by
	// another process is tried again: the first wait is MinPoll, and each
	// later one doubles, up to MaxPoll. Zero or less means 5ms and 200ms.
	MinPoll, MaxPoll time.Duration

	mu   sync.Mutex
	held map[string]chan struct{} // closed when the holder unlocks
}

// Lock takes the lock named by path, creating the lock file and its
// directory if needed. If it has to wait, for a goroutine of this process
// or for another process, it calls waiting once (waiting may be nil).
// Waiting ends with ctx. The returned function releases the lock.
func (l *Locker) Lock(ctx context.Context, path string, waiting func()) (func(), error) {
	told := false
	wait := func() {
		if !told && waiting != nil {
			told = true
			waiting()
		}
	}
	unlockLocal, err := l.lockLocal(ctx, path, wait)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		unlockLocal()
		return nil, fmt.Errorf("lock file: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		unlockLocal()
		return nil, fmt.Errorf("lock file: %w", err)
	}
	minPoll, maxPoll := l.MinPoll, l.MaxPoll
	if minPoll <= 0 {
		minPoll = 5 * time.Millisecond
	}
	if maxPoll <= 0 {
		maxPoll = 200 * time.Millisecond
	}
	interval := min(minPoll, maxPoll)
	for {
		ok, err := tryLock(f)
		if err != nil {
			f.Close()
			unlockLocal()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		if ok {
			break
		}
		wait()
		timer := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			timer.Stop()
			f.Close()
			unlockLocal()
			return nil, ctx.Err()
		case <-timer.C:
		}
		interval = min(2*interval, maxPoll)
	}
	return func() {
		_ = unlock(f)
		f.Close()
		unlockLocal()
	}, nil
}

// LockLocal takes the lock named by path within this process only: it
// waits for any goroutine of this process that holds it (by Lock or
// LockLocal), calling waiting once if it has to wait (waiting may be
// nil), and makes no file. Waiting ends with ctx. The returned function
// releases the lock.
func (l *Locker) LockLocal(ctx context.Context, path string, waiting func()) (func(), error) {
	told := false
	return l.lockLocal(ctx, path, func() {
		if !told && waiting != nil {
			told = true
			waiting()
		}
	})
}

// lockLocal takes the in-process lock for key.
func (l *Locker) lockLocal(ctx context.Context, key string, wait func()) (func(), error) {
	for {
		l.mu.Lock()
		if l.held == nil {
			l.held = map[string]chan struct{}{}
		}
		ch, busy := l.held[key]
		if !busy {
			done := make(chan struct{})
			l.held[key] = done
			l.mu.Unlock()
			return func() {
				l.mu.Lock()
				delete(l.held, key)
				l.mu.Unlock()
				close(done)
			}, nil
		}
		l.mu.Unlock()
		wait()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// TryLock takes the lock named by path only if no goroutine of this
// process and no other process holds it; it never waits. ok is false when
// the lock is held elsewhere. It is how a sweeper tells debris left by a
// killed process (whose locks the system released) from work in progress.
func (l *Locker) TryLock(path string) (unlockFn func(), ok bool, err error) {
	l.mu.Lock()
	if l.held == nil {
		l.held = map[string]chan struct{}{}
	}
	if _, busy := l.held[path]; busy {
		l.mu.Unlock()
		return nil, false, nil
	}
	done := make(chan struct{})
	l.held[path] = done
	l.mu.Unlock()
	unlockLocal := func() {
		l.mu.Lock()
		delete(l.held, path)
		l.mu.Unlock()
		close(done)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		unlockLocal()
		return nil, false, fmt.Errorf("lock file: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		unlockLocal()
		return nil, false, fmt.Errorf("lock file: %w", err)
	}
	got, err := tryLock(f)
	if err != nil || !got {
		f.Close()
		unlockLocal()
		if err != nil {
			return nil, false, fmt.Errorf("locking %s: %w", path, err)
		}
		return nil, false, nil
	}
	return func() {
		_ = unlock(f)
		f.Close()
		unlockLocal()
	}, true, nil
}

// LockOpenFile takes the advisory lock of an open file without waiting,
// for a process that marks a temporary file as in use for as long as it
// holds it open. ok is false when another open file description holds it.
// Closing f releases it.
func LockOpenFile(f *os.File) (ok bool, err error) {
	return tryLock(f)
}
