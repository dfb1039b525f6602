// Package cache is a content-addressed on-disk cache of packages, shared by
// many configurations and by many processes at once.
//
// # Layout
//
// A cache is a directory:
//
//	objects/<h1 digest, base64url>/   the package contents, never modified once published
//	index/<sha256 of identity>.json   package identity (no credentials) → h1 and the other hashes seen
//	locks/<sha256 of identity>.lock   advisory lock files (never removed)
//	stat/<entry name>.json            the entry's files as last verified (device, inode, size, mtime, mode)
//	tmp/                              work in progress
//
// [Open] creates only the directory itself; the subdirectories are made by
// the first fill, so that a run that stores nothing changes nothing on disk.
//
// An entry is addressed by its h1: hash (golang.org/x/mod dirhash Hash1 of
// its files; for modules, without VCS metadata). A package whose lock file
// entry records an h1: is therefore found without knowing where it came from,
// and a warm cache means no download at all. The index maps a package
// identity (provider address, version and platform; module source, version,
// ref and the commit or digest it is pinned to) to the h1: of the entry
// fetched for it. A provider's lock entry lists the hashes of every
// platform, so a provider entry is served only when its identity's record
// names an h1: of the lock entry: the record picks this platform's among
// them. The index is never an authority (see the threat model below): a
// package whose lock entry has no h1: (only zh: hashes, or no entry yet)
// is fetched and verified, as OpenTofu does not take an unpacked cached
// package its lock file cannot verify; within one process, what a Cache
// has fetched and verified itself is remembered, so that concurrent fills
// of a package fetch it once; a module so remembered is served only to
// views of the same source ([Cache.ForSource]), as two sources may answer
// one module address from two origins and a module has no origin
// checksums to tell them apart. A module named only by a ref, or by nothing
// (a branch, the default branch, an OCI tag), has no index record.
//
// # One read per package
//
// A fill's fetch function may hand the package over as its archive: it
// is usually [source.FetchArchive] of a source, and a source that
// downloads an archive (the provider registry protocol) is a
// source.ArchiveFetcher, which hands it over unextracted (a small one in
// memory, source.Fetched.ArchiveData: the cache's fetch is given a
// context made with source.WithArchiveInMemory, and it releases the
// memory once done). The cache reads it once, digesting its bytes for zh:, inflating each entry once and
// digesting each file for h1: as it writes it (hash.Options.Install),
// within the source's limits. The tree stored is the tree hashed, and what the
// source stated about the archive (its zh:, an h1: its origin published) is
// checked against what the cache computed before anything is published. A
// source that extracts itself (git, a local directory) hands over files,
// which the cache hashes once.
//
// A source may hand the archive over while it is still downloading
// (source.PendingArchive: the registry does for a large provider once the
// signed checksums list it). The cache then reads it as its bytes arrive,
// into the fill's own work directory, and waits for the download's end
// before it publishes anything: what it read is checked against the zh:
// the source stated, and the download against the bytes read. If the read
// fails, the complete archive is checked against the stated zh: first, so
// that bytes that are not the package's are reported as a checksum
// mismatch, not as a malformed archive; a download that restarted is read
// again, whole.
//
// # Credentials
//
// A module address may carry credentials (the user information of a URL,
// a git "sshkey" argument). The cache is shared by every configuration and
// user of the machine, so none is ever written to it: the identity that
// keys the index and the lock files is the package's canonical string
// without credentials (address.StripCredentials: an ssh user name stays,
// everything else of the user information and the "sshkey" argument go),
// and is stored only as the SHA-256 of that form in file names and as
// that form in the index record; the record's location is stripped the
// same way. Two addresses that differ only by their credentials are
// therefore one package and share one entry. Events and errors about a
// package show its credentials as "REDACTED" (see source.Emit and
// source.Error).
//
// # Concurrency
//
// Fills of one package are serialised by an in-process keyed mutex and, across
// processes, by an advisory lock (flock) on a per-package lock file. Lock
// files are never unlinked: unlinking a lock file after unlocking it races
// with another process that opened it just before. A fill downloads into a
// fresh directory under tmp/ and publishes it with one rename, so readers
// never see a partial entry. Waiting for another holder is reported as a
// [source.EventCacheWait] event. [Cache.Hash], which stores no entry,
// takes the in-process mutex only (no lock file) and writes no record:
// two processes may hash one package at once, each on its own; what it
// leaves in tmp/ ("hash-...", a large archive downloaded as a file) is
// swept once unchanged for an hour.
//
// # Damage
//
// An entry is checked against its name when it is used (unless
// [Options.TrustEntries] is set): an entry whose contents no longer hash to
// its name is moved out of the way and fetched again. An index record that
// points at a missing or damaged entry is ignored.
//
// The check reads the entry only when its metadata says it may have
// changed. When an entry is published, its files have just been hashed as
// they were written, in a directory of the fill's own; the cache records
// each file's device and inode numbers, size, modification time (to the
// nanosecond) and mode in stat/. An entry used later whose files all
// match that record, and that has no file more or less, is the tree that
// was verified, and is used without being read; any difference makes the
// cache hash it again (and record it again when it still matches its
// name). [Cache.Installed] applies the same rule to a package installed
// from the cache by hard links: the same inodes, unchanged, are the entry's
// files, so a warm run reads no package at all.
//
// Threat model. This check catches what happens to a cache by accident or
// by a program that is not trying to hide: an installed file edited in
// place through its hard link (its size or time changes), a file replaced
// (a new inode), added or removed, a truncated copy, a changed mode. It does
// not catch a change made on purpose by someone who can write to the cache
// and then puts the file's size and modification time back: such a writer
// could also rewrite stat/. Against that, open the cache with
// [Options.Reverify], or give one call a context from [Reverify]
// (resolve/install's Options.Reverify): every entry and every installed
// package used is then hashed again. Go's module cache and OpenTofu's
// plugin cache make the same assumption without offering that mode; a
// platform whose file information has no inode numbers hashes every time.
//
// What a writer of the cache directory can and cannot do. A cache is
// shared, or restored from a CI cache another job produced, so whoever can
// write it is not trusted with what a lock file names:
//
//   - The lock file is the only authority on what a package is. Nothing
//     the cache records about itself (index/, stat/, a tier's annotation)
//     makes a package be installed under an identity the lock names
//     otherwise: an entry is served only under an h1: the caller's hashes
//     name, and the hashes a caller gets for an entry are its h1:, which
//     the entry's files hash to (with Reverify, hashed on every use), never
//     the hashes an index record lists. An index record that names another
//     package's entry, or lists hashes its entry does not have, is a miss:
//     the package is fetched from its origin and verified there. A run
//     without a lock file entry (trust on first use) trusts the origin, not
//     the cache. One thing the lock file cannot tell, the cache cannot
//     either: a provider's lock entry lists the h1: of each platform
//     without saying which is which, so a writer who also stores another
//     platform's package of that version can have it served for this
//     platform (it is a package the lock names; tofu's plugin cache takes
//     it too).
//   - Such a writer can make a run slower (a miss, a download, an entry
//     found damaged and replaced) or fail it (a directory it cannot write),
//     and, without Reverify, make an entry whose files it changed while
//     restoring their metadata be used unread, as described above: the
//     content of a package the lock names by h1: only through stat/.
//   - It cannot reach outside the cache. The cache's own directories
//     (objects, index, locks, stat, tmp), its lock files and records are
//     checked without following links before use: a symbolic link or
//     another kind of file there is an *UnsafePathError naming it, from
//     [Open] or from the first fill, and an entry in objects/ that is a
//     link is discarded (the link, not what it points to). [Open]'s sweep
//     of tmp/ removes only names the cache makes (a killed fill's work, a
//     damaged entry, a killed writer's tmp/stat-* record), removes a link
//     rather than its target, and changes no mode outside tmp/. A link
//     swapped in between that check and a use is not caught (the cache
//     does not open its paths relative to a directory handle).
//
// # Remote tier
//
// [Options.Remote] puts a tier shared by many machines (package ocitier:
// an OCI registry) behind the local cache. On a local miss ([Cache.Fill],
// and [Cache.Lookup], so that a run with a lock file and an empty local
// cache lists nothing) it is asked for the package before the origin, but
// only when the hashes wanted can verify what it returns: a module's h1:
// (by which the tier also finds it), a provider's h1: or zh:. What it
// returns is an archive that goes through exactly the path and checks of
// an archive from an origin; one that does not match is a warning, and
// the origin is asked. After an origin fetch is verified it is written
// through: a provider's zip as the origin delivered it, a module as a
// deterministic zip of its entry (see WriteZip in source/internal/archive).
// A tier failure (down, slow, full, refusing) is reported once per Cache
// as a warning; a run never fails for it.
//
// # Module subdirectories
//
// A module's location may name a subdirectory of its package (a
// registry's "//SUBDIR"), and that directory is what is installed. The
// cache records the one the origin named (index record, tier annotation),
// but the caller's lock file decides: a module package whose
// [source.ModulePackage.Subdir] binds one is served only with it. A
// package's own index record naming another is a miss (the origin is
// asked again); an entry found by its h1: alone, filled under another
// identity (another module of the same package), gets the bound
// subdirectory, unless that is the root of a [source.ModulePackage.Located]
// package (a registry module, or an HTTP address that X-Terraform-Get may
// answer: the root is also what a lock written before subdirectories were
// recorded says, so only its own record or its origin may confirm it; such
// a package has a record even without a version); a tier entry naming another is a miss and a warning. A
// subdirectory read from a record or an annotation is used only in the
// canonical form of source/address.PackageSubdir (relative, clean, no
// ".."); a fetcher reporting one out of the package stores nothing. A
// writer of the cache directory can therefore not make a locked module be
// installed from another directory than its lock names.
package cache
