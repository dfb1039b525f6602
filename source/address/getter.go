package address

import (
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// forcedGetterPattern matches go-getter's "getter::rest" prefix.
var forcedGetterPattern = regexp.MustCompile(`^([A-Za-z0-9]+)::(.+)$`)

// splitForcedGetter splits "git::https://x" into "git" and "https://x".
// Without a prefix it returns "" and s.
func splitForcedGetter(s string) (getter, rest string) {
	if m := forcedGetterPattern.FindStringSubmatch(s); m != nil {
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

// cleanSubdir normalises a subdirectory as OpenTofu does (path.Clean) and
// rejects one that leads out of the package.
func cleanSubdir(subdir string) (string, error) {
	if subdir == "" {
		return "", nil
	}
	subdir = path.Clean(subdir)
	if subdir == ".." || strings.HasPrefix(subdir, "../") {
		return "", fmt.Errorf("subdirectory path %q leads outside of the module package", subdir)
	}
	// "//." and "///x" name the package root and "x": keep the canonical
	// form re-parseable.
	subdir = strings.TrimLeft(subdir, "/")
	if subdir == "." {
		subdir = ""
	}
	return subdir, nil
}

// sshPattern pulls the user and host out of an scp-like address
// ("git@example.com:org/repo.git"), as go-getter's detectSSH does.
var sshPattern = regexp.MustCompile(`^(?:([^@]+)@)?([^:]+):/?(.+)$`)

// detect applies the go-getter detectors OpenTofu configures, in OpenTofu's
// order (GitHub, Git, BitBucket, GCS, S3, file), to a source string that has
// no forced getter, no subdirectory and no URL scheme. It returns the
// detected address (possibly with a forced getter) and any subdirectory the
// detector split off.
func detect(src string) (result, subdir string, err error) {
	switch {
	case strings.HasPrefix(src, "github.com/"):
		return detectHosted(src, "GitHub")
	case sshPattern.MatchString(src):
		m := sshPattern.FindStringSubmatch(src)
		if m[1] == "git" {
			return detectSCP(m[1], m[2], m[3])
		}
	}
	switch {
	case strings.HasPrefix(src, "bitbucket.org/"):
		return detectHosted(src, "BitBucket")
	case strings.Contains(src, "googleapis.com/"):
		return "gcs::https://" + src, "", nil
	case strings.Contains(src, ".amazonaws.com/"):
		return "s3::https://" + src, "", nil
	case filepath.IsAbs(src) || strings.HasPrefix(src, "/"):
		return "file://" + path.Clean("/"+filepath.ToSlash(src)), "", nil
	}
	return "", "", fmt.Errorf("%w for %s", ErrUnknownSourceType, src)
}

// detectHosted handles "github.com/ORG/REPO[/SUBDIR][?QUERY]" (and the
// same for bitbucket.org): a git repository over HTTPS, ".git" added.
// go-getter asks Bitbucket's API whether a repository is git or Mercurial;
// Bitbucket hosts only git repositories since 2020, so this assumes git and
// makes no request.
func detectHosted(src, what string) (string, string, error) {
	parts := strings.Split(src, "/")
	if len(parts) < 3 {
		return "", "", fmt.Errorf("%s URLs should be %s/username/repo", what, parts[0])
	}
	u, err := url.Parse("https://" + strings.Join(parts[:3], "/"))
	if err != nil {
		return "", "", fmt.Errorf("error parsing %s URL: %v", what, err)
	}
	if u.Path == "" || strings.HasSuffix(u.Path, "/") {
		return "", "", fmt.Errorf("%s URLs should be %s/username/repo", what, parts[0])
	}
	if !strings.HasSuffix(u.Path, ".git") {
		u.Path += ".git"
	}
	subdir := ""
	if len(parts) > 3 {
		subdir = strings.Join(parts[3:], "/")
		// A query string after the subdirectory belongs to the URL.
		if q := strings.IndexByte(subdir, '?'); q >= 0 {
			if u.RawQuery == "" {
				u.RawQuery = subdir[q+1:]
			}
			subdir = subdir[:q]
		}
	}
	return "git::" + u.String(), subdir, nil
}

// detectSCP turns "git@host:path" into "git::ssh://git@host/path", with the
// query string re-encoded (sorted) as go-getter does.
func detectSCP(user, host, p string) (string, string, error) {
	u := url.URL{Scheme: "ssh", User: url.User(user), Host: host, Path: p}
	if q := strings.IndexByte(p, '?'); q >= 0 {
		vals, err := url.ParseQuery(p[q+1:])
		if err != nil {
			return "", "", fmt.Errorf("error parsing SSH URL query: %v", err)
		}
		u.RawQuery = vals.Encode()
		u.Path = p[:q]
	}
	if !strings.HasPrefix(u.Path, "/") {
		u.Path = "/" + u.Path
	}
	return "git::" + u.String(), "", nil
}
