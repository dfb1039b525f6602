package address

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"strings"

	"github.com/tflock/tflock/internal/lazyre"
)

// forcedGetterPattern matches go-getter's "getter::rest" prefix.
var forcedGetterPattern = lazyre.New(`^([A-Za-z0-9]+)::(.+)$`)

// splitForcedGetter splits "git::https://x" into "git" and "https://x".
// Without a prefix it returns "" and s.
func splitForcedGetter(s string) (getter, rest string) {
	if m := forcedGetterPattern().FindStringSubmatch(s); m != nil {
		return m[1], m[2]
	}
	return "", s
}

// splitSubdir separates go-getter's "//subdir" from a source string, keeping
// any query string on the package part, as go-getter's SourceDirSubdir does:
// the "//" after a scheme's "://" does not count, and neither does one in
// the query string.
func splitSubdir(src string) (pkg, subdir string) {
	stop := len(src)
	if i := strings.IndexByte(src, '?'); i >= 0 {
		stop = i
	}
	offset := 0
	if i := strings.Index(src[:stop], "://"); i >= 0 {
		offset = i + 3
	}
	i := strings.Index(src[offset:stop], "//")
	if i < 0 {
		return src, ""
	}
	i += offset
	pkg, subdir = src[:i], src[i+2:]
	if q := strings.IndexByte(subdir, '?'); q >= 0 {
		pkg += subdir[q:]
		subdir = subdir[:q]
	}
	return pkg, subdir
}

// cleanSubdir normalises a subdirectory as OpenTofu does (path.Clean, so
// "///sub" stays "/sub" and "//." stays ".") and rejects one that leads out
// of the module package. OpenTofu checks only for a "../" prefix and lets a
// bare ".." through to fail when it installs; this package refuses it now.
func cleanSubdir(subdir string) (string, error) {
	if subdir == "" {
		return "", nil
	}
	subdir = path.Clean(subdir)
	if subdir == ".." || strings.HasPrefix(subdir, "../") {
		return "", fmt.Errorf("subdirectory path %q leads outside of the module package", subdir)
	}
	return subdir, nil
}

// isDrivePath reports whether src is a Windows absolute path with a drive
// letter ("C:\modules\vpc", "C:/modules/vpc"). OpenTofu keeps such an
// address verbatim as its module package on every platform (go-getter
// reads the drive letter as a URL scheme, or on Windows as a file path).
func isDrivePath(src string) bool {
	return len(src) >= 3 && (src[0]|0x20 >= 'a' && src[0]|0x20 <= 'z') && src[1] == ':' && (src[2] == '\\' || src[2] == '/')
}

// sshPattern pulls the user, host and path out of an scp-like address
// ("git@example.com:org/repo.git"), as go-getter's detectSSH does.
var sshPattern = lazyre.New(`^(?:([^@]+)@)?([^:]+):/?(.+)$`)

// detect applies, to a source string that has no forced getter, no
// subdirectory and no URL scheme, the go-getter detectors OpenTofu
// configures, in its order: GitHub (with the query string set aside, as
// OpenTofu wraps it), Git over SSH, BitBucket, GCS, S3, and absolute file
// paths. It returns the detected address (possibly with a forced getter)
// and the subdirectory a detector split off, as go-getter's Detect returns
// them (the subdirectory still to be cleaned).
func detect(src string) (result, subdir string, err error) {
	var out string
	switch {
	case strings.HasPrefix(src, "github.com/"):
		base, query, _ := strings.Cut(src, "?")
		if out, err = detectGitHub(base); err == nil && query != "" {
			out += "?" + query
		}
	case sshPattern().MatchString(src) && sshPattern().FindStringSubmatch(src)[1] == "git":
		out, err = detectSCP(src)
	case strings.HasPrefix(src, "bitbucket.org/"):
		out, err = detectBitBucket(src)
	case strings.Contains(src, ".googleapis.com/"):
		out, err = detectGCS(src)
	case strings.Contains(src, ".amazonaws.com/"):
		out, err = detectS3(src)
	case strings.HasPrefix(src, "/"):
		// OpenTofu's file detector: the path as written, not cleaned.
		out = "file:///" + src[1:]
	default:
		return "", "", fmt.Errorf("%w for %s", ErrUnknownSourceType, src)
	}
	if err != nil {
		return "", "", err
	}
	// go-getter's Detect moves a detector's "//SUBDIR" into the URL path
	// and re-encodes the URL; the caller then splits it off again.
	forced, rest := splitForcedGetter(out)
	rest, sub := splitSubdir(rest)
	if sub != "" {
		u, err := url.Parse(rest)
		if err != nil {
			return "", "", fmt.Errorf("error parsing URL: %v", err)
		}
		u.Path += "//" + sub
		u.RawPath = u.Path
		rest = u.String()
	}
	if forced != "" {
		rest = forced + "::" + rest
	}
	pkg, subdir := splitSubdir(rest)
	return pkg, subdir, nil
}

// detectGitHub handles "github.com/ORG/REPO[/SUBDIR]": a git repository
// over HTTPS, ".git" added, any further path a subdirectory.
func detectGitHub(src string) (string, error) {
	parts := strings.Split(src, "/")
	if len(parts) < 3 {
		return "", errors.New("GitHub URLs should be github.com/username/repo")
	}
	u, err := url.Parse("https://" + strings.Join(parts[:3], "/"))
	if err != nil {
		return "", fmt.Errorf("error parsing GitHub URL: %v", err)
	}
	if strings.HasSuffix(u.Path, "/") {
		// "github.com/org/" would name a repository ".git".
		return "", errors.New("GitHub URLs should be github.com/username/repo")
	}
	if !strings.HasSuffix(u.Path, ".git") {
		u.Path += ".git"
	}
	if len(parts) > 3 {
		u.Path += "//" + strings.Join(parts[3:], "/")
	}
	return "git::" + u.String(), nil
}

// detectBitBucket handles "bitbucket.org/PATH[?QUERY]": the whole path is
// the repository (go-getter splits no subdirectory off it). go-getter asks
// Bitbucket's API whether a repository is git or Mercurial; Bitbucket hosts
// only git repositories since 2020, so this assumes git and makes no
// request.
func detectBitBucket(src string) (string, error) {
	u, err := url.Parse("https://" + src)
	if err != nil {
		return "", fmt.Errorf("error parsing BitBucket URL: %v", err)
	}
	if !strings.HasSuffix(u.Path, ".git") {
		u.Path += ".git"
	}
	return "git::" + u.String(), nil
}

// detectSCP turns "git@host:path[?query]" into "git::ssh://git@host/path",
// with the query string re-encoded (sorted) as go-getter does.
func detectSCP(src string) (string, error) {
	m := sshPattern().FindStringSubmatch(src)
	u := url.URL{Scheme: "ssh", User: url.User(m[1]), Host: m[2], Path: m[3]}
	if p, q, ok := strings.Cut(m[3], "?"); ok {
		vals, err := url.ParseQuery(q)
		if err != nil {
			return "", fmt.Errorf("error parsing SSH URL query: %v", err)
		}
		u.Path, u.RawQuery = p, vals.Encode()
	}
	return "git::" + u.String(), nil
}

// detectGCS handles "HOST.googleapis.com/storage/VERSION/BUCKET/OBJECT" as
// go-getter does: the host becomes www.googleapis.com.
func detectGCS(src string) (string, error) {
	parts := strings.Split(src, "/")
	if len(parts) < 5 {
		return "", errors.New("URL is not a valid GCS URL")
	}
	u, err := url.Parse("https://www.googleapis.com/storage/" + parts[2] + "/" + parts[3] + "/" + strings.Join(parts[4:], "/"))
	if err != nil {
		return "", fmt.Errorf("error parsing GCS URL: %v", err)
	}
	return "gcs::" + u.String(), nil
}

// detectS3 handles the S3 host styles go-getter knows: "REGION.amazonaws.com/
// BUCKET/KEY" (path style), "BUCKET.REGION.amazonaws.com/KEY" and
// "BUCKET.s3.REGION.amazonaws.com/KEY" (virtual hosts, rewritten to path
// style as go-getter does).
func detectS3(src string) (string, error) {
	parts := strings.Split(src, "/")
	invalid := errors.New("URL is not a valid S3 URL")
	if len(parts) < 2 {
		return "", invalid
	}
	host := strings.Split(parts[0], ".")
	rest := strings.Join(parts[1:], "/")
	var raw string
	switch {
	case len(host) == 3:
		raw = "https://" + host[0] + ".amazonaws.com/" + rest
	case len(host) == 4:
		raw = "https://" + host[1] + ".amazonaws.com/" + host[0] + "/" + rest
	case len(host) == 5 && host[1] == "s3":
		raw = "https://s3." + host[2] + ".amazonaws.com/" + host[0] + "/" + rest
	default:
		return "", invalid
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("error parsing S3 URL: %v", err)
	}
	return "s3::" + u.String(), nil
}

// PackageSubdir returns the canonical form of a subdirectory inside a
// module package, the form a lock file records and a cache compares: a
// slash-separated relative path, cleaned (path.Clean), without a leading
// "/" (OpenTofu's "///sub" installs "sub"), and "" for the package root.
// It rejects a subdirectory that leads out of the package (".." as a
// leading element), one with a backslash or a NUL byte (another separator
// on Windows, or no file name at all), and one that is not a local file
// name on this system (filepath.IsLocal).
func PackageSubdir(subdir string) (string, error) {
	if strings.ContainsAny(subdir, "\\\x00") {
		return "", fmt.Errorf("subdirectory path %q holds a backslash or a NUL byte", subdir)
	}
	c, err := cleanSubdir(subdir)
	if err != nil {
		return "", err
	}
	c = strings.TrimLeft(c, "/")
	if c == "" || c == "." {
		return "", nil
	}
	if c == ".." || strings.HasPrefix(c, "../") || !filepath.IsLocal(filepath.FromSlash(c)) {
		return "", fmt.Errorf("subdirectory path %q leads outside of the module package", subdir)
	}
	return c, nil
}

// CheckPackageSubdir reports whether subdir, read from stored metadata (a
// lock file, a cache record, a remote tier's annotation), is already in
// the canonical form [PackageSubdir] gives: relative, clean, with no ".."
// element. Anything else is refused rather than cleaned, so that stored
// metadata never names a directory other than the one it spells.
func CheckPackageSubdir(subdir string) error {
	c, err := PackageSubdir(subdir)
	if err != nil {
		return err
	}
	if c != subdir {
		return fmt.Errorf("subdirectory path %q is not a clean relative path inside the package", subdir)
	}
	return nil
}
