// Package git is a module source for git repositories: versions are the
// repository's semver tags, and a package is the tree of one commit.
//
// It runs the git binary, as cmd/go does, with GIT_TERMINAL_PROMPT=0 and,
// by default, without the user's or the system's git configuration (see
// [Options.UserConfig]), so that results do not depend on the machine.
//
// # Versions
//
// [Source.Versions] runs "git ls-remote --heads --tags" (nothing is
// cloned; the same listing answers refs and fetches, see [source.WithRun]). Tags
// that are strict semantic versions, with or without a "v" prefix, are
// versions ("v1.2.0" and "1.2.0"; not "1.2" or "release-1"); annotated tags
// are peeled to their commit. Each [source.Available] has Ref set to the tag
// name and Pin to the commit. When both "v1.2.0" and "1.2.0" exist, "v1.2.0"
// is used.
//
// # Fetching
//
// [Source.Fetch] takes a [source.ModulePackage] whose Source is a git
// address (see package address) and:
//   - with Version set, fetches the tag of that version;
//   - with Ref set (a branch, tag or commit; no Version), resolves it to a
//     commit and fetches that;
//   - with neither, fetches the remote's default branch (HEAD).
//
// Only what is needed is asked of the remote: a version, and a ref that
// names a branch or tag, are resolved with the repository's branches and
// tags, "git ls-remote --heads --tags -- URL" (a protocol v2 server then
// sends branches and tags only, never a repository's thousands of
// refs/pull/*; patterns after the URL would not reduce what it sends),
// once per repository and run ([source.WithRun]; [Source.Prepare]
// makes it ahead of the fetch); a full commit id (40
// or 64 hexadecimal digits) is fetched without any ls-remote, so a branch
// or tag whose name is a full commit id is not looked up; the default
// branch asks for "HEAD" only, and another full ref name for itself.
//
// A ref that names both a tag and a branch (refs/tags/REF and
// refs/heads/REF) at different commits is refused with an
// [*AmbiguousRefError] naming both: OpenTofu installs the tag, or the
// branch when the source has a "depth" argument ("git clone --depth N
// --branch REF" prefers the branch), and a server can add such a branch
// at any time, so tflock locks neither. The listing of branches and tags
// reports both, at no cost. A version's tag (which a managed "ref"
// writes) is checked the same way when the source has a "depth"; without
// one, tofu installs the tag, as tflock does. A full ref name
// ("refs/tags/REF") is not ambiguous.
//
// When Pin is set (the commit the lock file recorded), a tag (a version's
// tag, or a ref that names a tag) must still point to it, else Fetch fails
// with a [*MovedTagError]. A branch, or the default branch, moves on by
// design: with Pin set, that commit is fetched wherever the branch points
// now (the lock is the point), and no "moved" error is raised; without
// Pin, its current head. A commit id ref that is not the pinned commit is
// an error wrapping source.ErrChecksumMismatch. Only the
// needed commit is fetched, by the commit ID the listing gave (which saves
// the server a second listing of its refs), shallowly ("--depth 1", or
// the address's "depth") where the server allows it, falling back to the
// ref by name and then to a full fetch. As in
// OpenTofu, a "depth" argument needs "ref" to name a branch or tag: with a
// commit ID, Fetch fails with [ErrDepthNeedsRef].
// Submodules are checked out recursively, as OpenTofu does. The result has
// no version-control metadata: no ".git", nor any ".hg", ".svn" or ".bzr"
// the repository tracks (the one rule for module packages,
// [github.com/tflock/tflock/hash.IsVCSMetadata]), so that it is exactly the
// tree its h1: covers; Fetched.Hashes holds that h1: and Fetched.Pin the
// commit.
//
// A version constraint together with a "ref" argument is a contradiction:
// [Validate] reports it. [Source.Select] picks the newest tag allowed by a
// constraint, and its [*NoMatchingTagError] lists the tags it saw.
//
// # Cache
//
// With [Options.CacheDir] set, clones are kept in bare repositories under
// that directory, each named by the SHA-256 of its URL without credentials,
// and tag lists are recorded beside them. A commit is fetched straight
// into the clone, and the package's tree is written from it by one "git
// read-tree" into the package directory, as a checkout writes it, without
// a checkout repository or a second fetch (a tree with submodules, which
// need a repository, is checked out from the clone). A locked version whose tag was
// deleted upstream then still installs from the cache, with a warning, when
// the commit recorded for the tag matches the lock's. The caller compares
// Fetched.Hashes with the lock as for any package. [Source.Versions] lists
// such versions too (tags in the cached tag list whose commit is in the
// cached clone), with a warning for each, so that a resolver keeping a
// locked version finds it; [Source.Select] considers upstream tags only.
//
// Several processes may share one CacheDir: each cache entry has lock files
// (never removed) taken with flock, or LockFileEx on Windows, around every
// use of its clone and its tag list; waiting honours the context and emits
// one source.EventCacheWait. The tag list is written to a temporary file
// and renamed into place, and a clone is created in a temporary directory
// renamed into place, so an interrupted process leaves nothing half made.
//
// # Credentials
//
// A module address may carry credentials: the user information of its URL
// ("https://user:token@host/...") and an "sshkey" argument (a base64
// private key, as go-getter takes it). They are given to git and kept
// nowhere else:
//
//   - Errors, events and warnings show them as "REDACTED"
//     (address.Redact): the package of an event or of a source.Error, the
//     arguments of a [CommandError], and git's own messages, which are
//     also scrubbed of the literal user name, password and key in case git
//     spells them otherwise.
//   - The cache is keyed by the SHA-256 of the repository URL without
//     credentials (address.StripCredentials; an ssh user name is part of
//     the address and stays): addresses that differ only by their
//     credentials share one cached clone, and neither the directory name
//     nor tags.json holds a credential. The bare clone is fetched into by
//     URL, with no remote configured, and git records the URLs of
//     FETCH_HEAD without their credentials.
//   - A checkout's remote "origin", which holds the URL as given, is
//     configured only when the package has submodules (their relative URLs
//     are resolved against it), in the temporary .git that is removed
//     before the package is published.
//   - The "sshkey" key is written to a mode-0600 temporary file for
//     GIT_SSH_COMMAND and removed when the command ends.
//
// The lock file records the address without credentials or "sshkey"
// (address.Remote.LockSource); modules.json records the source as the
// configuration writes it, credentials included, as OpenTofu does.
package git
