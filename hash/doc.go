// Package hash computes and verifies the package checksums recorded in
// dependency lock files: "h1:" and "zh:" hashes.
//
// # Schemes
//
// An "h1:" hash is golang.org/x/mod/sumdb/dirhash Hash1 of a package's files:
// the SHA-256 of a summary with one line per regular file,
//
//	<lower-case hex SHA-256 of the file's contents>  <slash-separated name>\n
//
// sorted by name (byte order), written as "h1:" and the standard base64 of
// that digest. The same package gives the same h1 whether it is a directory
// ([H1Dir]), an [io/fs.FS] ([H1FS]) or a zip archive ([H1Zip]): only files
// count. A zip's directory entries (names ending in "/") are ignored, unlike
// dirhash.HashZip, which hashes them as empty files (golang/go#53448); on a zip
// without directory entries the two agree. A zip's files are named as
// [CleanName] cleans their entry names, and its directories are the
// entries archive/zip's FileHeader.Mode says are directories: the h1 of a
// zip is that of the tree extracting it installs.
//
// A "zh:" hash is the lower-case hex SHA-256 of a zip archive's bytes
// ([ZH]), as OpenTofu records for the distribution zips listed in a signed
// SHA256SUMS document.
//
// # Speed
//
// [Options.HashZip] computes h1 and zh in one sequential read of the archive:
// the bytes feed the zh digest as they pass, and each entry's compressed data
// is inflated and hashed on other goroutines, so that both cores work and
// nothing is read or inflated twice. Memory use does not grow with the size of
// the archive. [Options.Install] does the same while extracting the archive
// into a directory. [VerifyZip] checks a recorded "zh:" without inflating
// anything.
//
// # Safety
//
// Archives are untrusted input. Entry names that [CleanName] refuses
// (absolute, "..", backslashes, control characters), duplicate names once
// cleaned, truncated archives, entries whose declared size or CRC-32 does
// not match their contents, encrypted entries, devices, pipes and sockets,
// and archives beyond the limits in [Options] (total size, compression
// ratio, number of files) are errors. A symbolic-link entry in a zip is a
// regular file holding the link's target, as OpenTofu extracts it: no link
// is ever created from an archive. In directories, symbolic links that
// leave the directory, links to directories, and files that are not
// regular are errors.
//
// # Verification
//
// [Verify] applies OpenTofu's rule: a package is accepted if one of the hashes
// computed from it equals one of the recorded hashes of a scheme this package
// can compute; it then returns the package's other hashes, which the caller
// may add to the lock file (trust on first use). A failure is a
// [*MismatchError] naming the package, the expected and the computed hashes.
package hash
