package mirror

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	unpack "github.com/tflock/tflock/source/internal/archive"
	"github.com/tflock/tflock/source/internal/fsutil"
	"github.com/tflock/tflock/source/internal/httpx"
	"github.com/tflock/tflock/source/internal/mirrorjson"
)

// HTTPClient sends HTTP requests; *http.Client satisfies it.
type HTTPClient interface {
	Do(*http.Request) (*http.Response, error)
}

// NetworkOptions configures a [Network] mirror.
type NetworkOptions struct {
	// URL is the mirror's base URL; it must use https. Required.
	URL string
	// Client sends the requests. Default: an http.Client on the transport
	// every default client of tflock's HTTP sources shares. When it is an
	// *http.Client, a copy of it is used whose redirect policy refuses to
	// leave https for http, drops the Authorization header when a redirect
	// leads to another host, and stops after 10 redirects. Its own Timeout,
	// if any, applies to every request, downloads included: leave it zero
	// and use the timeouts below.
	Client HTTPClient
	// Token returns the bearer token for a host, or "" for none (the CLI
	// configuration's credentials blocks, TF_TOKEN_ variables). The token
	// is sent only to the mirror's own host and never appears in errors.
	// Default: no credentials.
	Token func(host string) string
	// TrustAllHashes reports the hashes the mirror lists for every platform
	// of a version (in [Network.Checksums] and [source.Fetched.Origin]),
	// with the mirror as their provenance, as OpenTofu's trust_all_hashes
	// option does. Default: false, and only the hashes computed from the
	// downloaded package are reported.
	TrustAllHashes bool
	// Retries is how many times a request is retried after a connection
	// error or a 429 or 5xx response (other than 501), waiting a little
	// longer each time (or as long as a Retry-After header asks, up to
	// MaxBackoff), as the download_retry_count of a network_mirror block
	// sets it. Nothing else is retried: other 4xx responses, a redirect
	// loop, an idle or overall timeout, a local write error (a full disk).
	// Default 2, OpenTofu's default; a negative value disables retries.
	Retries int
	// MinBackoff is the first delay between attempts; it doubles each
	// time, with jitter. Default 250ms.
	MinBackoff time.Duration
	// MaxBackoff caps the delay between attempts. Default 10s.
	MaxBackoff time.Duration
	// RequestTimeout bounds one attempt at index.json or VERSION.json.
	// Default 30s.
	RequestTimeout time.Duration
	// DownloadTimeout bounds one attempt at downloading a package.
	// Default: no overall limit, as in OpenTofu (a large package over a
	// slow link takes as long as it takes); IdleTimeout ends a download
	// that stalls.
	DownloadTimeout time.Duration
	// IdleTimeout is how long a request may wait for the response headers,
	// and then for each next part of the body; a request during which the
	// mirror sends nothing for that long fails and is not retried.
	// Default 60s.
	IdleTimeout time.Duration
	// UserAgent is sent with each request. Default: "tflock".
	UserAgent string
	// MaxJSONSize limits the size of index.json and VERSION.json
	// responses. Default: 4 MiB.
	MaxJSONSize int64
	// Limits bound a package archive: its download size, the total size of
	// the files it extracts to, and its number of entries. The zero value
	// applies the defaults [source.Limits] states.
	Limits source.Limits
}

// Network is a provider mirror that speaks OpenTofu's provider network
// mirror protocol: GET BASE/HOST/NAMESPACE/TYPE/index.json lists the
// versions ({"versions": {"2.0.0": {}}}), and
// GET BASE/HOST/NAMESPACE/TYPE/VERSION.json lists each platform's archive
// ({"archives": {"linux_amd64": {"url": "...", "hashes": ["h1:..."]}}}),
// with archive URLs relative to the VERSION.json URL.
//
// A downloaded package must match one of the hashes the mirror lists for
// it (when it lists any), or Fetch fails with [source.ErrChecksumMismatch]
// and keeps nothing. Asked by FetchArchive (a cache fill, see
// [source.ArchiveFetcher]), an archive listed with at most one h1: and at
// most one zh: is handed over unextracted with those hashes, which the
// receiver checks on what it reads: then every listed hash must match
// (OpenTofu accepts a package that matches any one of them); a large one
// is handed over while it downloads ([source.PendingArchive]: its end is
// asked for with a ranged GET). Network serves providers only and is safe for concurrent use.
type Network struct {
	base *url.URL
	opts NetworkOptions
	c    *httpx.Client

	mu   sync.Mutex
	docs map[string]*mirrorjson.Version // VERSION.json by URL
}

var (
	_ source.Source           = (*Network)(nil)
	_ source.ChecksumReporter = (*Network)(nil)
	_ source.ArchiveFetcher   = (*Network)(nil)
)

// NewNetwork returns the network mirror at opts.URL. The URL must be an
// absolute https URL.
func NewNetwork(opts NetworkOptions) (*Network, error) {
	u, err := url.Parse(opts.URL)
	if err != nil {
		return nil, fmt.Errorf("invalid network mirror URL %q: %v", opts.URL, err)
	}
	if u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("cannot use %q as a network provider mirror: the mirror must be at an https: URL", opts.URL)
	}
	if u.User != nil {
		return nil, fmt.Errorf("invalid network mirror URL: it must not contain credentials; use the credentials block of the CLI configuration")
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	if opts.Retries == 0 {
		opts.Retries = httpx.DefaultRetries
	}
	if opts.MaxJSONSize <= 0 {
		opts.MaxJSONSize = 4 << 20
	}
	opts.Limits = opts.Limits.WithDefaults()
	c := httpx.New(httpx.Options{
		Client:          opts.Client,
		UserAgent:       opts.UserAgent,
		Retries:         opts.Retries,
		MinBackoff:      opts.MinBackoff,
		MaxBackoff:      opts.MaxBackoff,
		RequestTimeout:  opts.RequestTimeout,
		DownloadTimeout: opts.DownloadTimeout,
		IdleTimeout:     opts.IdleTimeout,
	})
	return &Network{base: u, opts: opts, c: c, docs: map[string]*mirrorjson.Version{}}, nil
}

// String returns the mirror's base URL.
func (n *Network) String() string { return n.base.String() }

func (n *Network) providerURL(addr tfaddr.Provider, file string) *url.URL {
	rel := &url.URL{Path: addr.Hostname.String() + "/" + addr.Namespace + "/" + addr.Type + "/" + file}
	return n.base.ResolveReference(rel)
}

func (n *Network) errorf(pkg source.Package, sentinel error, format string, args ...any) error {
	return &source.Error{Source: n.String(), Package: pkg, Err: fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, args...))}
}

// request checks that u uses https and returns the request for it, with the
// mirror's token when u is on the mirror's own host.
func (n *Network) request(pkg source.Package, u *url.URL, limit int64) (httpx.Request, error) {
	if u.Scheme != "https" {
		return httpx.Request{}, &source.Error{Source: n.String(), Package: pkg, Err: fmt.Errorf("refusing to fetch %s: a network mirror must use https", redact(u))}
	}
	r := httpx.Request{URL: u, MaxBytes: limit}
	if n.opts.Token != nil && u.Host == n.base.Host {
		r.Token = n.opts.Token(u.Hostname())
	}
	return r, nil
}

// fail gives an error of the HTTP layer the package's context, typed as
// OpenTofu's network mirror source types it: a 404 wraps notFound (a
// [*source.PlatformNotSupportedError] naming the mirror for
// [source.ErrPlatformNotSupported]), a 401 or 403 is a
// [*source.UnauthorizedError], anything else a [*source.QueryFailedError]
// naming the mirror; a cancelled ctx gives a [*source.CanceledError].
func (n *Network) fail(ctx context.Context, pkg source.Package, u *url.URL, notFound error, err error) error {
	if ctx.Err() != nil {
		return source.Canceled(ctx.Err())
	}
	var he *httpx.HTTPError
	if errors.As(err, &he) && he.StatusCode == http.StatusNotFound {
		if p, ok := asProvider(pkg); ok && notFound == source.ErrPlatformNotSupported {
			return &source.Error{Source: n.String(), Package: pkg, Err: &source.PlatformNotSupportedError{Package: p, Mirror: n.String(), Err: err}}
		}
		return n.errorf(pkg, notFound, "GET %s: 404 Not Found", redact(u))
	}
	if errors.Is(err, source.ErrUnauthorized) {
		tok := ""
		if n.opts.Token != nil && u.Host == n.base.Host {
			tok = n.opts.Token(u.Hostname())
		}
		return &source.Error{Source: n.String(), Package: pkg, Err: &source.UnauthorizedError{Host: u.Hostname(), HaveCredentials: tok != "", Err: err}}
	}
	return &source.Error{Source: n.String(), Package: pkg, Err: &source.QueryFailedError{Package: pkg, Mirror: n.String(), Err: err}}
}

// redact drops user information and the query from a URL for messages.
func redact(u *url.URL) string { return httpx.Redact(u) }

func (n *Network) getJSON(ctx context.Context, pkg source.Package, u *url.URL, notFound error, v any) error {
	req, err := n.request(pkg, u, n.opts.MaxJSONSize)
	if err != nil {
		return err
	}
	resp, err := n.c.Get(ctx, req)
	if err != nil {
		return n.fail(ctx, pkg, u, notFound, err)
	}
	if err := json.Unmarshal(resp.Body, v); err != nil {
		return &source.Error{Source: n.String(), Package: pkg, Err: fmt.Errorf("GET %s: invalid response: %v", redact(u), err)}
	}
	return nil
}

func asProvider(pkg source.Package) (source.ProviderPackage, bool) {
	p, ok := pkg.(source.ProviderPackage)
	return p, ok
}

// Versions implements [source.Lister] with index.json. Entries that are not
// strict semantic versions are ignored.
func (n *Network) Versions(ctx context.Context, pkg source.Package) ([]source.Available, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, ok := asProvider(pkg)
	if !ok {
		return nil, n.errorf(pkg, source.ErrNotFound, "a network mirror serves providers only")
	}
	var idx mirrorjson.Index
	if err := n.getJSON(ctx, pkg, n.providerURL(p.Addr, "index.json"), source.ErrNotFound, &idx); err != nil {
		return nil, err
	}
	var out []source.Available
	for s := range idx.Versions {
		v, err := versions.Parse(s)
		if err != nil {
			continue
		}
		out = append(out, source.Available{Version: v})
	}
	if len(out) == 0 {
		return nil, n.errorf(pkg, source.ErrNotFound, "the mirror lists no versions of this provider")
	}
	slices.SortFunc(out, func(a, b source.Available) int { return a.Version.Compare(b.Version) })
	return out, nil
}

// versionDoc fetches (once) the VERSION.json of an exact version. A 404
// from VERSION.json means the mirror has no such version, unless
// index.json is also missing (then the provider is unknown).
func (n *Network) versionDoc(ctx context.Context, p source.ProviderPackage) (*mirrorjson.Version, *url.URL, error) {
	u := n.providerURL(p.Addr, p.Version.String()+".json")
	n.mu.Lock()
	doc, ok := n.docs[u.String()]
	n.mu.Unlock()
	if ok {
		return doc, u, nil
	}
	doc = &mirrorjson.Version{}
	if err := n.getJSON(ctx, p, u, source.ErrVersionNotFound, doc); err != nil {
		if errors.Is(err, source.ErrVersionNotFound) {
			if _, verr := n.Versions(ctx, source.ProviderPackage{Addr: p.Addr}); verr != nil {
				return nil, nil, verr
			}
		}
		return nil, nil, err
	}
	n.mu.Lock()
	n.docs[u.String()] = doc
	n.mu.Unlock()
	return doc, u, nil
}

// Checksums implements [source.ChecksumReporter]. With TrustAllHashes it
// reports every hash the mirror lists for every platform of pkg's version;
// otherwise none.
func (n *Network) Checksums(ctx context.Context, pkg source.Package) ([]hash.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, ok := asProvider(pkg)
	if !ok {
		return nil, n.errorf(pkg, source.ErrNotFound, "a network mirror serves providers only")
	}
	doc, _, err := n.versionDoc(ctx, p)
	if err != nil {
		return nil, err
	}
	if !n.opts.TrustAllHashes {
		return nil, nil
	}
	return n.records(doc), nil
}

func (n *Network) records(doc *mirrorjson.Version) []hash.Record {
	var out []hash.Record
	plats := make([]string, 0, len(doc.Archives))
	for plat := range doc.Archives {
		plats = append(plats, plat)
	}
	slices.Sort(plats)
	for _, plat := range plats {
		if _, err := source.ParsePlatform(plat); err != nil {
			continue
		}
		for _, s := range doc.Archives[plat].Hashes {
			h, err := hash.ParseHash(s)
			if err != nil {
				continue
			}
			// Only reported with TrustAllHashes: a trusted mirror.
			out = append(out, hash.Record{Hash: h, Provenance: hash.Provenance{Mirrors: []string{n.String()}, TrustedMirrors: []string{n.String()}, Platforms: []string{plat}}})
		}
	}
	return out
}

// Fetch implements [source.Fetcher]: it downloads the platform's archive,
// checks it against the hashes the mirror lists, and extracts it into dir
// (or hands it over: see [Network]).
func (n *Network) Fetch(ctx context.Context, pkg source.Package, dir string) (*source.Fetched, error) {
	return n.fetch(ctx, pkg, dir, false)
}

// FetchArchive implements [source.ArchiveFetcher]: an archive the mirror
// lists hashes the caller can check is handed over unextracted (see
// [Network]); any other is extracted as by Fetch.
func (n *Network) FetchArchive(ctx context.Context, pkg source.Package, dir string) (*source.Fetched, error) {
	return n.fetch(ctx, pkg, dir, true)
}

func (n *Network) fetch(ctx context.Context, pkg source.Package, dir string, handOver bool) (*source.Fetched, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, ok := asProvider(pkg)
	if !ok {
		return nil, n.errorf(pkg, source.ErrNotFound, "a network mirror serves providers only")
	}
	doc, docURL, err := n.versionDoc(ctx, p)
	if err != nil {
		return nil, err
	}
	arch, ok := doc.Archives[p.Platform.String()]
	if !ok {
		return nil, &source.Error{Source: n.String(), Package: pkg, Err: &source.PlatformNotSupportedError{Package: p, Mirror: n.String()}}
	}
	ref, err := url.Parse(arch.URL)
	if err != nil || arch.URL == "" {
		return nil, &source.Error{Source: n.String(), Package: pkg, Err: fmt.Errorf("%s: invalid archive URL %q", redact(docURL), arch.URL)}
	}
	archURL := docURL.ResolveReference(ref)

	cleanup, err := fsutil.Prepare(dir)
	if err != nil {
		return nil, &source.Error{Source: n.String(), Package: pkg, Err: err}
	}
	fail := func(err error) (*source.Fetched, error) {
		cleanup()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	if stated, ok := handOverHashes(arch.Hashes); ok && handOver {
		got, err := n.handOver(ctx, p, archURL, dir, stated)
		if err != nil {
			return fail(err)
		}
		if n.opts.TrustAllHashes {
			got.Origin = n.records(doc)
		}
		return got, nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(filepath.Clean(dir)), ".tflock-mirror-*.zip")
	if err != nil {
		return fail(&source.Error{Source: n.String(), Package: pkg, Err: err})
	}
	defer os.Remove(tmp.Name())
	size, zh, err := n.download(ctx, p, archURL, tmp)
	if cerr := tmp.Close(); err == nil && cerr != nil {
		err = &source.Error{Source: n.String(), Package: pkg, Err: cerr}
	}
	if err != nil {
		return fail(err)
	}
	if err := unpack.ExtractZipFile(ctx, tmp.Name(), dir, unpack.Options{Limits: n.opts.Limits}); err != nil {
		return fail(&source.Error{Source: n.String(), Package: pkg, Err: fmt.Errorf("%s: %w", redact(archURL), err)})
	}
	h1, err := hash.H1Dir(dir)
	if err != nil {
		return fail(&source.Error{Source: n.String(), Package: pkg, Err: err})
	}
	if len(arch.Hashes) > 0 && !slices.Contains(arch.Hashes, string(h1)) && !slices.Contains(arch.Hashes, string(zh)) {
		return fail(n.errorf(pkg, source.ErrChecksumMismatch, "the package from %s has hashes %s and %s, none of which the mirror lists (%s)",
			redact(archURL), h1, zh, strings.Join(arch.Hashes, ", ")))
	}
	got := &source.Fetched{
		Package:  pkg,
		Dir:      dir,
		Location: redact(archURL),
		Size:     size,
		Hashes:   []hash.Hash{h1, zh},
	}
	if n.opts.TrustAllHashes {
		got.Origin = n.records(doc)
	}
	return got, nil
}

// handOverHashes reports whether an archive listing hashes may be handed
// over unextracted (FetchArchive), and the hashes the receiver
// must then check: at most one h1: and at most one zh:, every one of which
// must match. A mirror listing more than one of a kind (the hashes of
// several builds, say) is matched by any of them, which the receiver's
// check cannot express: such an archive is extracted here.
func handOverHashes(listed []string) ([]hash.Hash, bool) {
	var stated []hash.Hash
	seen := map[hash.Scheme]bool{}
	for _, l := range listed {
		h, err := hash.ParseHash(l)
		if err != nil || !hash.Computable(h.Scheme()) || seen[h.Scheme()] {
			return nil, false
		}
		seen[h.Scheme()] = true
		stated = append(stated, h)
	}
	return stated, true
}

// handOver downloads the archive at u into dir for the caller to extract
// and hash (FetchArchive), with the hashes the mirror lists for
// it to check. A large archive is handed over while it downloads
// (httpx.Stream), the others once downloaded.
func (n *Network) handOver(ctx context.Context, p source.ProviderPackage, u *url.URL, dir string, stated []hash.Hash) (_ *source.Fetched, err error) {
	req, err := n.request(p, u, n.opts.Limits.MaxBytes)
	if err != nil {
		return nil, err
	}
	f, err := fsutil.ArchiveFile(dir)
	if err != nil {
		return nil, &source.Error{Source: n.String(), Package: p, Err: err}
	}
	got := &source.Fetched{Package: p, Location: redact(u), Hashes: stated, Archive: f.Name(), Limits: n.opts.Limits}
	dctx, stop := context.WithCancel(ctx)
	st := n.c.StartDownload(dctx, req, httpx.FileSpool(f), nil, nil, httpx.TailBytes, httpx.StreamMin)
	if size, ok := st.Size(); ok {
		got.Size, got.Pending = size, st.Pending(f, stop, nil)
		return got, nil
	}
	size, err := st.Wait()
	stop()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return nil, n.fail(ctx, p, u, source.ErrPlatformNotSupported, err)
	}
	got.Size = size
	return got, nil
}

// download writes the archive at u to f and returns its size and its zh:,
// digested as the bytes arrive (an attempt that is retried starts the
// digest again).
func (n *Network) download(ctx context.Context, p source.ProviderPackage, u *url.URL, f *os.File) (int64, hash.Hash, error) {
	req, err := n.request(p, u, n.opts.Limits.MaxBytes)
	if err != nil {
		return 0, "", err
	}
	digest := sha256.New()
	size, err := n.c.Download(ctx, req, f, digest, digest.Reset)
	if err != nil {
		return 0, "", n.fail(ctx, p, u, source.ErrPlatformNotSupported, err)
	}
	var sum [sha256.Size]byte
	digest.Sum(sum[:0])
	return size, hash.NewHash(hash.SchemeZH, sum), nil
}
