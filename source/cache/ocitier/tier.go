package ocitier

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	tfaddr "github.com/hashicorp/terraform-registry-address"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/address"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/cliconfig"
	"github.com/tflock/tflock/source/oci"
)

// AnnotationSubdir is the module manifest annotation that records the
// subdirectory of the package its origin designated as the module's root
// ([source.Fetched.Subdir]); absent when the root is the package's.
const AnnotationSubdir = "io.github.tflock.subdir"

// ModuleRepository is the repository, below the tier's prefix, that holds
// module packages.
const ModuleRepository = "tflock/modules"

// Defaults of [Options].
const (
	DefaultTimeout       = 5 * time.Minute
	DefaultMergeAttempts = 5
	DefaultSettle        = 50 * time.Millisecond
	DefaultAttempts      = 3
)

// ErrUnavailable is wrapped by the errors of a [Tier] that could not be
// used: the registry is unreachable, refused the credential, failed, or
// took longer than [Options.Timeout]. Once a call has failed so, every
// later call fails at once with it.
var ErrUnavailable = errors.New("the remote cache tier is unavailable")

// Options configure a [Tier]. The zero value works: HTTPS with the
// system's roots (and SSL_CERT_FILE), anonymous, the defaults above.
type Options struct {
	// OCI configures the registry client as it configures the OCI source:
	// PlainHTTP, HTTPClient, UserAgent, Credentials, ConfigFiles,
	// LookPath, Limits and Events are used; Repository,
	// ProviderRepository and AllPlatformChecksums are set by the tier.
	OCI oci.Options
	// Timeout bounds each Get and Put. Default [DefaultTimeout].
	Timeout time.Duration
	// MergeAttempts bounds how many times Put writes a provider version's
	// index while another writer's index replaces its own. Default
	// [DefaultMergeAttempts].
	MergeAttempts int
	// Attempts is how many times a Get or Put that failed on the
	// registry's side (a server error, a refused or dropped connection,
	// a blob another writer is committing at that moment) is tried before
	// the tier is taken as unavailable; each is idempotent. Default
	// [DefaultAttempts].
	Attempts int
	// Settle is how long Put waits after writing an index before reading
	// it back, so that a concurrent writer's index, written from an older
	// read, lands first and is merged. Default [DefaultSettle].
	Settle time.Duration
}

// Tier is a remote cache tier on an OCI registry. It implements
// [cache.Remote] and is safe for concurrent use.
type Tier struct {
	location string // "host[:port]/prefix"
	opts     Options
	src      *oci.Source // providers, reporting download progress
	modSrc   *oci.Source // modules: the tier's own names are not reported
	template func(context.Context, tfaddr.Provider) (string, error)

	mu    sync.Mutex
	repos map[string]*remote.Repository
	down  error // set once the tier is unavailable
}

var _ cache.Remote = (*Tier)(nil)

// ParseLocation reads a tier location, "oci://HOST[:PORT]/PREFIX" (the
// scheme may be left out), and returns it as "HOST[:PORT]/PREFIX". PREFIX
// is one or more repository path components (lowercase letters, digits
// and separators, as OCI repository names allow).
func ParseLocation(s string) (string, error) {
	loc, _ := strings.CutPrefix(s, "oci://")
	if strings.Contains(loc, "://") {
		return "", fmt.Errorf("remote cache %q: the location must be oci://HOST[:PORT]/PREFIX", s)
	}
	loc = strings.TrimSuffix(loc, "/")
	host, prefix, ok := strings.Cut(loc, "/")
	if !ok || host == "" || prefix == "" {
		return "", fmt.Errorf("remote cache %q: the location must be oci://HOST[:PORT]/PREFIX, with a repository prefix after the host", s)
	}
	ref, err := registry.ParseReference(loc)
	if err != nil || ref.Reference != "" {
		return "", fmt.Errorf("remote cache %q: %q is not a valid OCI registry and repository prefix (lowercase letters, digits, '.', '_', '-' and '/')", s, loc)
	}
	return loc, nil
}

// New returns the tier at location (see [ParseLocation]).
func New(location string, opts Options) (*Tier, error) {
	loc, err := ParseLocation(location)
	if err != nil {
		return nil, err
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MergeAttempts <= 0 {
		opts.MergeAttempts = DefaultMergeAttempts
	}
	if opts.Attempts <= 0 {
		opts.Attempts = DefaultAttempts
	}
	if opts.Settle <= 0 {
		opts.Settle = DefaultSettle
	}
	t := &Tier{location: loc, opts: opts, repos: map[string]*remote.Repository{}}
	t.template = cliconfig.OCIRepositoryFunc(loc + "/${hostname}/${namespace}/${type}")
	so := opts.OCI
	so.Repository = func(ctx context.Context, name string) (oci.Repository, error) { return t.repository(ctx, name) }
	so.ProviderRepository = t.template
	so.AllPlatformChecksums = false
	t.src = oci.NewSource(so)
	so.Events = nil
	t.modSrc = oci.NewSource(so)
	return t, nil
}

// Location returns the tier's "HOST[:PORT]/PREFIX".
func (t *Tier) Location() string { return t.location }

// ProviderRepository returns the repository ("host/repository") holding
// the versions of provider addr: PREFIX/<hostname>/<namespace>/<type>, as
// an oci_mirror repository_template "HOST/PREFIX/${hostname}/${namespace}/${type}"
// names it.
func (t *Tier) ProviderRepository(addr tfaddr.Provider) (string, error) {
	return t.template(context.Background(), addr)
}

// moduleTag is the tag of the module package whose h1: is h1, installed
// from its subdirectory subdir ("" for the root): one package delivering
// two modules (a monorepo) is two entries, each recording its own
// subdirectory, which share the package's blob.
//
// The root of a [source.ModulePackage.Located] package (a registry
// module, an HTTP address that X-Terraform-Get may answer) is also keyed
// by the package's identity (its address and version), as the local
// cache's own index record is: the root is also what a lock written
// before subdirectories were recorded says, so only an entry its own
// identity wrote may confirm that its location names no subdirectory,
// never another module's entry of the same package.
func moduleTag(h1 hash.Hash, subdir string, pkg source.Package) (string, bool) {
	if h1.Scheme() != hash.SchemeH1 {
		return "", false
	}
	b, err := base64.StdEncoding.DecodeString(h1.Value())
	if err != nil || len(b) != 32 {
		return "", false
	}
	tag := "h1-" + hex.EncodeToString(b)
	if subdir != "" {
		sum := sha256.Sum256([]byte(subdir))
		tag += "-s" + hex.EncodeToString(sum[:8])
	} else if m, ok := pkg.(source.ModulePackage); ok && m.Located {
		id := m
		id.Subdir, id.Pin, id.Located, id.Addr = "", "", false, nil
		sum := sha256.Sum256([]byte(address.StripCredentials(id.String())))
		tag += "-i" + hex.EncodeToString(sum[:8])
	}
	return tag, true
}

// versionTag is the tag of provider p's version: the version, "+"
// written "_".
func versionTag(p source.ProviderPackage) string {
	return strings.ReplaceAll(p.Version.String(), "+", "_")
}

// repository returns the (cached) client for "host/repository".
func (t *Tier) repository(ctx context.Context, name string) (*remote.Repository, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r, ok := t.repos[name]; ok {
		return r, nil
	}
	r, err := oci.OpenRepository(ctx, t.opts.OCI, name)
	if err != nil {
		return nil, err
	}
	t.repos[name] = r
	return r, nil
}

// begin starts a call: it fails at once when the tier is down, and bounds
// the call by the timeout.
func (t *Tier) begin(ctx context.Context) (context.Context, context.CancelFunc, error) {
	t.mu.Lock()
	down := t.down
	t.mu.Unlock()
	if down != nil {
		return nil, nil, down
	}
	ctx, cancel := context.WithTimeout(ctx, t.opts.Timeout)
	return ctx, cancel, nil
}

// end classifies the error of a call: a miss stays a miss; a bad artifact
// or a checksum mismatch is that package's problem; anything else (the
// registry unreachable, failing, refusing, too slow) makes the tier
// unavailable. parent is the caller's context: its own cancellation is
// not the tier's fault.
func (t *Tier) end(parent context.Context, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrUnavailable):
		return err
	case parent.Err() != nil:
		return err
	case isMiss(err):
		return fmt.Errorf("%w: %w", source.ErrNotFound, err)
	case !transient(err) && !errors.Is(err, source.ErrUnauthorized):
		return err
	}
	err = fmt.Errorf("%w (%s): %w", ErrUnavailable, t.location, err)
	t.mu.Lock()
	if t.down == nil {
		t.down = err
	}
	t.mu.Unlock()
	return err
}

func isMiss(err error) bool {
	return errors.Is(err, source.ErrNotFound) || errors.Is(err, source.ErrVersionNotFound) || errors.Is(err, source.ErrPlatformNotSupported)
}

// errLocal marks an error of this machine (a file that cannot be read),
// which says nothing about the registry.
var errLocal = errors.New("local error")

// Get writes the zip the tier holds for pkg to the file path (see
// [cache.Remote]). A provider is found by its address, version and
// platform; a module only by an h1: in want (the lock file's), since
// nothing else about a module can be verified. The zip's bytes are
// checked against the layer digest while read.
func (t *Tier) Get(ctx context.Context, pkg source.Package, want []hash.Hash, path string) (cache.RemoteArchive, error) {
	cctx, cancel, err := t.begin(ctx)
	if err != nil {
		return cache.RemoteArchive{}, err
	}
	defer cancel()
	var a cache.RemoteArchive
	err = t.retry(cctx, func() error {
		var err error
		a, err = t.get(cctx, pkg, want, path)
		return err
	})
	return a, t.end(ctx, err)
}

// retry calls op until it succeeds, fails for a reason that another try
// cannot change (a miss, a bad artifact, a mismatch, this machine), or has
// been tried [Options.Attempts] times, waiting a little longer each time.
func (t *Tier) retry(ctx context.Context, op func() error) error {
	var err error
	for i := range t.opts.Attempts {
		if i > 0 {
			if serr := sleep(ctx, time.Duration(i)*t.opts.Settle*2); serr != nil {
				return err
			}
		}
		if err = op(); err == nil || !transient(err) || ctx.Err() != nil {
			return err
		}
	}
	return err
}

// transient reports whether another try might succeed.
func transient(err error) bool {
	return !isMiss(err) && !errors.Is(err, oci.ErrInvalidArtifact) && !errors.Is(err, source.ErrChecksumMismatch) &&
		!errors.Is(err, source.ErrTooLarge) && !errors.Is(err, errLocal) && !errors.Is(err, source.ErrUnauthorized)
}

func (t *Tier) get(ctx context.Context, pkg source.Package, want []hash.Hash, path string) (cache.RemoteArchive, error) {
	var ask source.Package
	switch p := pkg.(type) {
	case source.ProviderPackage:
		ask = p
	case source.ModulePackage:
		tag := ""
		subdir, _ := p.BoundSubdir()
		for _, h := range want {
			if tag2, ok := moduleTag(h, subdir, p); ok {
				tag = tag2
				break
			}
		}
		if tag == "" {
			return cache.RemoteArchive{}, fmt.Errorf("%w: a module is looked up by the h1: its lock entry records, and none is given", source.ErrNotFound)
		}
		ask = source.ModulePackage{Source: "oci://" + t.location + "/" + ModuleRepository, Ref: tag}
	default:
		return cache.RemoteArchive{}, fmt.Errorf("%w: unsupported package type %T", source.ErrNotFound, pkg)
	}
	src := t.src
	if _, ok := pkg.(source.ModulePackage); ok {
		src = t.modSrc
	}
	a, err := src.FetchArchive(ctx, ask, path)
	if p, ok := pkg.(source.ProviderPackage); ok && errors.Is(err, source.ErrPlatformNotSupported) {
		// The index is a hint: a writer whose index replaced another's
		// dropped that platform from it, not from its own tag.
		if ptag, ok := platformTag(versionTag(p), p.Platform); ok && t.mayHold(ctx, p, ptag) {
			if a2, err2 := src.FetchTargetArchive(ctx, p, ptag, path); !isMiss(err2) {
				a, err = a2, err2
			}
		}
	}
	if err != nil {
		return cache.RemoteArchive{}, err
	}
	return cache.RemoteArchive{Hashes: []hash.Hash{a.ZH}, Subdir: a.Annotations[AnnotationSubdir], Location: "oci://" + a.Location}, nil
}

// mayHold reports whether provider p's repository may hold tag: false
// only when resolving it finds nothing, in one request (a miss read
// through the OCI source would also tell a missing repository from a
// missing tag).
func (t *Tier) mayHold(ctx context.Context, p source.ProviderPackage, tag string) bool {
	name, err := t.template(ctx, p.Addr)
	if err != nil {
		return true
	}
	repo, err := t.repository(ctx, name)
	if err != nil {
		return true
	}
	_, err = repo.Resolve(ctx, tag)
	return !errors.Is(err, errdef.ErrNotFound)
}

// Put stores the verified zip at path for pkg (see [cache.Remote]): a
// provider under its version's index, for its platform; a module under
// the h1: in a.Hashes. A package the tier holds already is not written
// again.
func (t *Tier) Put(ctx context.Context, pkg source.Package, a cache.RemoteArchive, path string) error {
	cctx, cancel, err := t.begin(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	err = t.retry(cctx, func() error {
		switch p := pkg.(type) {
		case source.ProviderPackage:
			return t.putProvider(cctx, p, a, path)
		case source.ModulePackage:
			return t.putModule(cctx, p, a, path)
		}
		return fmt.Errorf("%w: unsupported package type %T", errLocal, pkg)
	})
	if err != nil {
		err = &source.Error{Source: "remote cache " + t.location, Package: pkg, Err: err}
	}
	return t.end(ctx, err)
}
