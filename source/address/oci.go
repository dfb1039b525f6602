package address

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/tflock/tflock/internal/lazyre"
)

// OCI reference grammar, as in the OCI distribution specification (and
// oras-go's registry.Reference validation).
var (
	ociRepositoryPattern = lazyre.New(`^[a-z0-9]+(?:(?:[._]|__|[-]*)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|[-]*)[a-z0-9]+)*)*$`)
	ociTagPattern        = lazyre.New(`^[\w][\w.-]{0,127}$`)
	ociDigestPattern     = lazyre.New(`^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$`)
)

// errInvalidReference prefixes OCI reference errors, as oras-go's
// errdef.ErrInvalidReference does.
var errInvalidReference = errors.New("invalid reference")

// decodeOCI checks an "oci://HOST/REPO?tag=...|digest=..." URL with the
// rules and messages of OpenTofu's OCI module getter.
func (r *Remote) decodeOCI(u *url.URL) error {
	if !strings.EqualFold(u.Scheme, "oci") {
		return errors.New("oci source type only supports oci URL scheme")
	}
	if u.Opaque != "" || u.User != nil || u.Fragment != "" {
		return fmt.Errorf("%w: an OCI address must have the form oci://HOST/REPOSITORY", errInvalidReference)
	}
	check, err := url.Parse("dummy://" + u.Host)
	if u.Host == "" || err != nil || check.Host != u.Host || check.Path != "" {
		return fmt.Errorf("%w: invalid registry %q", errInvalidReference, u.Host)
	}
	repo := strings.TrimPrefix(u.Path, "/")
	if !ociRepositoryPattern().MatchString(repo) {
		return fmt.Errorf("%w: invalid repository %q", errInvalidReference, repo)
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return fmt.Errorf("invalid query string: %v", err)
	}
	if err := checkOCIArchive(q); err != nil {
		return err
	}
	names := make([]string, 0, len(q))
	for name := range q {
		names = append(names, name)
	}
	slices.Sort(names)
	var unsupported []string
	for _, name := range names {
		values := q[name]
		if len(values) > 1 {
			return fmt.Errorf("too many %q arguments", name)
		}
		value := values[0]
		switch name {
		case "tag":
			if value == "" {
				return errors.New("tag argument must not be empty")
			}
			if !ociTagPattern().MatchString(value) {
				return fmt.Errorf("%w: invalid tag %q", errInvalidReference, value)
			}
			r.Tag = value
		case "digest":
			if value == "" {
				return errors.New("digest argument must not be empty")
			}
			if err := checkDigest(value); err != nil {
				return fmt.Errorf("invalid digest: %v", err)
			}
			r.Digest = value
		default:
			unsupported = append(unsupported, name)
		}
	}
	switch len(unsupported) {
	case 0:
	case 1:
		return fmt.Errorf("unsupported argument %q", unsupported[0])
	default:
		return fmt.Errorf("unsupported arguments: %s", strings.Join(unsupported, ", "))
	}
	if r.Tag != "" && r.Digest != "" {
		return errors.New(`cannot set both "tag" and "digest" arguments`)
	}
	if r.Tag == "" && r.Digest == "" {
		r.Tag = ociDefaultTag
	}
	r.URL = "oci://" + u.Host + "/" + repo
	return nil
}

// ociDefaultTag is the tag of an OCI address with neither "tag" nor
// "digest", as in OpenTofu.
const ociDefaultTag = "latest"

// checkDigest validates "algorithm:encoded" as go-digest does for the
// registered algorithms.
func checkDigest(d string) error {
	if !ociDigestPattern().MatchString(d) {
		return errors.New("invalid checksum digest format")
	}
	alg, enc, _ := strings.Cut(d, ":")
	var size int
	switch alg {
	case "sha256":
		size = 64
	case "sha384":
		size = 96
	case "sha512":
		size = 128
	default:
		return errors.New("unsupported digest algorithm")
	}
	if len(enc) != size {
		return errors.New("invalid checksum digest length")
	}
	for _, c := range enc {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return errors.New("invalid checksum digest format")
		}
	}
	return nil
}

// errOCIArchive is OpenTofu's error for an OCI module source that asks
// go-getter to treat the package as an archive file.
var errOCIArchive = errors.New(`the "archive" argument is not allowed for OCI sources, because the archive format is detected automatically from the image manifest`)

// checkOCIArchive applies go-getter's "archive" argument, as OpenTofu sees
// it for an OCI source: one that is not a false boolean makes go-getter
// fetch a single file, which OpenTofu's OCI getter refuses. A non-empty
// "archive" argument is removed from q, as go-getter removes it before the
// getter sees the URL.
//
// go-getter also takes a repository name ending in an archive extension
// (".zip", ".tar.gz", ...) as an archive file, so OpenTofu refuses
// "oci://HOST/NAME.zip" when it fetches; such names are accepted here, so
// that the lock file's "oci://HOST/REPOSITORY" form always parses.
func checkOCIArchive(q url.Values) error {
	if vals, set := q["archive"]; set {
		if len(vals) > 1 {
			return fmt.Errorf("too many %q arguments", "archive")
		}
		// An empty value is left in place (go-getter ignores it), and
		// then refused as an unsupported argument.
		if v := vals[0]; v != "" {
			delete(q, "archive")
			if b, err := strconv.ParseBool(v); err == nil && !b {
				return nil
			}
			return errOCIArchive
		}
	}
	return nil
}
