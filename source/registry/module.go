package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	tfhash "github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/address"
	"github.com/tflock/tflock/source/internal/archive"
	"github.com/tflock/tflock/source/internal/fsutil"
)

// ErrUnsupportedLocation is wrapped by the error for a module download
// location no source can fetch (a getter other than HTTP archives, git and
// OCI, a chain of X-Terraform-Get answers too long or ending nowhere), and
// by the error of [Source.Fetch] and [ArchiveSource.Fetch] for a package
// located in git or OCI, which a dispatcher routes instead (see
// [source.ModuleLocator]).
var ErrUnsupportedLocation = errors.New("unsupported module package location")

// ErrLocalLocation is wrapped (with [ErrUnsupportedLocation]) by the error
// for a module download location, given by a registry or by an
// X-Terraform-Get answer, that names this machine's disk: a file:// URL,
// a "file::" or "git::file://" address, or a path after a getter prefix
// ("git::/srv/repo", "git::./repo"). A remote must not aim the installer at
// local files. (A location "./x", "../x" or "/x" without a getter is a URL
// relative to the answer that gave it, as in OpenTofu, and stays remote.)
var ErrLocalLocation = errors.New("a registry may not name a location on this machine")

// moduleAddr returns the registry module package address of p
// ([source.ModulePackage.Address]: "HOST/NAMESPACE/NAME/SYSTEM", or
// "NAMESPACE/NAME/SYSTEM" on the default host decided where the address
// was read), or an error wrapping source.ErrNotFound for another kind of
// address or one with a subdirectory.
func (s *Source) moduleAddr(p source.ModulePackage) (tfaddr.ModulePackage, error) {
	ms, err := p.Address()
	if err != nil {
		return tfaddr.ModulePackage{}, err
	}
	r, ok := ms.(address.Registry)
	if !ok || r.Subdir != "" {
		return tfaddr.ModulePackage{}, fmt.Errorf("%w: %q is not a module registry address (HOST/NAMESPACE/NAME/SYSTEM)", source.ErrNotFound, p.Source)
	}
	return r.Addr, nil
}

type moduleVersionsResponse struct {
	Modules []struct {
		Versions []struct {
			Version string `json:"version"`
		} `json:"versions"`
	} `json:"modules"`
}

func (s *Source) moduleService(ctx context.Context, m tfaddr.ModulePackage) (*url.URL, string, error) {
	host := m.Host.String()
	base, err := s.d.serviceURL(ctx, host, ServiceModules)
	if err != nil {
		return nil, "", err
	}
	tok, _ := s.o.Credentials.Token(host)
	return base, tok, nil
}

func (s *Source) moduleVersions(ctx context.Context, p source.ModulePackage) ([]source.Available, error) {
	m, err := s.moduleAddr(p)
	if err != nil {
		return nil, &source.Error{Package: p, Err: err}
	}
	host := m.Host.ForDisplay()
	base, tok, err := s.moduleService(ctx, m)
	if err != nil {
		return nil, s.errorFor(p, host, err)
	}
	u := base.ResolveReference(&url.URL{Path: path.Join(m.Namespace, m.Name, m.TargetSystem, "versions")})
	resp, err := s.c.get(ctx, request{url: u, token: tok})
	if err != nil {
		return nil, s.errorFor(p, host, err)
	}
	var body moduleVersionsResponse
	if err := json.Unmarshal(resp.body, &body); err != nil {
		return nil, s.errorFor(p, host, fmt.Errorf("invalid response from %s: %v", redact(u), err))
	}
	var out []source.Available
	seen := map[versions.Version]bool{}
	for _, mod := range body.Modules {
		for _, v := range mod.Versions {
			ver, err := versions.ParseModuleVersion(v.Version)
			if err != nil {
				s.warn(ctx, p, fmt.Sprintf("%s: ignoring invalid version %q listed by the registry", p.Source, v.Version))
				continue
			}
			if seen[ver] {
				continue
			}
			seen[ver] = true
			a := source.Available{Version: ver}
			if v.Version != ver.String() {
				a.Ref = v.Version
			}
			out = append(out, a)
		}
	}
	if len(body.Modules) == 0 {
		return nil, s.errorFor(p, host, fmt.Errorf("%w: the registry lists no module %s", source.ErrNotFound, m.ForRegistryProtocol()))
	}
	slices.SortStableFunc(out, func(x, y source.Available) int { return x.Version.Compare(y.Version) })
	return out, nil
}

type moduleDownloadResponse struct {
	Location               string `json:"location"`
	UseRegistryCredentials bool   `json:"use_registry_credentials"`
}

// ModuleLocation implements [source.ModuleLocator] for registry module
// packages: it asks the registry where version p.Version of the module is
// (the X-Terraform-Get header of its download endpoint, or the location
// field of its JSON answer), resolves a relative location against the
// answer's URL, and follows an HTTP location that is not an archive
// through its X-Terraform-Get answers (at most five hops) until it names
// a git, OCI or archive location. An archive location comes with its
// [source.ModuleLocation.Archive] fetcher, which sends the registry's
// token when the registry set use_registry_credentials (else the token of
// the archive's own host, if any). A location on this machine's disk is
// refused with an error wrapping [ErrLocalLocation]; a getter other than
// git, OCI and HTTP with one wrapping [ErrUnsupportedLocation].
func (s *Source) ModuleLocation(ctx context.Context, p source.ModulePackage) (source.ModuleLocation, error) {
	m, err := s.moduleAddr(p)
	if err != nil {
		return source.ModuleLocation{}, &source.Error{Package: p, Err: err}
	}
	host := m.Host.ForDisplay()
	if p.Version.IsZero() {
		return source.ModuleLocation{}, s.errorFor(p, host, fmt.Errorf("%w: a registry module is fetched by version", source.ErrVersionNotFound))
	}
	base, tok, err := s.moduleService(ctx, m)
	if err != nil {
		return source.ModuleLocation{}, s.errorFor(p, host, err)
	}
	u := base.ResolveReference(&url.URL{Path: path.Join(m.Namespace, m.Name, m.TargetSystem, p.Version.String(), "download")})
	resp, err := s.c.get(ctx, request{url: u, token: tok, accept: []int{204}})
	if errors.Is(err, source.ErrNotFound) {
		// The registry may list the version in another spelling ("v1.2");
		// ask again with that one.
		if spelled := s.moduleVersionSpelling(ctx, p); spelled != "" {
			u = base.ResolveReference(&url.URL{Path: path.Join(m.Namespace, m.Name, m.TargetSystem, spelled, "download")})
			resp, err = s.c.get(ctx, request{url: u, token: tok, accept: []int{204}})
		}
	}
	if errors.Is(err, source.ErrNotFound) {
		return source.ModuleLocation{}, s.errorFor(p, host, fmt.Errorf("%w: %v", source.ErrVersionNotFound, err))
	}
	if err != nil {
		return source.ModuleLocation{}, s.errorFor(p, host, err)
	}
	loc := resp.header.Get("X-Terraform-Get")
	var useCreds bool
	if loc == "" && len(resp.body) > 0 {
		var body moduleDownloadResponse
		if err := json.Unmarshal(resp.body, &body); err != nil {
			return source.ModuleLocation{}, s.errorFor(p, host, fmt.Errorf("invalid response from %s: %v", redact(u), err))
		}
		loc, useCreds = body.Location, body.UseRegistryCredentials
	}
	if loc == "" {
		return source.ModuleLocation{}, s.errorFor(p, host, fmt.Errorf("invalid response from %s: no download location (neither an X-Terraform-Get header nor a location field)", redact(u)))
	}
	loc = resolveLocation(resp.url, loc)
	if err := checkRemoteLocation(u, loc); err != nil {
		return source.ModuleLocation{}, s.errorFor(p, host, err)
	}
	tokenFor := s.hostToken
	if useCreds {
		tokenFor = func(string) string { return tok }
	}
	l, err := s.locate(ctx, loc, tokenFor, 0)
	if err != nil {
		return source.ModuleLocation{}, s.errorFor(p, host, err)
	}
	return l, nil
}

// fetchModule fetches a registry module package whose location is an
// HTTP archive. A git or OCI location is not fetched here: a dispatcher
// routes it (see [Source.ModuleLocation]).
func (s *Source) fetchModule(ctx context.Context, p source.ModulePackage, dir string, handOver bool) (*source.Fetched, error) {
	if err := checkEmptyDir(dir); err != nil {
		return nil, s.errorFor(p, "", err)
	}
	l, err := s.ModuleLocation(ctx, p)
	if err != nil {
		return nil, err
	}
	f, err := fetchArchive(ctx, p, l, dir, handOver)
	if err != nil {
		return nil, s.errorFor(p, "", err)
	}
	return f, nil
}

// fetchArchive fetches p from its location l when l is an HTTP archive;
// any other location gives an error wrapping [ErrUnsupportedLocation]
// that says what fetches it. With handOver (FetchArchive), a zip archive
// is handed over unextracted.
func fetchArchive(ctx context.Context, p source.ModulePackage, l source.ModuleLocation, dir string, handOver bool) (*source.Fetched, error) {
	if l.Archive == nil {
		return nil, fmt.Errorf("%w: the module package is at %s, which this source does not fetch: fetch it through a dispatcher that routes module locations to git and OCI sources (assemble.Dispatch)", ErrUnsupportedLocation, address.Redact(l.Address))
	}
	if handOver {
		return source.FetchArchive(ctx, l.Archive, p, dir)
	}
	return l.Archive.Fetch(ctx, p, dir)
}

// hostToken returns the token for host, or "".
func (s *Source) hostToken(host string) string {
	tok, _ := s.o.Credentials.Token(host)
	return tok
}

// moduleVersionSpelling returns the registry's own spelling of p.Version
// when it differs from the canonical one, or "".
func (s *Source) moduleVersionSpelling(ctx context.Context, p source.ModulePackage) string {
	list, err := s.moduleVersions(ctx, source.ModulePackage{Source: p.Source, Addr: p.Addr})
	if err != nil {
		return ""
	}
	for _, a := range list {
		if a.Version == p.Version && a.Ref != "" {
			return a.Ref
		}
	}
	return ""
}

// resolveLocation resolves a relative location ("./x.zip", "../x",
// "/path/x.tar.gz") against the URL of the response that gave it. A
// location with a getter prefix or a scheme is returned unchanged.
func resolveLocation(base *url.URL, loc string) string {
	if strings.HasPrefix(loc, "./") || strings.HasPrefix(loc, "../") || strings.HasPrefix(loc, "/") && !strings.HasPrefix(loc, "//") {
		ref, err := url.Parse(loc)
		if err != nil {
			return loc
		}
		return base.ResolveReference(ref).String()
	}
	return loc
}

// locate follows loc to the location of a module package: a git or OCI
// address as it is, an HTTP archive with the fetcher that downloads it,
// an HTTP location that is not an archive through its X-Terraform-Get
// answer (see [Source.followHTTP]). tokenFor gives the token to send to
// the host of loc when it is an HTTP URL; the hops after it send the
// tokens of their own hosts.
func (s *Source) locate(ctx context.Context, loc string, tokenFor func(host string) string, depth int) (source.ModuleLocation, error) {
	r, err := source.ParseLocation(loc)
	if err != nil {
		return source.ModuleLocation{}, fmt.Errorf("%w: %q: %v", ErrUnsupportedLocation, address.Redact(loc), err)
	}
	switch r.Kind {
	case address.KindGit, address.KindOCI:
		return source.ModuleLocation{Address: loc, Addr: r}, nil
	case address.KindHTTP:
		raw := strings.TrimPrefix(strings.TrimPrefix(r.Address, "http::"), "https::")
		u, err := url.Parse(raw)
		if err != nil {
			return source.ModuleLocation{}, fmt.Errorf("%w: %q: %v", ErrUnsupportedLocation, address.Redact(loc), err)
		}
		format := archive.FormatOf(u.Path)
		q := u.Query()
		if a := q.Get("archive"); a != "" {
			format = archive.FormatOf("x." + a)
			q.Del("archive")
			u.RawQuery = q.Encode()
		}
		tok := tokenFor(u.Host)
		if format == archive.Unknown {
			// As go-getter does: the URL names the real location in an
			// X-Terraform-Get header or a terraform-get meta tag.
			if depth >= maxLocationHops {
				return source.ModuleLocation{}, fmt.Errorf("%w: more than %d X-Terraform-Get hops, at %s", ErrUnsupportedLocation, maxLocationHops, redact(u))
			}
			next, err := s.followHTTP(ctx, u, tok)
			if err != nil {
				return source.ModuleLocation{}, err
			}
			if r.Subdir != "" {
				next = address.Remote{Address: next, Subdir: r.Subdir}.String()
			}
			return s.locate(ctx, next, s.hostToken, depth+1)
		}
		return source.ModuleLocation{Address: loc, Addr: r, Archive: &archiveFetcher{s: s, u: u, tok: tok, format: format, subdir: r.Subdir}}, nil
	}
	return source.ModuleLocation{}, fmt.Errorf("%w: %s packages (%s) are not supported", ErrUnsupportedLocation, r.Kind, address.Redact(loc))
}

// archiveFetcher is the fetcher of a module location that is an HTTP
// archive: it downloads u (with the token tok) and extracts it, or, asked
// with FetchArchive, hands a zip over unextracted.
type archiveFetcher struct {
	s      *Source
	u      *url.URL
	tok    string
	format archive.Format
	subdir string
}

var _ source.ArchiveFetcher = (*archiveFetcher)(nil)

func (a *archiveFetcher) Fetch(ctx context.Context, pkg source.Package, dir string) (*source.Fetched, error) {
	return a.fetch(ctx, pkg, dir, false)
}

func (a *archiveFetcher) FetchArchive(ctx context.Context, pkg source.Package, dir string) (*source.Fetched, error) {
	return a.fetch(ctx, pkg, dir, true)
}

func (a *archiveFetcher) fetch(ctx context.Context, pkg source.Package, dir string, handOver bool) (*source.Fetched, error) {
	if err := checkEmptyDir(dir); err != nil {
		return nil, err
	}
	shown := pkg // progress events name the package without credentials
	if mp, ok := pkg.(source.ModulePackage); ok {
		shown = redactedPackage(mp)
	}
	f, err := a.s.downloadArchive(ctx, shown, a.u, a.tok, a.format, dir, handOver)
	if err != nil {
		return nil, err
	}
	f.Package, f.Subdir = pkg, a.subdir
	return f, nil
}

// maxLocationHops bounds the chain of X-Terraform-Get indirections.
const maxLocationHops = 5

var metaTerraformGet = regexp.MustCompile(`(?i)<meta\s+name=["']terraform-get["']\s+content=["']([^"']+)["']`)

// followHTTP asks an HTTP location that is not an archive where the
// package really is: an X-Terraform-Get header, or a
// <meta name="terraform-get" content="..."> tag in an HTML page. As
// go-getter does, the request carries the query argument terraform-get=1
// (added to the URL's other arguments, which are then sorted by name). The
// answer is resolved against the final URL.
func (s *Source) followHTTP(ctx context.Context, u *url.URL, token string) (string, error) {
	ask := *u
	q := ask.Query()
	q.Add("terraform-get", "1")
	ask.RawQuery = q.Encode()
	resp, err := s.c.get(ctx, request{url: &ask, token: token, accept: []int{204}})
	if err != nil {
		return "", err
	}
	next := resp.header.Get("X-Terraform-Get")
	if next == "" {
		if m := metaTerraformGet.FindSubmatch(resp.body); m != nil {
			next = html.UnescapeString(string(m[1]))
		}
	}
	if next == "" {
		return "", fmt.Errorf("%w: %s is not a .zip or .tar.gz archive and names no X-Terraform-Get location", ErrUnsupportedLocation, redact(u))
	}
	next = resolveLocation(resp.url, next)
	if err := checkRemoteLocation(u, next); err != nil {
		return "", err
	}
	return next, nil
}

// checkRemoteLocation refuses a location, given by the answer to from,
// that names this machine's disk (see [ErrLocalLocation]).
func checkRemoteLocation(from *url.URL, loc string) error {
	if isLocalLocation(loc) {
		return fmt.Errorf("%w: %w: %s gives the location %q", ErrUnsupportedLocation, ErrLocalLocation, redact(from), address.Redact(loc))
	}
	return nil
}

// windowsDrive matches a path that starts with a drive letter.
var windowsDrive = regexp.MustCompile(`^[A-Za-z]:([\\/]|$)`)

// isLocalLocation reports whether loc, once relative URLs are resolved,
// names a file or directory of this machine.
func isLocalLocation(loc string) bool {
	getter, rest := "", loc
	if i := strings.Index(loc, "::"); i > 0 && !strings.ContainsAny(loc[:i], `/:\`) {
		getter, rest = strings.ToLower(loc[:i]), loc[i+2:]
	}
	if getter == "file" {
		return true
	}
	if windowsDrive.MatchString(rest) {
		return true
	}
	for _, prefix := range []string{"./", "../", `.\`, `..\`, "/", `\`, "~"} {
		if strings.HasPrefix(rest, prefix) && !strings.HasPrefix(rest, "//") {
			return true
		}
	}
	if rest == "." || rest == ".." {
		return true
	}
	if u, err := url.Parse(rest); err == nil && strings.EqualFold(u.Scheme, "file") {
		return true
	}
	return false
}

// downloadArchive downloads a module archive over HTTP and extracts it. A
// zip archive fetched for a cache (handOver: FetchArchive) is handed over
// unextracted instead, for the cache to extract and hash in one read.
func (s *Source) downloadArchive(ctx context.Context, pkg source.Package, u *url.URL, token string, format archive.Format, dir string, handOver bool) (_ *source.Fetched, err error) {
	if u.Scheme != "https" && u.Scheme != "http" {
		return nil, fmt.Errorf("%w: %s", ErrUnsupportedLocation, redact(u))
	}
	pr := s.newProgress(ctx, pkg)
	req := request{url: u, token: token, started: pr.start}
	if format == archive.Zip && handOver {
		tmp, err := fsutil.ArchiveFile(dir)
		if err != nil {
			return nil, err
		}
		n, err := s.c.download(ctx, req, tmp, pr, nil)
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(tmp.Name())
			return nil, err
		}
		pr.finish(redact(u))
		return &source.Fetched{Location: redact(u), Size: n, Archive: tmp.Name(), Limits: s.o.Limits}, nil
	}
	stage, tmp, done, err := stageDownload(dir, ".download-*")
	if err != nil {
		return nil, err
	}
	defer done()
	n, err := s.c.download(ctx, req, tmp, pr, nil)
	if err != nil {
		return nil, err
	}
	pr.finish(redact(u))
	content := filepath.Join(stage, "pkg")
	if err := os.Mkdir(content, 0o755); err != nil {
		return nil, err
	}
	lim := archive.Options{Limits: s.o.Limits, Symlinks: true, Module: true}
	switch format {
	case archive.Zip:
		err = archive.ExtractZip(ctx, tmp, n, content, lim)
	default:
		if _, err = tmp.Seek(0, 0); err == nil {
			err = archive.ExtractTarGz(ctx, tmp, content, lim)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", redact(u), err)
	}
	h1, err := tfhash.Options{Module: true}.H1Dir(ctx, content)
	if err != nil {
		return nil, fmt.Errorf("hashing %s: %w", redact(u), err)
	}
	if err := commitDir(content, dir); err != nil {
		return nil, err
	}
	return &source.Fetched{Dir: dir, Location: redact(u), Size: n, Hashes: []tfhash.Hash{h1}}, nil
}
