package git

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/address"
	"github.com/tflock/tflock/source/internal/fsutil"
)

// target is what to fetch: a ref name to ask the server for (empty for a
// commit ID), the commit expected, and whether only the cache may be used.
type target struct {
	ref       string // "refs/tags/v1.0.0", "refs/heads/main", "HEAD" or ""
	display   string // the tag or ref as the user knows it
	commit    string // full commit ID, or an abbreviation when ref is ""
	cacheOnly bool
}

// Fetch brings the package to dir. See the package documentation.
func (s *Source) Fetch(ctx context.Context, pkg source.Package, dir string) (*source.Fetched, error) {
	m, r, err := remoteOf(pkg)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, errorf(m, err)
	}
	if !m.Version.IsZero() && m.Ref != "" {
		return nil, errorf(m, ErrRefWithVersion)
	}
	source.EmitContext(ctx, s.opts.Events, source.Event{Kind: source.EventFetchStarted, Package: redacted(m)})
	t, err := s.resolve(ctx, m, r)
	if err != nil {
		return nil, errorf(m, err)
	}
	commit, err := s.export(ctx, m, r, t, dir)
	if err != nil {
		return nil, errorf(m, err)
	}
	h1, err := hash.Options{Module: true}.H1Dir(ctx, dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, errorf(m, err)
	}
	source.EmitContext(ctx, s.opts.Events, source.Event{Kind: source.EventFetchDone, Package: redacted(m), Detail: "commit " + commit})
	return &source.Fetched{
		Package:  pkg,
		Dir:      dir,
		Location: address.Redact(r.URL),
		Hashes:   []hash.Hash{h1},
		Pin:      commit,
	}, nil
}

// resolve finds the commit to fetch and checks it against the pin. A tag
// must still point to the pinned commit; a branch or the default branch
// has moved on by design, so with a pin the pinned commit itself is
// fetched, whatever the branch points to now.
func (s *Source) resolve(ctx context.Context, m source.ModulePackage, r address.Remote) (target, error) {
	switch {
	case !m.Version.IsZero():
		return s.resolveVersion(ctx, m, r)
	case m.Ref != "":
		return s.resolveRef(ctx, m, r)
	default:
		return s.resolveHead(ctx, m, r)
	}
}

// movedTag returns a *MovedTagError when the tag target t no longer points
// to m's pinned commit.
func movedTag(m source.ModulePackage, r address.Remote, t target) error {
	if m.Pin != "" && t.commit != m.Pin {
		return &MovedTagError{Source: address.Redact(r.LockSource()), Ref: t.display, Locked: m.Pin, Now: t.commit}
	}
	return nil
}

// atPin is the target for a branch: its pinned commit when there is
// one, else its head t.
func atPin(m source.ModulePackage, t target) target {
	if m.Pin == "" || !isCommitID(m.Pin) {
		return t
	}
	return target{display: t.display, commit: m.Pin}
}

// resolveVersion finds the tag of m's version, or, when it was deleted
// upstream, the locked commit in the cache.
func (s *Source) resolveVersion(ctx context.Context, m source.ModulePackage, r address.Remote) (target, error) {
	pkgName := address.Redact(r.LockSource())
	tags, err := s.listTags(ctx, r, m)
	if err != nil {
		return target{}, err
	}
	for _, a := range availableFrom(tags) {
		if a.Version == m.Version {
			t := target{ref: "refs/tags/" + a.Ref, display: a.Ref, commit: a.Pin}
			// The tag is what a managed "ref" names. With "depth",
			// tofu clones "--branch TAG", which takes a branch of
			// the same name if there is one: ask for it (without
			// depth, tofu takes the tag, as here).
			if r.Depth > 0 {
				heads, err := s.headsAndTags(ctx, r, m)
				if err != nil {
					return target{}, err
				}
				if err := ambiguous(pkgName, a.Ref, heads, "refs/heads/"+a.Ref, a.Pin); err != nil {
					return target{}, err
				}
			}
			return t, movedTag(m, r, t)
		}
	}
	// The tag may have been deleted upstream: the cache can still
	// provide the locked commit.
	if s.opts.CacheDir != "" && m.Pin != "" {
		for name, commit := range s.readTags(r).Tags {
			if v, ok := tagVersion(name); ok && v == m.Version && commit == m.Pin && s.cachedCommit(ctx, r, m, commit) {
				s.warn(ctx, "%s: tag %q of version %s no longer exists upstream; installing the locked commit %s from the cache", pkgName, name, m.Version, commit)
				return target{display: name, commit: commit, cacheOnly: true}, nil
			}
		}
	}
	names := make([]string, len(tags))
	for i, t := range tags {
		names[i] = t.name
	}
	return target{}, fmt.Errorf("%w: no tag for version %s (tags seen: %s)", source.ErrVersionNotFound, m.Version, strings.Join(names, ", "))
}

// resolveRef finds the branch, tag or commit m's ref names.
func (s *Source) resolveRef(ctx context.Context, m source.ModulePackage, r address.Remote) (target, error) {
	// A full commit id names itself: nothing to ask the remote.
	var refs map[string]string
	if !isCommitID(m.Ref) {
		var err error
		if refs, err = s.lsRemoteRef(ctx, r, m, m.Ref); err != nil {
			return target{}, err
		}
	}
	if tag, ok := refs["refs/tags/"+m.Ref]; ok {
		if err := ambiguous(address.Redact(r.LockSource()), m.Ref, refs, "refs/heads/"+m.Ref, tag); err != nil {
			return target{}, err
		}
	}
	for _, name := range refCandidates(m.Ref) {
		if c, ok := refs[name]; ok {
			t := target{ref: name, display: m.Ref, commit: c}
			if isTag(name) {
				return t, movedTag(m, r, t)
			}
			return atPin(m, t), nil
		}
	}
	if isHex(m.Ref) && len(m.Ref) >= 4 {
		if r.Depth > 0 {
			return target{}, fmt.Errorf("%w: %q is not a branch or tag of the repository", ErrDepthNeedsRef, m.Ref)
		}
		t := target{display: m.Ref, commit: m.Ref}
		if m.Pin != "" && !strings.HasPrefix(m.Pin, m.Ref) {
			return target{}, fmt.Errorf("%w: the source asks for commit %s but the lock file records commit %s", source.ErrChecksumMismatch, m.Ref, m.Pin)
		}
		return t, nil
	}
	return target{}, fmt.Errorf("%w: no branch, tag or commit %q", source.ErrVersionNotFound, m.Ref)
}

// resolveHead finds the repository's default branch.
func (s *Source) resolveHead(ctx context.Context, m source.ModulePackage, r address.Remote) (target, error) {
	refs, err := s.lsRemoteHead(ctx, r)
	if err != nil {
		return target{}, err
	}
	c, ok := refs["HEAD"]
	if !ok {
		return target{}, fmt.Errorf("%w: the repository has no default branch (HEAD)", source.ErrVersionNotFound)
	}
	return atPin(m, target{ref: "HEAD", display: "HEAD", commit: c}), nil
}

// ambiguous returns an *AmbiguousRefError when refs holds the branch
// named like the tag ref, whose commit is tag, at another commit: tofu
// installs the one or the other depending on the source's "depth".
func ambiguous(pkgName, ref string, refs map[string]string, branch, tag string) error {
	if c, ok := refs[branch]; ok && c != tag {
		return &AmbiguousRefError{Source: pkgName, Ref: ref, Tag: tag, Branch: c}
	}
	return nil
}

// isTag reports whether a full ref name is a tag's.
func isTag(ref string) bool { return strings.HasPrefix(ref, "refs/tags/") }

func isHex(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return s != ""
}

// cachedCommit reports whether the cached clone holds commit.
func (s *Source) cachedCommit(ctx context.Context, r address.Remote, m source.ModulePackage, commit string) bool {
	bare := filepath.Join(s.cacheDir(r), "repo.git")
	if _, err := os.Stat(bare); err != nil {
		return false
	}
	unlock, err := s.lockEntry(ctx, r, m, repoLock)
	if err != nil {
		return false
	}
	defer unlock()
	run, err := s.newRunner("", false)
	if err != nil {
		return false
	}
	defer run.close()
	_, err = run.run(ctx, bare, "cat-file", "-e", commit+"^{commit}")
	return err == nil
}

// export checks the commit out into dir, without VCS metadata, and returns the
// full commit ID. On error dir is left as it was.
func (s *Source) export(ctx context.Context, m source.ModulePackage, r address.Remote, t target, dir string) (string, error) {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return "", fmt.Errorf("target directory %s is not empty", dir)
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	work, err := os.MkdirTemp(parent, ".tflock-git-*")
	if err != nil {
		return "", err
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(work)
		}
	}()
	allowFile := strings.HasPrefix(r.URL, "file:") || filepath.IsAbs(r.URL)
	run, err := s.newRunner(r.SSHKey, allowFile)
	if err != nil {
		return "", err
	}
	defer run.close()
	var commit string
	if s.opts.CacheDir != "" {
		commit, err = s.fromCache(ctx, run, r, t, m, work)
	} else {
		if _, err := run.run(ctx, work, "init", "-q"); err != nil {
			return "", err
		}
		if commit, err = fetchInto(ctx, run, work, r.URL, t, r.Depth, ""); err == nil {
			err = checkout(ctx, run, work, commit)
		}
	}
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(work, ".gitmodules")); err == nil {
		// Relative submodule URLs are resolved against the remote
		// "origin", which is therefore written to the configuration
		// (with any credentials of the URL) only here, in the temporary
		// .git removed below.
		if _, err := run.run(ctx, work, "remote", "add", "origin", r.URL); err != nil {
			return "", err
		}
		args := []string{"submodule", "update", "--init", "--recursive"}
		if r.Depth > 0 {
			args = append(args, "--depth", strconv.Itoa(r.Depth))
		}
		if _, err := run.run(ctx, work, args...); err != nil {
			return "", err
		}
	}
	// The checkout's own .git, its submodules' .git files, and whatever
	// .hg, .svn or .bzr the repository tracks: the one rule for module
	// packages.
	if err := fsutil.RemoveVCSMetadata(work); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	if err := os.Rename(work, dir); err != nil {
		return "", err
	}
	done = true
	return commit, nil
}

// checkout checks commit out in the repository at work.
func checkout(ctx context.Context, run *runner, work, commit string) error {
	_, err := run.run(ctx, work, "-c", "advice.detachedHead=false", "checkout", "-q", "--detach", commit)
	return err
}

// fromCache makes sure the cached bare clone holds the target commit under
// refs/tflock/COMMIT, writes its tree into the empty directory work, and
// returns the full commit ID. The tree is read straight from the clone
// into work ([readTree]): work becomes a repository of its own, the
// commit fetched from the clone and checked out, only when the tree has
// submodules (a .gitmodules file), which need one. It holds the cache
// entry's lock throughout, so that other processes sharing CacheDir see
// the clone only between complete updates.
func (s *Source) fromCache(ctx context.Context, run *runner, r address.Remote, t target, m source.ModulePackage, work string) (string, error) {
	unlock, err := s.lockEntry(ctx, r, m, repoLock)
	if err != nil {
		return "", err
	}
	defer unlock()
	bare, created, err := s.openBare(ctx, run, r)
	if err != nil {
		return "", err
	}
	created = madeEmpty(ctx, bare) || created
	commit, err := fillCache(ctx, s.opts.Events, run, bare, created, r, t, m)
	if err != nil {
		return "", err
	}
	if err := readTree(ctx, run, bare, commit, work); err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(work, ".gitmodules")); err != nil {
		return commit, nil
	}
	// Submodules: a checkout of the commit, in place of the tree.
	if err := os.RemoveAll(work); err != nil {
		return "", err
	}
	if err := os.Mkdir(work, 0o700); err != nil {
		return "", err
	}
	if _, err := run.run(ctx, work, "init", "-q"); err != nil {
		return "", err
	}
	if _, err := run.run(ctx, work, "fetch", "-q", "--no-tags", bare, "refs/tflock/"+commit); err != nil {
		return "", err
	}
	return commit, checkout(ctx, run, work, commit)
}

// readTree writes the tree of commit, from the repository at bare, into
// the empty directory work, as a checkout would write it (file modes,
// symbolic links, the repository's .gitattributes conversions), with one
// git command and no copy of the objects: "git --git-dir BARE
// --work-tree WORK read-tree --reset -u COMMIT", with an index of its
// own in WORK/.git, which the caller removes with the rest of the
// version-control metadata.
func readTree(ctx context.Context, run *runner, bare, commit, work string) error {
	gitDir := filepath.Join(work, ".git")
	if err := os.Mkdir(gitDir, 0o700); err != nil {
		return err
	}
	_, err := run.runEnv(ctx, work, []string{"GIT_INDEX_FILE=" + filepath.Join(gitDir, "index")},
		"--git-dir", bare, "--work-tree", work, "read-tree", "--reset", "-u", commit)
	return err
}

// openBare returns the path of the cached bare clone of r, creating it if
// needed (created reports it): "git init --bare" runs in a temporary
// directory renamed into place, so a clone without HEAD is the leftover of
// an interrupted creation and is made afresh. It also removes the lock
// files a killed git left behind. The caller holds the entry's repo lock.
func (s *Source) openBare(ctx context.Context, run *runner, r address.Remote) (bare string, created bool, err error) {
	entry := s.cacheDir(r)
	bare = filepath.Join(entry, "repo.git")
	removeStale(entry, ".repo-*")
	if _, err := os.Stat(filepath.Join(bare, "HEAD")); err == nil {
		removeGitLocks(bare)
		return bare, false, nil
	}
	if err := os.RemoveAll(bare); err != nil {
		return "", false, err
	}
	tmp, err := os.MkdirTemp(entry, ".repo-*")
	if err != nil {
		return "", false, err
	}
	// No template: the sample hooks and the description are files for
	// a person's repository, a dozen file creations the cache does not
	// need.
	if _, err := run.run(ctx, tmp, "init", "-q", "--bare", "--template="); err != nil {
		os.RemoveAll(tmp)
		return "", false, err
	}
	if err := os.Rename(tmp, bare); err != nil {
		os.RemoveAll(tmp)
		return "", false, err
	}
	return bare, true, nil
}

// removeGitLocks removes git's own lock files (NAME.lock) at the top of
// the bare repository and under refs: with the entry's lock held no git
// runs there, so any such file is left by a git that was killed, and would
// make the next fetch fail.
func removeGitLocks(bare string) {
	removeStale(bare, "*.lock")
	_ = filepath.WalkDir(filepath.Join(bare, "refs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".lock") {
			os.Remove(p)
		}
		return nil
	})
}

// fillCache makes sure the bare clone holds the target commit under
// refs/tflock/COMMIT and returns the full commit ID. created says the
// clone was just made, and so holds nothing yet.
func fillCache(ctx context.Context, events source.Events, run *runner, bare string, created bool, r address.Remote, t target, m source.ModulePackage) (string, error) {
	if isCommitID(t.commit) && !created {
		if _, err := run.run(ctx, bare, "rev-parse", "-q", "--verify", "refs/tflock/"+t.commit); err == nil {
			source.EmitContext(ctx, events, source.Event{Kind: source.EventCacheHit, Package: redacted(m), Detail: "commit " + t.commit})
			return t.commit, nil
		}
	}
	if t.cacheOnly {
		if _, err := run.run(ctx, bare, "update-ref", "refs/tflock/"+t.commit, t.commit); err != nil {
			return "", err
		}
		return t.commit, nil
	}
	return fetchInto(ctx, run, bare, r.URL, t, r.Depth, "refs/tflock/")
}

// fetchArgs begin every fetch from a remote: quiet, no tags, the
// objects kept as the pack received (one file and its index, not a file
// per object, which the default does for fewer than 100 objects), and no
// automatic maintenance after it (a "git maintenance run --auto" process
// per fetch, and a repacking now and then, while the user waits). A
// cached clone gains a pack per commit fetched.
var fetchArgs = []string{"-c", "fetch.unpackLimit=1", "-c", "maintenance.auto=false", "-c", "gc.auto=0", "fetch", "-q", "--no-tags"}

// fetchInto fetches the target commit from remote into the repository at
// repo and returns the full commit ID; with keep set ("refs/tflock/"), it
// also points the ref keep+COMMIT at it. A commit known by its full ID
// (what the listing gave) is fetched by that ID, shallowly ("--depth 1",
// or the address's depth): one request fewer than by name (a protocol v2
// server is not asked for its refs again), and no question of a tag that
// moved since the listing. A server that refuses a commit ID is asked for
// the ref by name (which must still give the expected commit if it is a
// tag), and one that refuses a shallow fetch for everything.
func fetchInto(ctx context.Context, run *runner, repo, remote string, t target, depth int, keep string) (string, error) {
	if depth <= 0 {
		depth = 1
	}
	keepRef := func(commit string) (string, error) {
		if keep == "" {
			return commit, nil
		}
		if _, err := run.run(ctx, repo, "update-ref", keep+commit, commit); err != nil {
			return "", err
		}
		return commit, nil
	}
	shallow := slices.Clip(slices.Concat(fetchArgs, []string{"--depth", strconv.Itoa(depth), remote}))
	var err error
	if isCommitID(t.commit) {
		spec := t.commit
		if keep != "" {
			spec = "+" + t.commit + ":" + keep + t.commit
		}
		if _, err = run.run(ctx, repo, append(shallow, spec)...); err == nil {
			return t.commit, nil
		}
		if ctx.Err() != nil {
			return "", err
		}
	}
	if t.ref != "" || !isCommitID(t.commit) {
		want := t.ref
		if want == "" {
			want = t.commit
		}
		if _, err = run.run(ctx, repo, append(shallow, want)...); err == nil {
			out, err := run.run(ctx, repo, "rev-parse", "-q", "--verify", "FETCH_HEAD^{commit}")
			if err != nil {
				return "", err
			}
			got := strings.TrimSpace(string(out))
			// A tag that moved between listing and fetching is
			// reported; a branch moves on by design, and its new head
			// is what was asked for.
			if isTag(t.ref) && got != t.commit {
				return "", &MovedTagError{Source: address.Redact(remote), Ref: t.display, Locked: t.commit, Now: got}
			}
			if t.ref == "" && !strings.HasPrefix(got, t.commit) {
				return "", fmt.Errorf("%w: commit %s not found", source.ErrVersionNotFound, t.commit)
			}
			return keepRef(got)
		}
		if ctx.Err() != nil {
			return "", err
		}
	}
	// The server may refuse a shallow fetch or a commit ID: fetch
	// everything.
	if _, err2 := run.run(ctx, repo, slices.Concat(fetchArgs, []string{remote, "+refs/heads/*:refs/tflock-all/heads/*", "+refs/tags/*:refs/tflock-all/tags/*"})...); err2 != nil {
		return "", err
	}
	out, err := run.run(ctx, repo, "rev-parse", "-q", "--verify", t.commit+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("%w: commit %s not found", source.ErrVersionNotFound, t.commit)
	}
	return keepRef(strings.TrimSpace(string(out)))
}
