package git

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"

	"github.com/tflock/tflock/internal/flock"
	"github.com/tflock/tflock/internal/gitcheckout"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/address"
)

// Options configures a [Source]. The zero value works: git from PATH, no
// cache, the machine's git configuration ignored, warnings discarded.
type Options struct {
	// GitPath is the git executable. Default: "git", looked up in PATH.
	GitPath string
	// CacheDir holds cached clones and tag lists. Default "": no cache;
	// every Fetch clones afresh into a temporary directory.
	CacheDir string
	// UserConfig makes git read the user's and the system's configuration
	// (credential helpers, url.<base>.insteadOf). Default false: git runs
	// with GIT_CONFIG_NOSYSTEM=1 and GIT_CONFIG_GLOBAL set to the null
	// device, so results do not depend on the machine.
	UserConfig bool
	// Config are extra git settings, "name=value", given to every git
	// command as "git -c name=value": url.<base>.insteadOf rules,
	// http.proxy. They apply with or without UserConfig. Do not put
	// secrets here: command lines are visible to other processes. Default
	// none.
	Config []string
	// Env are extra environment variables, "NAME=value", for every git
	// command, replacing inherited ones of the same name (git lets some
	// of them, such as GIT_SSL_CAINFO, override its configuration).
	// Default none. (gittest.Server.SourceOptions sets Config and Env to
	// reach a test server.)
	Env []string
	// Warn receives warnings, such as a locked tag that was deleted
	// upstream and installed from the cache. Default nil: discarded.
	// Messages never contain credentials.
	Warn func(msg string)
	// Events receives progress events. Default nil: discarded.
	Events source.Events
}

// Source lists and fetches git module packages. It is safe for concurrent
// use. Create it with [NewSource].
type Source struct {
	opts  Options
	locks flock.Locker // the cache locks, in-process and across processes
}

var _ source.Source = (*Source)(nil)

// NewSource returns a git source with the given options.
func NewSource(opts Options) *Source {
	return &Source{opts: opts}
}

// String names the source for messages.
func (s *Source) String() string { return "git" }

func (s *Source) gitPath() (string, error) {
	name := s.opts.GitPath
	if name == "" {
		name = "git"
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%w: %v; install git, or set Options.GitPath", ErrGitNotFound, err)
	}
	return p, nil
}

func (s *Source) warn(ctx context.Context, format string, args ...any) {
	msg := address.Redact(fmt.Sprintf(format, args...))
	if s.opts.Warn != nil {
		s.opts.Warn(msg)
	}
	source.EmitContext(ctx, s.opts.Events, source.Event{Kind: source.EventWarning, Detail: msg})
}

// remoteOf returns the git address of a module package, or an error
// wrapping source.ErrNotFound for a package that is not a git module.
func remoteOf(pkg source.Package) (source.ModulePackage, address.Remote, error) {
	m, ok := pkg.(source.ModulePackage)
	if !ok {
		return m, address.Remote{}, &source.Error{Source: "git", Package: pkg, Err: fmt.Errorf("%w: not a module package", source.ErrNotFound)}
	}
	src, err := m.Address()
	if err != nil {
		return m, address.Remote{}, &source.Error{Source: "git", Package: redacted(m), Err: err}
	}
	r, ok := src.(address.Remote)
	if !ok || r.Kind != address.KindGit {
		return m, address.Remote{}, &source.Error{Source: "git", Package: redacted(m), Err: fmt.Errorf("%w: not a git module source", source.ErrNotFound)}
	}
	return m, r, nil
}

// redacted returns m with credentials removed from its Source, for errors.
func redacted(m source.ModulePackage) source.ModulePackage {
	m.Source = address.Redact(m.Source)
	m.Addr = nil // the typed address keeps the credentials
	return m
}

// errorf wraps err with the package's context, redacted.
func errorf(m source.ModulePackage, err error) error {
	return &source.Error{Source: "git", Package: redacted(m), Err: err}
}

// Validate reports a contradiction in a module call: a git source with a
// "ref" argument and a version constraint too ([ErrRefWithVersion]). It
// accepts any other source.
func Validate(src address.ModuleSource, c versions.Constraints) error {
	r, ok := src.(address.Remote)
	if !ok || r.Kind != address.KindGit || r.Ref == "" || c.IsZero() {
		return nil
	}
	return fmt.Errorf("%s: %w; remove the \"ref\" argument to select the version by the constraint %q, or remove the constraint", address.Redact(r.LockSource()), ErrRefWithVersion, c.String())
}

// tag is one tag of a remote repository.
type tag struct {
	name   string
	commit string
}

// Versions lists the semver tags of the repository of pkg, a
// [source.ModulePackage] with a git Source, sorted by version.
func (s *Source) Versions(ctx context.Context, pkg source.Package) ([]source.Available, error) {
	m, r, err := remoteOf(pkg)
	if err != nil {
		return nil, err
	}
	tags, err := s.listTags(ctx, r, m)
	if err != nil {
		return nil, errorf(m, err)
	}
	list := availableFrom(tags)
	if s.opts.CacheDir != "" {
		list = s.addCachedVersions(ctx, r, m, tags, list)
	}
	return list, nil
}

// addCachedVersions adds to list the versions whose tag has disappeared
// upstream but which the cache still holds: the tag is in the cached tag
// list and its commit in the cached clone. Each one added is warned about.
// A tag upstream always wins over a cached one of the same version.
func (s *Source) addCachedVersions(ctx context.Context, r address.Remote, m source.ModulePackage, upstream []tag, list []source.Available) []source.Available {
	seen := map[string]bool{}
	for _, t := range upstream {
		seen[t.name] = true
	}
	have := map[versions.Version]bool{}
	for _, a := range list {
		have[a.Version] = true
	}
	var gone []tag
	for name, commit := range s.readTags(r).Tags {
		if seen[name] {
			continue
		}
		if v, ok := tagVersion(name); ok && !have[v] {
			gone = append(gone, tag{name, commit})
		}
	}
	if len(gone) == 0 {
		return list
	}
	pkgName := address.Redact(r.LockSource())
	added := false
	for _, a := range availableFrom(gone) {
		if !s.cachedCommit(ctx, r, m, a.Pin) {
			continue
		}
		s.warn(ctx, "%s: tag %q of version %s no longer exists upstream; listing it from the cache (commit %s)", pkgName, a.Ref, a.Version, a.Pin)
		list = append(list, a)
		added = true
	}
	if added {
		slices.SortFunc(list, func(a, b source.Available) int { return a.Version.Compare(b.Version) })
	}
	return list
}

// availableFrom keeps the semver tags, "v" prefix preferred on ties.
func availableFrom(tags []tag) []source.Available {
	byVersion := map[versions.Version]source.Available{}
	for _, t := range tags {
		v, ok := tagVersion(t.name)
		if !ok {
			continue
		}
		if prev, dup := byVersion[v]; dup && strings.HasPrefix(prev.Ref, "v") {
			continue
		}
		byVersion[v] = source.Available{Version: v, Ref: t.name, Pin: t.commit}
	}
	list := make([]source.Available, 0, len(byVersion))
	for _, a := range byVersion {
		list = append(list, a)
	}
	slices.SortFunc(list, func(a, b source.Available) int { return a.Version.Compare(b.Version) })
	return list
}

// tagVersion parses a tag as a strict semantic version, with or without a
// "v" prefix.
func tagVersion(name string) (versions.Version, bool) {
	return versions.ParseTag(name, versions.GitTag)
}

// Select returns the newest version of pkg's repository that c allows.
// When none does, the error is a [*NoMatchingTagError] listing every tag.
func (s *Source) Select(ctx context.Context, pkg source.ModulePackage, c versions.Constraints) (source.Available, error) {
	m, r, err := remoteOf(pkg)
	if err != nil {
		return source.Available{}, err
	}
	tags, err := s.listTags(ctx, r, m)
	if err != nil {
		return source.Available{}, errorf(m, err)
	}
	list := availableFrom(tags)
	vs := make([]versions.Version, len(list))
	for i, a := range list {
		vs[i] = a.Version
	}
	if v, ok := versions.Newest(vs, c); ok {
		for _, a := range list {
			if a.Version == v {
				return a, nil
			}
		}
	}
	names := make([]string, len(tags))
	for i, t := range tags {
		names[i] = t.name
	}
	slices.Sort(names)
	return source.Available{}, &NoMatchingTagError{Source: address.Redact(r.LockSource()), Constraints: c.String(), Tags: names}
}

// listTags returns the tags of the repository, from its branches and
// tags ([Source.headsAndTags]).
func (s *Source) listTags(ctx context.Context, r address.Remote, m source.ModulePackage) ([]tag, error) {
	refs, err := s.headsAndTags(ctx, r, m)
	if err != nil {
		return nil, err
	}
	var tags []tag
	for name, commit := range refs {
		if t, ok := strings.CutPrefix(name, "refs/tags/"); ok {
			tags = append(tags, tag{t, commit})
		}
	}
	slices.SortFunc(tags, func(a, b tag) int { return strings.Compare(a.name, b.name) })
	return tags, nil
}

// headsAndTags lists the branches and tags of the repository, annotated
// tags peeled: "git ls-remote --heads --tags -- URL", which asks a
// protocol v2 server for refs/heads/ and refs/tags/ only, so that a
// repository's other refs (such as thousands of refs/pull/*) are not even
// sent. It is the one listing that answers a version list, a ref that
// names a branch or tag (and whether it names both), and the commit to
// fetch: in a run ([source.WithRun]) it runs once per repository. The
// tags are recorded in the cache. The map is shared: callers must not
// modify it.
func (s *Source) headsAndTags(ctx context.Context, r address.Remote, m source.ModulePackage) (map[string]string, error) {
	return s.listOnce(ctx, r, "heads+tags", func() (map[string]string, error) {
		refs, err := s.lsRemote(ctx, r, "--heads", "--tags", "--", r.URL)
		if err != nil {
			return nil, err
		}
		if s.opts.CacheDir != "" {
			var tags []tag
			for name, commit := range refs {
				if t, ok := strings.CutPrefix(name, "refs/tags/"); ok {
					tags = append(tags, tag{t, commit})
				}
			}
			if err := s.recordTags(ctx, r, m, tags); err != nil && ctx.Err() == nil {
				s.warn(ctx, "cannot record the tags of %s in the cache: %v", r.URL, err)
			}
		}
		return refs, nil
	})
}

// refCandidates returns the full ref names a git "ref" argument may name,
// in the order they are tried: a tag, a branch, then the name itself when
// it is a full ref name ("refs/...") or "HEAD".
func refCandidates(ref string) []string {
	names := []string{"refs/tags/" + ref, "refs/heads/" + ref}
	if strings.HasPrefix(ref, "refs/") || ref == "HEAD" {
		names = append(names, ref)
	}
	return names
}

// lsRemoteRef returns the refs a git "ref" argument may name
// ([refCandidates]), among others. When they are all branches or tags,
// that is the repository's one listing ([Source.headsAndTags]). A full
// ref name outside refs/heads/ and refs/tags/, or "HEAD", is asked for
// by name ("git ls-remote -- URL refs/tags/REF refs/tags/REF^{}
// refs/heads/REF REF"; git prints the refs asked only, but the server
// sends all its refs), once per run ([source.WithRun]).
func (s *Source) lsRemoteRef(ctx context.Context, r address.Remote, m source.ModulePackage, ref string) (map[string]string, error) {
	var patterns []string
	headsOrTags := true
	for _, name := range refCandidates(ref) {
		patterns = append(patterns, name)
		if isTag(name) {
			patterns = append(patterns, name+"^{}")
		}
		if !isTag(name) && !strings.HasPrefix(name, "refs/heads/") {
			headsOrTags = false
		}
	}
	if headsOrTags {
		return s.headsAndTags(ctx, r, m)
	}
	return s.listOnce(ctx, r, "ref "+ref, func() (map[string]string, error) {
		return s.lsRemote(ctx, r, append([]string{"--", r.URL}, patterns...)...)
	})
}

// lsRemoteHead asks the remote for its default branch, "HEAD" only, once
// per run ([source.WithRun]).
func (s *Source) lsRemoteHead(ctx context.Context, r address.Remote) (map[string]string, error) {
	return s.listOnce(ctx, r, "HEAD", func() (map[string]string, error) {
		return s.lsRemote(ctx, r, "--", r.URL, "HEAD")
	})
}

// lsRemote runs "git ls-remote" with the given arguments (options, "--",
// the URL and any patterns) and returns the refs, annotated tags peeled.
func (s *Source) lsRemote(ctx context.Context, r address.Remote, args ...string) (map[string]string, error) {
	run, err := s.newRunner(r.SSHKey, false)
	if err != nil {
		return nil, err
	}
	defer run.close()
	out, err := run.run(ctx, "", append([]string{"ls-remote"}, args...)...)
	if err != nil {
		if ce := (*CommandError)(nil); errors.As(err, &ce) && notFoundText(ce.Stderr) {
			return nil, fmt.Errorf("%w: %v", source.ErrNotFound, err)
		}
		return nil, err
	}
	return parseRefs(string(out))
}

// parseRefs parses ls-remote output: "<commit>\t<ref>" lines; "<ref>^{}"
// lines give the commit an annotated tag points to, and win.
func parseRefs(out string) (map[string]string, error) {
	refs := map[string]string{}
	peeled := map[string]string{}
	for line := range strings.Lines(out) {
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			continue
		}
		commit, name, ok := strings.Cut(line, "\t")
		if !ok || !isCommitID(commit) {
			return nil, fmt.Errorf("unexpected line in git ls-remote output: %q", line)
		}
		if base, ok := strings.CutSuffix(name, "^{}"); ok {
			peeled[base] = commit
			continue
		}
		refs[name] = commit
	}
	for name, commit := range peeled {
		refs[name] = commit
	}
	return refs, nil
}

// isCommitID reports whether s is a full object ID (SHA-1 or SHA-256).
func isCommitID(s string) bool { return gitcheckout.IsCommitID(s) }

// notFoundText recognises git's messages for a repository that does not
// exist.
func notFoundText(stderr string) bool {
	for _, s := range []string{"does not exist", "not found", "does not appear to be a git repository", "Not Found", "404"} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}

// TagVersion returns the version a tag names, as the source reads tags:
// a strict semantic version with or without a "v" prefix ("v1.2.0",
// "1.2.0"); false for any other tag.
//
// Deprecated: use [versions.ParseTag] with [versions.GitTag], the one
// rule the git and OCI sources share.
func TagVersion(tag string) (versions.Version, bool) { return tagVersion(tag) }
