package cache

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/tflock/tflock/source"
)

// keyedMutex is a set of mutexes by key whose Lock honours a context.
type keyedMutex struct {
	mu   sync.Mutex
	held map[string]chan struct{} // closed when the holder unlocks
}

// lock takes the in-process lock for key, reporting whether it had to wait.
func (k *keyedMutex) lock(ctx context.Context, key string, waiting func()) (func(), error) {
	told := false
	for {
		k.mu.Lock()
		if k.held == nil {
			k.held = map[string]chan struct{}{}
		}
		ch, busy := k.held[key]
		if !busy {
			done := make(chan struct{})
			k.held[key] = done
			k.mu.Unlock()
			return func() {
				k.mu.Lock()
				delete(k.held, key)
				k.mu.Unlock()
				close(done)
			}, nil
		}
		k.mu.Unlock()
		if !told {
			waiting()
			told = true
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// lock takes both the in-process lock and the cross-process file lock for
// a package. The lock file is created if needed and never removed.
func (c *Cache) lock(ctx context.Context, pkg source.Package, key string) (func(), error) {
	told := false
	waiting := func() {
		if !told {
			told = true
			source.Emit(c.opts.Events, source.Event{Kind: source.EventCacheWait, Package: pkg, Detail: "another fill of this package is in progress"})
		}
	}
	unlockLocal, err := c.locks.lock(ctx, key, waiting)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(c.dir, "locks", keyName(key)+".lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		unlockLocal()
		return nil, fmt.Errorf("cache: lock file: %w", err)
	}
	for {
		ok, err := tryLockFile(f)
		if err != nil {
			f.Close()
			unlockLocal()
			return nil, fmt.Errorf("cache: locking %s: %w", path, err)
		}
		if ok {
			break
		}
		waiting()
		select {
		case <-ctx.Done():
			f.Close()
			unlockLocal()
			return nil, ctx.Err()
		case <-time.After(c.opts.PollInterval):
		}
	}
	return func() {
		_ = unlockFile(f)
		f.Close()
		unlockLocal()
	}, nil
}
