package git

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"sync"

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

// lock serialises work on one cache entry within this process.
func (s *Source) lock(key string) func() {
	mu, _ := s.locks.LoadOrStore(key, new(sync.Mutex))
	mu.(*sync.Mutex).Lock()
	return mu.(*sync.Mutex).Unlock
}

// tagRecord is the tag list kept in the cache: every tag ever seen, with
// the commit it last pointed to.
type tagRecord struct {
	URL  string            `json:"url"` // redacted, for people looking at the cache
	Tags map[string]string `json:"tags"`
}

const tagsFile = "tags.json"

// recordTags merges tags into the cached tag list.
func (s *Source) recordTags(r address.Remote, tags []tag) error {
	dir := s.cacheDir(r)
	defer s.lock(cacheKey(r) + "/tags")()
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
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".tags-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
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
