package git

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/address"
)

// cacheKey is the hex SHA-256 of the repository URL without credentials
// (address.StripCredentials): the name of the repository's cache
// directory, shared by every address of the repository whatever
// credentials it carries.
func cacheKey(r address.Remote) string {
	sum := sha256.Sum256([]byte(address.StripCredentials(r.URL)))
	return hex.EncodeToString(sum[:])
}

func (s *Source) cacheDir(r address.Remote) string {
	return filepath.Join(s.opts.CacheDir, cacheKey(r))
}

// Lock names: one lock file per cache entry and kind of data, so that
// recording a tag list does not wait for a long fetch.
const (
	repoLock = "repo.lock" // guards repo.git
	tagsLock = "tags.lock" // guards tags.json
)

// lockEntry takes the lock name of the cache entry of r, both within this
// process and across processes: an exclusive flock (LockFileEx on Windows)
// on CacheDir/KEY/name. The lock file is created when needed and never
// removed, so that every process locks the same file. Waiting honours ctx
// and emits one EventCacheWait.
func (s *Source) lockEntry(ctx context.Context, r address.Remote, m source.ModulePackage, name string) (func(), error) {
	unlock, err := s.locks.Lock(ctx, filepath.Join(s.cacheDir(r), name), func() {
		source.EmitContext(ctx, s.opts.Events, source.Event{Kind: source.EventCacheWait, Package: redacted(m), Detail: "another process or goroutine is using the cached clone"})
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("cache: %w", err)
	}
	return unlock, nil
}

// tagRecord is the tag list kept in the cache: every tag ever seen, with
// the commit it last pointed to.
type tagRecord struct {
	URL  string            `json:"url"` // without credentials, for people looking at the cache
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
	rec.URL = address.StripCredentials(r.URL)
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
	// Not synced: the list is a record for later runs, and one lost to
	// a crash of the machine reads as empty (readTags), as for a new
	// cache; a run does not wait for the disk (about 25 ms on ext4).
	if _, err = f.Write(b); err != nil {
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
