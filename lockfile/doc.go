// Package lockfile is the typed model of the dependency lock file,
// .terraform.lock.hcl, for providers and modules: a strict parser with HCL
// diagnostics, a canonical writer byte-identical to OpenTofu's, a
// preserving editor, change reports, and atomic saving.
//
// # The format
//
// A lock file is HCL native syntax. Its grammar, after comments:
//
//	file     = { provider | module | rfcmodule } .
//	provider = "provider" ADDRESS "{" version [ constraints ] [ hashes ] "}" .
//	module   = "module" CALLPATH "{" [ version ] source [ ref | tag ]
//	           [ constraints ] [ commit ] [ digest ] [ hashes ] "}" .
//	version     = "version" "=" STRING .   // canonical semver: "1.2.3", "1.0.0-beta.1"
//	constraints = "constraints" "=" STRING .
//	source      = "source" "=" STRING .
//	ref         = "ref" "=" STRING .       // git "ref" argument as written: "v1.2.0", "main"
//	tag         = "tag" "=" STRING .       // OCI "tag" argument as written: "1.2.0", "stable"
//	commit      = "commit" "=" STRING .    // 40 lower-case hex digits
//	digest      = "digest" "=" STRING .    // "sha256:" and 64 lower-case hex digits (or sha512)
//	hashes      = "hashes" "=" "[" STRING { "," STRING } [ "," ] "]" .
//	rfcmodule   = see "The module lock forms of OpenTofu's module-locking RFCs" .
//
// Arguments may appear in any order; the order shown is the canonical one.
// ADDRESS is a fully-qualified provider address, hostname/namespace/type,
// in lower case exactly as [tfaddr.Provider.String] writes it; legacy
// ("-" namespace) and built-in (terraform.io/builtin/..., opentofu.org/builtin/...) providers cannot
// be locked. CALLPATH is the module call path: call names from the root
// module joined with dots ("vpc", "vpc.nested"); call names cannot contain
// dots. A module source is its canonical package address (registry host
// spelled out; git URL without ref; OCI repository without tag or digest;
// "//subdir" kept); local paths are never locked. Every value is a quoted
// string literal.
//
// # What a module lock records of its call
//
// A module source can pin its package itself: a git source by its "ref"
// argument (a tag, a branch or a commit), an OCI source by its "tag" or
// "digest" argument. The lock records that pin as the configuration
// writes it, so that an edited source is a changed requirement and never
// matches the old lock:
//
//   - "ref" is the git source's "ref" argument, character for character;
//     absent when the source has none (the repository's default branch).
//     It must be a name git accepts for a branch or tag (the rules of "git
//     check-ref-format"), or a commit id.
//   - "tag" is the OCI source's "tag" argument; absent when the source
//     has none (a digest, a version constraint, or the implied "latest").
//     It follows the OCI tag grammar.
//   - an OCI source's "digest" argument is not repeated: the lock's
//     "digest" must equal it.
//
// A lock with "ref" or "tag" has no "version" or "constraints" (a pinned
// call has no version constraint); "ref" goes with a git source only and
// "tag" with an OCI source (oci://...) only. "commit" (git) and "digest"
// (OCI) record what the pin resolved to when the lock was made. A call
// whose ref, tag or digest differs from its lock's is resolved again, or
// refused in read-only mode; a branch, the default branch or the implied
// "latest" installs the recorded commit or digest until an upgrade moves
// it.
//
// Provider constraints use OpenTofu's provider dialect and module
// constraints its module dialect ([versions.ParseConstraints],
// [versions.ParseModuleConstraints]); either must be written in normalized
// form, the form [versions.Constraints.String] returns. A hash is
// "scheme:value" ([hash.ParseHash]): "h1:" values must be base64 of 32
// bytes and "zh:" values 64 lower-case hex digits; other schemes are kept
// as they are for forward compatibility. Which hashes a provider's entry
// gets (OpenTofu's rule: every hash its default registry reports, the
// signed ones elsewhere; from a mirror, every platform's on init) is
// decided where the lock is made: see package resolve/install.
//
// # The module lock forms of OpenTofu's module-locking RFCs
//
// Two draft RFC pull requests to OpenTofu propose module blocks of their
// own; a module block in either form is read into the same model, and the
// writer writes tflock's form. A block's form is told by its label and
// arguments: a label with a "/" is a source address (PR #3540); a call path
// label with a "package" or "floating" argument is PR #4071's form;
// anything else is tflock's. Each block read in an RFC form gives the
// warning "Module lock in RFC form".
//
// PR #4071 ("Installation and Caching of Remote Dependencies") keys a
// block by call path, as tflock does:
//
//	RFC #4071                               tflock
//	module "a.b" (call path)                Path "a.b"
//	source (as the call writes it)          Source: the lock source (host
//	                                        spelled out, no ref, tag, digest,
//	                                        depth, sshkey or credentials),
//	                                        and Ref (git "ref"), Tag (OCI
//	                                        "tag" if written) or Digest (OCI
//	                                        "digest") from the address
//	constraints                             Constraints
//	package "registry::H/N/M/S@V"           Version V (H/N/M/S must be the
//	                                        source's registry address)
//	package "git::URL?ref=COMMIT"           Commit (URL must be the source's
//	                                        repository; a full commit id)
//	package "oci://REPO?digest=D"           Digest (REPO must be the source's)
//	package = the source's own package      nothing more (an http, s3 or gcs
//	                                        source made immutable by its
//	                                        checksum, version or generation)
//	hashes                                  Hashes
//	floating = true                         a lock with Source (and Ref, Tag
//	                                        or Digest) only: no selection, pin
//	                                        or hashes; the next lock records
//	                                        what is installed
//
// What the model cannot hold: a registry source whose package is another
// address (the registry delegated; the form does not record the version
// selected, which tflock's lock of a registry module needs), and a
// Mercurial package (tflock installs no Mercurial modules). Such a
// block gives "Unsupported module lock": an error, or with
// [ParseOptions.Lenient] a warning, the whole block being kept as an
// [Unknown] top-level block (and so written back, and ignored by
// installers). A block mixing the forms (tflock's "version", "ref",
// "tag", "commit" or "digest" beside "package" or "floating") is an error
// ("Mixed module lock forms"), and so are a package that is not the
// source's, a git package not pinned by a full commit id, a floating
// block with a package or hashes, and a block with neither.
//
// PR #3540 ("Draft version of locking modules") keys a registry module's
// block by its fully-qualified, normalized registry address, with
// "version" (required), "constraints" and "hashes"; calls with the same
// source that select the same version share it. Its open question on one
// source at two versions is read both ways: two blocks with the same label,
// or the version in the label ("HOST/NS/NAME/SYSTEM:1.2.3"). Such a block
// names no call, so it is read into a [ModuleLock] without Path, kept
// apart ([File.SourceModules]); [File.BindModules] gives it to the
// configuration's calls with that source whose constraints allow its
// version, as call locks. Until then the writer writes it back in PR
// #3540's form, after tflock's module blocks, sorted by source and
// version, the version as an argument. Its other arguments are unknown
// ("Unsupported argument").
//
// [Patch] keeps an RFC-form block byte for byte while the file's lock for
// it is unchanged, replaces it whole by the canonical block in tflock's
// form when the lock changed (the forms never mix in one block), removes
// it when the lock is gone (for a PR #3540 block: when no lock keyed by
// its source and version is left, as after [File.BindModules], which
// turns it into call blocks that Patch adds), and keeps a block it cannot
// map as it is.
//
// # Strict parsing
//
// [Parse] agrees with OpenTofu 1.12 on what is valid and uses its
// diagnostic summaries ("Invalid provider source address", "Non-normalized
// provider source address", "Duplicate provider lock", "Invalid provider
// version number", "Invalid provider version constraints", "Invalid
// provider hash set", "Invalid provider hash string", "Unsupported block
// type", "Missing required argument", ...), suggesting the canonical form
// where it can. It differs from OpenTofu in these ways:
//
//   - module blocks are decoded and validated (OpenTofu only warns about
//     them), with the summaries "Invalid module call path", "Duplicate
//     module lock", "Invalid module version number", "Invalid module
//     version constraints", "Invalid module source address", "Invalid
//     module ref", "Invalid module tag", "Invalid module commit", "Invalid
//     module digest", "Invalid module hash set" and "Invalid module hash
//     string";
//   - malformed "h1:" and "zh:" values are rejected (OpenTofu accepts any
//     "scheme:value");
//   - one fault gives one diagnostic (OpenTofu reports a bad version twice),
//     and the subject of a hash diagnostic is the bad element, not the list;
//   - version-control conflict markers give "Unresolved merge conflict" on
//     each marker line instead of syntax errors;
//   - a file nested deeply enough to overflow the HCL parser's stack (a
//     fatal crash in OpenTofu: tens of thousands of nested brackets, or
//     hundreds of thousands of operators in a row) gives "Nesting too
//     deep" at the line where a limit far above any real file is crossed;
//     [Patch] refuses it the same way.
//
// Hashes are sorted (by byte value) and de-duplicated on parse. CRLF line
// endings and comments anywhere (such as a licence before the header) are
// accepted.
//
// # Forward compatibility
//
// This package never silently drops what it does not understand. A strict
// parse rejects unknown blocks and arguments. With [ParseOptions.Lenient]
// they are kept (as [Unknown] values, reported as warnings) and the
// canonical writer writes them back: unknown arguments after the known ones
// of their block, unknown top-level items after the module blocks. A
// lenient parse also keeps malformed "h1:"/"zh:" values, as OpenTofu does.
// [Patch] keeps everything it does not change, byte for byte.
//
// # Canonical form
//
// [File.Bytes] writes:
//
//  1. the two header lines of the file's [Header] flavour (a parsed file
//     keeps Terraform's flavour if it had Terraform's header; otherwise, and
//     for new files, OpenTofu's); other leading comments are not kept;
//  2. for each provider, sorted by hostname, namespace and type: a blank
//     line, then the block with version, constraints (if any) and hashes (if
//     any), in that order, "=" aligned across consecutive single-line
//     arguments, the hash list one hash per line with a trailing comma;
//  3. for each module, sorted by call path: a blank line, then the block
//     with version (if any), source, ref (if any), tag (if any),
//     constraints (if any), commit (if any), digest (if any), hashes (if
//     any), laid out as for providers;
//  4. module locks still keyed by source address, in PR #3540's form (see
//     above);
//  5. kept unknown items, blocks preceded by a blank line;
//
// with LF line endings and a final newline. For a file holding providers
// only this is byte for byte what OpenTofu 1.12 writes.
//
// # Editing
//
// [File] has get, set and remove methods for provider and module locks,
// hash additions with set semantics, and iteration in the writer's order.
// [Changes] lists what differs between two files and [Summary] words it for
// people; [Equal] and [EqualIgnoringHashes] compare locks. [Merge]
// restores the module locks a module-unaware tool (such as OpenTofu 1.12)
// dropped when it rewrote the file. [ParseFile] reads a missing file as an
// empty lock file, and [WriteFile] replaces a file atomically.
package lockfile
