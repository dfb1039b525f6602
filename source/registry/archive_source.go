package registry

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/address"
	"github.com/tflock/tflock/source/internal/display"
)

// ErrNoVersions is wrapped by the error an [ArchiveSource] gives when asked
// for the versions of an HTTP archive, or for one at a version: such a
// package is whatever its URL serves, so a module call with an HTTP archive
// source cannot have a version argument. The error also matches
// [source.ErrVersionNotFound].
var ErrNoVersions = errors.New("module packages at HTTP archive URLs have no versions")

// ArchiveSource fetches module packages whose source address is an HTTP or
// HTTPS URL, as OpenTofu's HTTP getter does:
//
//   - a URL whose path ends in ".zip", ".tar.gz" or ".tgz", or that has an
//     "archive=zip", "archive=tar.gz" or "archive=tgz" query argument
//     (which is removed from the URL before the request), is downloaded and
//     extracted safely;
//   - any other URL is asked where the package really is: the location in
//     its X-Terraform-Get response header, or in a
//     <meta name="terraform-get" content="..."> tag of the HTML page it
//     serves, resolved against the URL, is fetched in turn (at most five
//     hops). A location there may also be a git or OCI address, which
//     [ArchiveSource.ModuleLocation] reports for a dispatcher to route,
//     and may end in "//SUBDIR", which is reported in
//     [source.Fetched.Subdir]. A location on this machine's
//     disk (file://, git::file://, a path after a getter prefix) is
//     refused with an error wrapping [ErrLocalLocation].
//
// It uses the same HTTP layer as [Source]: retries with backoff, idle and
// overall timeouts, size limits ([Options.Limits] for the archive and its
// contents), no redirect from https to http, the Authorization header
// dropped on a redirect to another host, a TF_TOKEN_* bearer token for the
// host
// when [Options.Credentials] has one (otherwise the URL's user information,
// if any, as basic authentication). Credentials never appear in its errors.
// Other archive formats go-getter knows (".tar.xz", ".tar.bz2", ...) give an
// error wrapping [ErrUnsupportedLocation].
//
// A module package is extracted without its version-control metadata
// (the one rule, [github.com/tflock/tflock/hash.IsVCSMetadata]), and the h1: hash of the extracted
// tree, which is the module h1:, is reported in [source.Fetched.Hashes]. An ArchiveSource implements
// [source.Source] for [source.ModulePackage] values whose Source is such a
// URL, optionally with a forced "http::" or "https::" getter, and without
// subdirectory (the address package's Remote.Package form); every other
// package gives an error wrapping [source.ErrNotFound]. It is safe for
// concurrent use.
type ArchiveSource struct {
	s *Source
}

var (
	_ source.Source         = (*ArchiveSource)(nil)
	_ source.ModuleLocator  = (*ArchiveSource)(nil)
	_ source.ArchiveFetcher = (*ArchiveSource)(nil)
)

// NewArchiveSource returns an ArchiveSource configured by opts. Of the
// [Options], the HTTP, credential, limit, Events and Warn fields
// apply (with their stated defaults); the registry and signature fields are
// not used.
func NewArchiveSource(opts Options) *ArchiveSource {
	return &ArchiveSource{s: NewSource(opts)}
}

// String names the source for messages.
func (a *ArchiveSource) String() string { return "HTTP module archives" }

// Versions implements [source.Lister]. An HTTP archive has no versions:
// for a [source.ModulePackage] at an HTTP(S) URL the error wraps
// [ErrNoVersions] and [source.ErrVersionNotFound]; for any other package
// it wraps [source.ErrNotFound].
func (a *ArchiveSource) Versions(ctx context.Context, pkg source.Package) ([]source.Available, error) {
	p, r, err := a.parse(pkg)
	if err != nil {
		return nil, err
	}
	return nil, a.errorFor(p, r, noVersionsError())
}

// ModuleLocation implements [source.ModuleLocator]: for a URL of an
// archive it reports the URL itself, with the fetcher that downloads it;
// for any other URL, the location its X-Terraform-Get answers lead to (a
// git or OCI address, or an archive with its fetcher), which a dispatcher
// routes. A package with a Version or a Ref gives an error wrapping
// [ErrNoVersions].
func (a *ArchiveSource) ModuleLocation(ctx context.Context, pkg source.ModulePackage) (source.ModuleLocation, error) {
	p, r, err := a.parse(pkg)
	if err != nil {
		return source.ModuleLocation{}, err
	}
	if !p.Version.IsZero() || p.Ref != "" {
		return source.ModuleLocation{}, a.errorFor(p, r, noVersionsError())
	}
	if err := checkArchiveFormat(r); err != nil {
		return source.ModuleLocation{}, a.errorFor(p, r, err)
	}
	l, err := a.s.locate(ctx, r.Address, a.s.hostToken, 0)
	if err != nil {
		return source.ModuleLocation{}, a.errorFor(p, r, err)
	}
	return l, nil
}

// Fetch implements [source.Fetcher]: it downloads the archive that the
// package's URL designates (see [ArchiveSource.ModuleLocation]) and
// extracts it into dir, which must be absent or empty. A URL that leads
// to a git or OCI location gives an error wrapping
// [ErrUnsupportedLocation]: a dispatcher routes those. A package with a
// Version or a Ref gives an error wrapping [ErrNoVersions]. On error
// nothing is left in dir.
func (a *ArchiveSource) Fetch(ctx context.Context, pkg source.Package, dir string) (*source.Fetched, error) {
	return a.fetch(ctx, pkg, dir, false)
}

// FetchArchive implements [source.ArchiveFetcher]: as Fetch, but a zip
// archive is handed over unextracted, in [source.Fetched.Archive]; a
// tar.gz is extracted.
func (a *ArchiveSource) FetchArchive(ctx context.Context, pkg source.Package, dir string) (*source.Fetched, error) {
	return a.fetch(ctx, pkg, dir, true)
}

func (a *ArchiveSource) fetch(ctx context.Context, pkg source.Package, dir string, handOver bool) (*source.Fetched, error) {
	p, r, err := a.parse(pkg)
	if err != nil {
		return nil, err
	}
	if err := checkEmptyDir(dir); err != nil {
		return nil, a.errorFor(p, r, err)
	}
	l, err := a.ModuleLocation(ctx, p)
	if err != nil {
		return nil, err
	}
	f, err := fetchArchive(ctx, p, l, dir, handOver)
	if err != nil {
		return nil, a.errorFor(p, r, err)
	}
	return f, nil
}

func noVersionsError() error {
	return fmt.Errorf("%w (%w): a module call with this source cannot have a version argument, as it does not come from a module registry", ErrNoVersions, source.ErrVersionNotFound)
}

// archiveSourceName names an ArchiveSource in errors about packages it does
// not serve (errors about a URL name the URL's host).
const archiveSourceName = "http archives"

// parse checks that pkg is a module package at an HTTP(S) URL.
func (a *ArchiveSource) parse(pkg source.Package) (source.ModulePackage, address.Remote, error) {
	p, ok := pkg.(source.ModulePackage)
	if !ok {
		return source.ModulePackage{}, address.Remote{}, &source.Error{Source: archiveSourceName, Package: pkg, Err: fmt.Errorf("%w: unsupported package type %T", source.ErrNotFound, pkg)}
	}
	shown := redactedPackage(p)
	ms, err := p.Address()
	if err != nil {
		return p, address.Remote{}, &source.Error{Source: archiveSourceName, Package: shown, Err: err}
	}
	r, ok := ms.(address.Remote)
	if !ok {
		return p, r, &source.Error{Source: archiveSourceName, Package: shown, Err: fmt.Errorf("%w: not a remote address", source.ErrNotFound)}
	}
	if r.Kind != address.KindHTTP {
		return p, r, &source.Error{Source: archiveSourceName, Package: shown, Err: fmt.Errorf("%w: not an HTTP archive address (a %s package)", source.ErrNotFound, r.Kind)}
	}
	if r.Subdir != "" {
		return p, r, &source.Error{Source: archiveSourceName, Package: shown, Err: fmt.Errorf("%w: the package address must not have a subdirectory (//%s); the caller joins it", source.ErrNotFound, r.Subdir)}
	}
	return p, r, nil
}

// errorFor gives err the package's context, with every credential the
// package address carries removed from the message.
func (a *ArchiveSource) errorFor(p source.ModulePackage, r address.Remote, err error) error {
	host := ""
	if u, perr := url.Parse(r.URL); perr == nil {
		host = u.Host
	}
	var se *source.Error
	if !errors.As(err, &se) {
		err = &source.Error{Source: host, Package: redactedPackage(p), Err: err}
	}
	secrets := display.URLSecrets(r.URL)
	if len(secrets) == 0 {
		return err
	}
	return &redactedError{err: err, secrets: secrets}
}

// redactedPackage returns p with any user information of its URL replaced,
// for messages.
func redactedPackage(p source.ModulePackage) source.ModulePackage {
	p.Source = address.Redact(p.Source)
	p.Addr = nil // the typed address keeps the credentials
	return p
}

// redactedError hides the secrets of a URL (display.URLSecrets) in the
// message of the error it wraps.
type redactedError struct {
	err     error
	secrets []string
}

func (e *redactedError) Error() string { return display.Scrub(e.err.Error(), e.secrets) }

func (e *redactedError) Unwrap() error { return e.err }

// unsupportedArchives are the archive extensions go-getter decompresses
// that this source does not.
var unsupportedArchives = []string{".tar.bz2", ".tbz2", ".tar.xz", ".txz", ".tar.zst", ".tzst", ".tar", ".bz2", ".xz", ".zst", ".gz"}

// checkArchiveFormat rejects, before any request, a URL that names an
// archive format other than zip and gzip-compressed tar, by its path or by
// an "archive" query argument.
func checkArchiveFormat(r address.Remote) error {
	u, err := url.Parse(r.URL)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnsupportedLocation, err)
	}
	name := strings.ToLower(u.Path)
	if a := u.Query().Get("archive"); a != "" {
		switch strings.ToLower(a) {
		case "zip", "tar.gz", "tgz":
			return nil
		}
		name = "x." + strings.ToLower(a)
	}
	if strings.HasSuffix(name, ".tar.gz") {
		return nil
	}
	for _, ext := range unsupportedArchives {
		if strings.HasSuffix(name, ext) {
			return fmt.Errorf("%w: %s archives are not supported (only .zip, .tar.gz and .tgz)", ErrUnsupportedLocation, ext)
		}
	}
	return nil
}
