package oci

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	tfaddr "github.com/hashicorp/terraform-registry-address"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/errcode"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/internal/httpx"
)

// Options configures a [Source]. The zero value works: anonymous HTTPS
// access to OCI module repositories, no provider mirror.
type Options struct {
	// Repository opens the repository named "host/repository". Default: an
	// oras *remote.Repository over HTTPS (plain HTTP if PlainHTTP is set),
	// with the credentials the fields below find. Set it to use another
	// client or an on-disk layout (oras content/oci.Store).
	Repository func(ctx context.Context, repo string) (Repository, error)

	// ProviderRepository maps a provider address to the "host/repository"
	// holding its versions, as OpenTofu's oci_mirror repository_template
	// does. It returns an error wrapping [source.ErrNotFound] for providers
	// the mirror does not hold. Default: nil, no provider is served.
	ProviderRepository func(ctx context.Context, addr tfaddr.Provider) (string, error)

	// PlainHTTP makes the default Repository speak plain HTTP instead of
	// HTTPS, for registries on a loopback address in tests. Default false.
	PlainHTTP bool

	// HTTPClient is the HTTP client of the default Repository; a copy of
	// it is used whose redirect policy refuses to leave https for http and
	// drops the Authorization header on a redirect to another host, as
	// every HTTP source of tflock does. Default: a client with the
	// transport the other sources share.
	HTTPClient *http.Client

	// UserAgent is sent by the default Repository. Default: oras-go's.
	UserAgent string

	// Credentials, when set, gives the credential for each repository
	// ("host/repository") and ConfigFiles is not read. The zero
	// [Credential] means anonymous.
	Credentials func(ctx context.Context, repo string) (Credential, error)

	// ConfigFiles are docker/containers-style credential files, searched as
	// OpenTofu does: the entry ("auths", "credHelpers", or the "credsStore"
	// fallback) whose key most specifically matches the repository wins,
	// and the earlier file wins among equally specific ones. Missing files
	// are skipped. Default: none, anonymous access. [DefaultConfigFiles]
	// lists the usual locations.
	ConfigFiles []string

	// LookPath finds a credential helper program "docker-credential-NAME".
	// Default: exec.LookPath.
	LookPath func(file string) (string, error)

	// AllPlatformChecksums makes [Source.Checksums] and [Source.Fetch]
	// report the zh: of every platform of a provider version, read from
	// the per-platform manifests without downloading their archives.
	// Default false: only the asked platform's, as OpenTofu records.
	AllPlatformChecksums bool

	// Limits bound a package archive (the layer): its size, the total
	// size of the files it extracts to, and its number of entries. The
	// zero value applies the defaults [source.Limits] states.
	Limits source.Limits

	// Events receives fetch progress. Default: nil, discarded.
	Events source.Events
}

// Source reads OpenTofu modules and provider mirrors from OCI registries.
// It implements [source.Lister], [source.Fetcher] and
// [source.ChecksumReporter]. It is safe for concurrent use.
type Source struct {
	opts  Options
	mu    sync.Mutex
	repos map[string]Repository
}

var (
	_ source.Source           = (*Source)(nil)
	_ source.ChecksumReporter = (*Source)(nil)
)

// NewSource returns a Source configured by opts.
func NewSource(opts Options) *Source {
	// The one HTTP configuration of tflock's sources: the shared
	// transport, and redirects that never leave https for http and drop
	// the Authorization header on another host.
	opts.HTTPClient = httpx.StdClient(opts.HTTPClient)
	return &Source{opts: opts, repos: map[string]Repository{}}
}

// repository returns the (cached) repository client for repo.
func (s *Source) repository(ctx context.Context, repo string) (Repository, error) {
	s.mu.Lock()
	r, ok := s.repos[repo]
	s.mu.Unlock()
	if ok {
		return r, nil
	}
	var err error
	if s.opts.Repository != nil {
		r, err = s.opts.Repository(ctx, repo)
	} else {
		r, err = s.openRemote(ctx, repo)
	}
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.repos[repo] = r
	s.mu.Unlock()
	return r, nil
}

// target is where a package lives: its repository and a display name.
func (s *Source) target(ctx context.Context, pkg source.Package) (string, Repository, error) {
	var name string
	switch p := pkg.(type) {
	case source.ModulePackage:
		n, err := moduleRepository(p)
		if err != nil {
			if !errors.Is(err, source.ErrNotFound) {
				err = fmt.Errorf("%w: %v", source.ErrNotFound, err)
			}
			return "", nil, err
		}
		name = n
	case source.ProviderPackage:
		if s.opts.ProviderRepository == nil {
			return "", nil, fmt.Errorf("%w: no OCI provider mirror is configured", source.ErrNotFound)
		}
		n, err := s.opts.ProviderRepository(ctx, p.Addr)
		if err != nil {
			return "", nil, err
		}
		if err := checkRepository(n); err != nil {
			return "", nil, fmt.Errorf("provider %s maps to an invalid repository: %w", p.Addr.ForDisplay(), err)
		}
		name = n
	default:
		return "", nil, fmt.Errorf("%w: unsupported package type %T", source.ErrNotFound, pkg)
	}
	r, err := s.repository(ctx, name)
	if err != nil {
		return name, nil, err
	}
	return name, r, nil
}

// Versions lists the versions of pkg's module or provider: the tags that
// are strict semantic versions, with "_" standing for "+". "latest" and
// other tags are ignored. Each [source.Available] has Ref set to its tag
// when the tag spells the version differently. A repository that does not
// exist gives an error wrapping [source.ErrNotFound].
func (s *Source) Versions(ctx context.Context, pkg source.Package) ([]source.Available, error) {
	name, repo, err := s.target(ctx, pkg)
	if err != nil {
		return nil, s.wrap(name, pkg, err)
	}
	var out []source.Available
	err = repo.Tags(ctx, "", func(tags []string) error {
		for _, tag := range tags {
			if v, ok := versionOfTag(tag); ok {
				a := source.Available{Version: v}
				if v.String() != tag {
					a.Ref = tag
				}
				out = append(out, a)
			}
		}
		return nil
	})
	if err != nil {
		return nil, s.wrap(name, pkg, fmt.Errorf("listing tags: %w", classify(err, source.ErrNotFound)))
	}
	sortAvailable(out)
	return out, nil
}

// versionOfTag parses an OCI tag as a version, or reports false.
func versionOfTag(tag string) (versions.Version, bool) {
	return versions.ParseTag(tag, versions.OCITag)
}

func sortAvailable(a []source.Available) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j].Version.LessThan(a[j-1].Version); j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

// Fetch brings pkg into dir. A module is resolved by pkg.Ref (a tag, or a
// digest "sha256:..."), else by its version's tag, else by the tag
// "latest"; when pkg.Pin is set, the manifest must have that digest, and a
// tag that moved away from it gives a [*MovedTagError]. A provider is
// resolved by its version's tag, then its platform's manifest in the
// index. Every manifest and layer is checked against its digest as it is
// read. For a module, the result's Pin is the manifest digest. Hashes hold the h1: of dir and, for a provider,
// the zh: of its zip.
func (s *Source) Fetch(ctx context.Context, pkg source.Package, dir string) (*source.Fetched, error) {
	name, repo, err := s.target(ctx, pkg)
	if err != nil {
		return nil, s.wrap(name, pkg, err)
	}
	var f *source.Fetched
	switch p := pkg.(type) {
	case source.ModulePackage:
		f, err = s.fetchModule(ctx, name, repo, p, dir)
	case source.ProviderPackage:
		f, err = s.fetchProvider(ctx, name, repo, p, dir)
	}
	if err != nil {
		return nil, s.wrap(name, pkg, err)
	}
	source.EmitContext(ctx, s.opts.Events, source.Event{Kind: source.EventFetchDone, Package: pkg, Bytes: f.Size, Total: f.Size})
	return f, nil
}

// Checksums reports the zh: hashes an OCI provider mirror vouches for: the
// digests of the zip layers of the version's per-platform manifests, read
// without downloading the archives. Only pkg.Platform's is reported unless
// [Options.AllPlatformChecksums] is set (then every platform's). Modules
// have no origin checksums: the result is empty.
func (s *Source) Checksums(ctx context.Context, pkg source.Package) ([]hash.Record, error) {
	name, repo, err := s.target(ctx, pkg)
	if err != nil {
		return nil, s.wrap(name, pkg, err)
	}
	p, ok := pkg.(source.ProviderPackage)
	if !ok {
		return nil, nil
	}
	recs, err := s.providerChecksums(ctx, name, repo, p)
	if err != nil {
		return nil, s.wrap(name, pkg, err)
	}
	return recs, nil
}

// resolve resolves a tag or digest. A reference that is not found wraps
// [source.ErrVersionNotFound] when the repository exists and
// [source.ErrNotFound] when it does not (a HEAD request cannot tell).
func resolve(ctx context.Context, repo Repository, ref string) (ocispec.Descriptor, error) {
	desc, err := repo.Resolve(ctx, ref)
	if err == nil {
		return desc, nil
	}
	notFound := source.ErrVersionNotFound
	if errors.Is(classify(err, source.ErrNotFound), source.ErrNotFound) {
		terr := repo.Tags(ctx, "", func([]string) error { return errStopTags })
		if terr != nil && !errors.Is(terr, errStopTags) && errors.Is(classify(terr, source.ErrNotFound), source.ErrNotFound) {
			notFound = source.ErrNotFound
		}
	}
	return desc, fmt.Errorf("resolving %q: %w", ref, classify(err, notFound))
}

var errStopTags = errors.New("stop listing tags")

// wrap gives err its context, unless it already has it.
func (s *Source) wrap(name string, pkg source.Package, err error) error {
	var se *source.Error
	if errors.As(err, &se) {
		return err
	}
	if name == "" {
		name = "OCI registry"
	}
	return &source.Error{Source: name, Package: pkg, Err: err}
}

// classify wraps err with the sentinel of the source package that fits
// it: notFound for a missing repository or reference, ErrUnauthorized for
// a refused credential.
func classify(err error, notFound error) error {
	var er *errcode.ErrorResponse
	switch {
	case errors.Is(err, errdef.ErrNotFound), errors.As(err, &er) && er.StatusCode == http.StatusNotFound:
		return fmt.Errorf("%w: %w", notFound, err)
	case errors.Is(err, auth.ErrBasicCredentialNotFound),
		errors.As(err, &er) && (er.StatusCode == http.StatusUnauthorized || er.StatusCode == http.StatusForbidden):
		return fmt.Errorf("%w: %w", source.ErrUnauthorized, err)
	}
	return err
}

// TagVersion returns the version an OCI tag names, as the source reads
// tags: a strict semantic version with "+" written "_" ("1.2.0_build");
// false for any other tag.
//
// Deprecated: use [versions.ParseTag] with [versions.OCITag], the one
// rule the git and OCI sources share.
func TagVersion(tag string) (versions.Version, bool) { return versionOfTag(tag) }
