// Package lockfile is the typed model of the dependency lock file,
// .terraform.lock.hcl, for providers and modules: a strict parser with HCL
// diagnostics, a canonical writer byte-identical to OpenTofu's, a
// preserving editor, change reports, and atomic saving.
//
// # The format
//
// A lock file is HCL native syntax. Its grammar, after comments:
//
//	file     = { provider | module } .
//	provider = "provider" ADDRESS "{" version [ constraints ] [ hashes ] "}" .
//	module   = "module" CALLPATH "{" [ version ] source [ constraints ]
//	           [ commit ] [ digest ] [ hashes ] "}" .
//	version     = "version" "=" STRING .   // canonical semver: "1.2.3", "1.0.0-beta.1"
//	constraints = "constraints" "=" STRING .
//	source      = "source" "=" STRING .
//	commit      = "commit" "=" STRING .    // 40 lower-case hex digits
//	digest      = "digest" "=" STRING .    // "sha256:" and 64 lower-case hex digits (or sha512)
//	hashes      = "hashes" "=" "[" STRING { "," STRING } [ "," ] "]" .
//
// Arguments may appear in any order; the order shown is the canonical one.
// ADDRESS is a fully-qualified provider address, hostname/namespace/type,
// in lower case exactly as [tfaddr.Provider.String] writes it; legacy
// ("-" namespace) and built-in (terraform.io/builtin/...) providers cannot
// be locked. CALLPATH is the module call path: call names from the root
// module joined with dots ("vpc", "vpc.nested"); call names cannot contain
// dots. A module source is its canonical package address (registry host
// spelled out; git URL without ref; OCI repository without tag or digest;
// "//subdir" kept); local paths are never locked. Every value is a quoted
// string literal.
//
// Provider constraints use OpenTofu's provider dialect and module
// constraints its module dialect ([versions.ParseConstraints],
// [versions.ParseModuleConstraints]); either must be written in normalized
// form, the form [versions.Constraints.String] returns. A hash is
// "scheme:value" ([hash.ParseHash]): "h1:" values must be base64 of 32
// bytes and "zh:" values 64 lower-case hex digits; other schemes are kept
// as they are for forward compatibility.
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
//     module commit", "Invalid module digest", "Invalid module hash set"
//     and "Invalid module hash string";
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
//     with version (if any), source, constraints (if any), commit (if any),
//     digest (if any), hashes (if any), laid out as for providers;
//  4. kept unknown items, blocks preceded by a blank line;
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
