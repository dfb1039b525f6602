package git

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/address"
)

// cacheKey is the hex SHA-256 of the repository URL without credentials:
// the name of the repository's cache directory.
func cacheKey(r address.Remote) string {
	s := r.URL
	if u, err := url.Parse(r.URL); err == nil && u.User != nil {
		_, hasPassword := u.User.Password()
		if hasPassword || u.Scheme == "http" || u.Scheme == "https" {
			u.User = nil
		}
		s = u.String()
	}
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func (s *Source) cacheDir(r address.Remote) string {
	return filepath.Join(s.opts.CacheDir, cacheKey(r))
}

// keyedLocks is a set of in-process locks by name whose lock honours a
// context.
type keyedLocks struct {
	mu   sync.Mutex
	held map[string]chan struct{} // closed when the holder unlocks
}

// lock takes the lock for name, calling waiting once if it has to wait.
func (k *keyedLocks) lock(ctx context.Context, name string, waiting func()) (func(), error) {
	for {
		k.mu.Lock()
		if k.held == nil {
			k.held = map[string]chan struct{}{}
		}
		ch, busy := k.held[name]
		if !busy {
			done := make(chan struct{})
			k.held[name] = done
			k.mu.Unlock()
			return func() {
				k.mu.Lock()
				delete(k.held, name)
				k.mu.Unlock()
				close(done)
			}, nil
		}
		k.mu.Unlock()
		waiting()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Lock names: one lock file per cache entry and kind of data, so that
// recording a tag list does not wait for a long fetch.
const (
	repoLock = "repo.lock" // guards repo.git
	tagsLock = "tags.lock" // guards tags.json
)

// lockPoll bounds the interval at which a lock held by another process is
// tried again.
const (
	lockPollMin = 5 * time.Millisecond
	lockPollMax = 200 * time.Millisecond
)

// lockEntry takes the lock name of the cache entry of r, both within this
// process and across processes: an exclusive flock (LockFileEx on Windows)
// on CacheDir/KEY/name. The lock file is created when needed and never
// removed, so that every process locks the same file. Waiting honours ctx
// and emits one EventCacheWait.
func (s *Source) lockEntry(ctx context.Context, r address.Remote, m source.ModulePackage, name string) (func(), error) {
	dir := s.cacheDir(r)
	told := false
	waiting := func() {
		if !told {
			told = true
			source.Emit(s.opts.Events, source.Event{Kind: source.EventCacheWait, Package: redacted(m), Detail: "another process or goroutine is using the cached clone"})
		}
	}
	unlockLocal, err := s.locks.lock(ctx, filepath.Join(dir, name), waiting)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		unlockLocal()
		return nil, fmt.Errorf("cache: %w", err)
	}
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		unlockLocal()
		return nil, fmt.Errorf("cache: lock file: %w", err)
	}
	wait := lockPollMin
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
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			f.Close()
			unlockLocal()
			return nil, ctx.Err()
		case <-timer.C:
		}
		wait = min(2*wait, lockPollMax)
	}
	return func() {
		_ = unlockFile(f)
		f.Close()
		unlockLocal()
	}, nil
}

// tagRecord is the tag list kept in the cache: every tag ever seen, with
// the commit it last pointed to.
type tagRecord struct {
	URL  string            `json:"url"` // redacted, for people looking at the cache
	Tags map[string]string `json:"tags"`
}

const tagsFile = "tags.json"

// recordTags merges tags into the cached tag list.
func (s *Source) recordTags(ctx context.Context, r address.Remote, m source.ModulePackage, tags []tag) error {
	dir := s.cacheDir(r)
	unlock, err := s.lockEntry(ctx, r, m, tagsLock)
	if err != nil {
		return err
	}
	defer unlock()
	removeStale(dir, ".tags-*")
	rec := s.readTags(r)
	if rec.Tags == nil {
		rec.Tags = map[string]string{}
	}
	rec.URL = address.Redact(r.URL)
	for _, t := range tags {
		rec.Tags[t.name] = t.commit
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".tags-*")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), filepath.Join(dir, tagsFile)); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

// readTags returns the cached tag list, empty if there is none.
func (s *Source) readTags(r address.Remote) tagRecord {
	var rec tagRecord
	b, err := os.ReadFile(filepath.Join(s.cacheDir(r), tagsFile))
	if err != nil {
		return rec
	}
	if json.Unmarshal(b, &rec) != nil {
		return tagRecord{}
	}
	return rec
}

// removeStale removes what an interrupted writer left in dir: the entries
// matching pattern. The caller holds the lock guarding them.
func removeStale(dir, pattern string) {
	names, _ := filepath.Glob(filepath.Join(dir, pattern))
	for _, n := range names {
		os.RemoveAll(n)
	}
}
