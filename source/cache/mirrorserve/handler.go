package mirrorserve

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
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
	"sync/atomic"
	"time"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/internal/provaddr"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/internal/flight"
	"github.com/tflock/tflock/source/internal/mirrorjson"
)

// Options configure a [Handler].
type Options struct {
	// Source lists provider versions and fetches the packages the archive
	// directory does not hold: source/assemble's NewSources(...).Source
	// gives the CLI configuration's installation methods. A source that
	// is also a [source.ChecksumReporter] (a registry) gives the hashes
	// VERSION.json lists and every archive is checked against. Required.
	Source source.Source
	// Cache is the package cache every archive is put through (verified,
	// extracted, written through to its remote tier). Required.
	Cache *cache.Cache
	// Dir is the archive directory: the archives served, in the packed
	// layout of a filesystem mirror (HOST/NAMESPACE/TYPE/
	// terraform-provider-TYPE_VERSION_OS_ARCH.zip). Created if missing;
	// what a killed run left in it (".tflock-tmp-*", an hour old) is
	// removed by New. Required.
	Dir string
	// Remote, when set, is asked for an archive before the origin: give
	// the remote tier of Cache (cache.Options.Remote), so that a package
	// is downloaded from its origin once per fleet. What it returns is
	// checked like an origin download.
	Remote cache.Remote
	// ListTTL is how long a version list or a release's checksums are
	// kept in memory before the origin is asked again. Zero means one
	// minute; a negative value keeps nothing.
	ListTTL time.Duration
	// Events receives the sources' and the cache's events of the requests
	// (source.WithEvents on each request's context); may be nil.
	Events source.Events
	// Token, when set, is required of every request: as a bearer token
	// (tofu and terraform send the CLI configuration's credentials for
	// the mirror's host, see [ToolConfigOptions.Token]) or, for an
	// archive, as the "token" query parameter, which the archive URLs of
	// VERSION.json carry (tofu sends no credentials with a package
	// download). Without it, any process of the machine that can reach
	// the port gets every package the sources can fetch with the user's
	// credentials. [NewToken] makes one.
	Token string
}

// NewToken returns a new random token for [Options.Token].
func NewToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// Stats counts what a [Handler] did.
type Stats struct {
	// Fetched is the number of archives brought from the origin or the
	// remote tier (misses of the archive directory).
	Fetched int64
	// Served is the number of archives served (GET requests; terraform
	// also asks with HEAD first).
	Served int64
}

// Handler serves the Provider Network Mirror Protocol over a cache. It is
// safe for concurrent use.
type Handler struct {
	o       Options
	fetched atomic.Int64
	served  atomic.Int64

	archives flight.Group[string, struct{}] // one check or download of an archive at a time
	lists    flight.Group[string, *listed]
	mu       sync.Mutex
	verified map[string]fileStamp // archives checked since they were last seen
}

type listed struct {
	versions []source.Available
	records  []hash.Record
}

type fileStamp struct {
	size int64
	mod  time.Time
	h1   hash.Hash // the h1: of the archive's files
}

// New returns a Handler, or an error naming the option missing.
func New(opts Options) (*Handler, error) {
	switch {
	case opts.Source == nil:
		return nil, errors.New("mirrorserve: Options.Source is required")
	case opts.Cache == nil:
		return nil, errors.New("mirrorserve: Options.Cache is required")
	case opts.Dir == "":
		return nil, errors.New("mirrorserve: Options.Dir is required")
	}
	if opts.ListTTL == 0 {
		opts.ListTTL = time.Minute
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("mirrorserve: %w", err)
	}
	sweep(opts.Dir)
	h := &Handler{o: opts, verified: map[string]fileStamp{}}
	// A list is kept ListTTL (a negative one keeps nothing), an error not
	// at all; both are shared with the requests waiting for them, which
	// the cancellation of the first does not fail (see list). Nothing of
	// an archive's check is kept here but in verified.
	h.lists.Lifetime, h.lists.NoMemory = opts.ListTTL, opts.ListTTL < 0
	h.archives.NoMemory = true
	return h, nil
}

// Stats returns what the handler did so far.
func (h *Handler) Stats() Stats {
	return Stats{Fetched: h.fetched.Load(), Served: h.served.Load()}
}

// ServeHTTP implements http.Handler for GET and HEAD requests of the paths
// of the Provider Network Mirror Protocol, relative to the handler's root
// (mount it with http.StripPrefix under a prefix).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if !h.authorized(r) {
		w.Header().Set("WWW-Authenticate", "Bearer")
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	ctx := r.Context()
	if h.o.Events != nil {
		ctx = source.WithEvents(ctx, h.o.Events)
	}
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if len(parts) != 4 {
		http.NotFound(w, r)
		return
	}
	addr, err := provaddr.Parse(parts[0]+"/"+parts[1]+"/"+parts[2], "")
	if err != nil || parts[0] != addr.Hostname.String() || parts[1] != addr.Namespace || parts[2] != addr.Type {
		// Only the canonical spelling, which is also the archive
		// directory's: one package, one path.
		http.NotFound(w, r)
		return
	}
	name := parts[3]
	switch {
	case name == "index.json":
		h.serveIndex(ctx, w, addr)
	case strings.HasSuffix(name, ".json"):
		v, err := versions.Parse(strings.TrimSuffix(name, ".json"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		h.serveVersion(ctx, w, addr, v)
	case strings.HasSuffix(name, ".zip"):
		pkg, ok := parseArchiveName(addr, name)
		if !ok {
			http.NotFound(w, r)
			return
		}
		h.serveArchive(ctx, w, r, pkg)
	default:
		http.NotFound(w, r)
	}
}

// authorized reports whether r carries the token, when there is one.
func (h *Handler) authorized(r *http.Request) bool {
	if h.o.Token == "" {
		return true
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok && strings.HasSuffix(r.URL.Path, ".zip") {
		got, ok = r.URL.Query().Get("token"), true
	}
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(h.o.Token)) == 1
}

// ArchiveName is the file name of a provider package's archive in a mirror:
// terraform-provider-TYPE_VERSION_OS_ARCH.zip.
func ArchiveName(pkg source.ProviderPackage) string {
	return fmt.Sprintf("terraform-provider-%s_%s_%s.zip", pkg.Addr.Type, pkg.Version, pkg.Platform)
}

// archivePath is pkg's archive in a directory of the packed layout.
func archivePath(dir string, pkg source.ProviderPackage) string {
	return filepath.Join(dir, pkg.Addr.Hostname.String(), pkg.Addr.Namespace, pkg.Addr.Type, ArchiveName(pkg))
}

func parseArchiveName(addr tfaddr.Provider, name string) (source.ProviderPackage, bool) {
	rest, ok := strings.CutPrefix(name, "terraform-provider-"+addr.Type+"_")
	if !ok {
		return source.ProviderPackage{}, false
	}
	rest = strings.TrimSuffix(rest, ".zip")
	f := strings.Split(rest, "_")
	if len(f) < 3 {
		return source.ProviderPackage{}, false
	}
	v, err := versions.Parse(strings.Join(f[:len(f)-2], "_"))
	if err != nil {
		return source.ProviderPackage{}, false
	}
	plat, err := source.ParsePlatform(f[len(f)-2] + "_" + f[len(f)-1])
	if err != nil {
		return source.ProviderPackage{}, false
	}
	pkg := source.ProviderPackage{Addr: addr, Version: v, Platform: plat}
	if ArchiveName(pkg) != name {
		return source.ProviderPackage{}, false
	}
	return pkg, true
}

func (h *Handler) serveIndex(ctx context.Context, w http.ResponseWriter, addr tfaddr.Provider) {
	l, err := h.list(ctx, "versions "+provaddr.String(addr), func(ctx context.Context, l *listed) error {
		vs, err := h.o.Source.Versions(ctx, source.ProviderPackage{Addr: addr})
		l.versions = vs
		return err
	})
	if err != nil {
		h.fail(w, err)
		return
	}
	idx := mirrorjson.Index{Versions: map[string]json.RawMessage{}}
	for _, a := range l.versions {
		idx.Versions[a.Version.String()] = mirrorjson.Empty
	}
	writeJSON(w, idx)
}

func (h *Handler) serveVersion(ctx context.Context, w http.ResponseWriter, addr tfaddr.Provider, v versions.Version) {
	doc, err := h.versionDoc(ctx, addr, v)
	if err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, doc)
}

// versionDoc is the VERSION.json of one release: every platform the origin
// knows, each with the hashes known for it.
func (h *Handler) versionDoc(ctx context.Context, addr tfaddr.Provider, v versions.Version) (mirrorjson.Version, error) {
	l, err := h.list(ctx, "versions "+provaddr.String(addr), func(ctx context.Context, l *listed) error {
		vs, err := h.o.Source.Versions(ctx, source.ProviderPackage{Addr: addr})
		l.versions = vs
		return err
	})
	if err != nil {
		return mirrorjson.Version{}, err
	}
	var avail *source.Available
	for i := range l.versions {
		if l.versions[i].Version.Compare(v) == 0 {
			avail = &l.versions[i]
		}
	}
	if avail == nil {
		return mirrorjson.Version{}, &source.Error{Package: source.ProviderPackage{Addr: addr, Version: v}, Err: source.ErrVersionNotFound}
	}
	recs, err := h.records(ctx, source.ProviderPackage{Addr: addr, Version: v})
	if err != nil {
		return mirrorjson.Version{}, err
	}
	plats := map[string]bool{}
	for _, p := range avail.Platforms {
		plats[p.String()] = true
	}
	for _, rec := range recs {
		for _, p := range rec.Provenance.Platforms {
			plats[p] = true
		}
	}
	doc := mirrorjson.Version{Archives: map[string]mirrorjson.Archive{}}
	for p := range plats {
		plat, err := source.ParsePlatform(p)
		if err != nil {
			continue
		}
		pkg := source.ProviderPackage{Addr: addr, Version: v, Platform: plat}
		hs := platformHashes(recs, p)
		if h1, ok := h.knownH1(ctx, pkg, hs); ok {
			hs = append(hs, h1)
		}
		u := ArchiveName(pkg)
		if h.o.Token != "" {
			u += "?token=" + url.QueryEscape(h.o.Token)
		}
		doc.Archives[p] = mirrorjson.Archive{URL: u, Hashes: hashStrings(hs)}
	}
	return doc, nil
}

// records are the hashes the origin vouches for pkg's release (every
// platform), kept for ListTTL.
func (h *Handler) records(ctx context.Context, pkg source.ProviderPackage) ([]hash.Record, error) {
	cr, ok := h.o.Source.(source.ChecksumReporter)
	if !ok {
		return nil, nil
	}
	l, err := h.list(ctx, "checksums "+source.ProviderPackage{Addr: pkg.Addr, Version: pkg.Version}.String(), func(ctx context.Context, l *listed) error {
		recs, err := cr.Checksums(ctx, source.ProviderPackage{Addr: pkg.Addr, Version: pkg.Version})
		l.records = recs
		return err
	})
	if err != nil {
		return nil, err
	}
	return l.records, nil
}

// platformHashes are the zh: and h1: hashes of recs that belong to plat.
func platformHashes(recs []hash.Record, plat string) []hash.Hash {
	var hs []hash.Hash
	for _, rec := range recs {
		if hash.Computable(rec.Hash.Scheme()) && slices.Contains(rec.Provenance.Platforms, plat) {
			hs = append(hs, rec.Hash)
		}
	}
	return hs
}

func hashStrings(hs []hash.Hash) []string {
	var out []string
	for _, x := range hs {
		out = append(out, x.String())
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// list runs fill once for key among concurrent callers, with ctx's values
// but not its cancellation, and keeps its result for ListTTL (an error is
// not kept).
func (h *Handler) list(ctx context.Context, key string, fill func(context.Context, *listed) error) (*listed, error) {
	return h.lists.Do(ctx, key, func() (*listed, error) {
		l := &listed{}
		// Shared by every request waiting: one that goes away does not
		// fail the others (the sources' own timeouts bound it).
		return l, fill(context.WithoutCancel(ctx), l)
	})
}

func (h *Handler) serveArchive(ctx context.Context, w http.ResponseWriter, r *http.Request, pkg source.ProviderPackage) {
	p, err := h.Archive(ctx, pkg)
	if err != nil {
		h.fail(w, err)
		return
	}
	f, err := os.Open(p)
	if err != nil {
		h.fail(w, err)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		h.fail(w, err)
		return
	}
	if r.Method == http.MethodGet {
		h.served.Add(1)
	}
	w.Header().Set("Content-Type", "application/zip")
	http.ServeContent(w, r, "", st.ModTime(), f)
}

// Archive returns the path of pkg's archive in the archive directory,
// fetching it first on a miss (see the package documentation). An archive
// already there is checked against the origin's checksums the first time
// the handler uses it.
func (h *Handler) Archive(ctx context.Context, pkg source.ProviderPackage) (string, error) {
	p := archivePath(h.o.Dir, pkg)
	for !h.checked(p) {
		// One check or download of p at a time: those waiting for it
		// share its error, or see again once it is done.
		brought := false
		_, err := h.archives.Do(ctx, p, func() (struct{}, error) {
			if h.checked(p) {
				return struct{}{}, nil // by a check that ended meanwhile
			}
			brought = true
			sum, err := h.bring(context.WithoutCancel(ctx), pkg, p)
			if err == nil {
				h.mu.Lock()
				if st, err := os.Stat(p); err == nil {
					h.verified[p] = fileStamp{st.Size(), st.ModTime(), sum.H1}
				}
				h.mu.Unlock()
			}
			return struct{}{}, err
		})
		if err != nil {
			return "", err
		}
		if brought {
			break
		}
	}
	return p, nil
}

// checked reports whether the archive at p is the one the handler
// checked last.
func (h *Handler) checked(p string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	st, err := os.Stat(p)
	return err == nil && h.verified[p].same(st)
}

// bring checks the archive at p, or brings it there.
func (h *Handler) bring(ctx context.Context, pkg source.ProviderPackage, p string) (hash.ZipSum, error) {
	recs, err := h.records(ctx, pkg)
	if err != nil {
		return hash.ZipSum{}, err
	}
	want := platformHashes(recs, pkg.Platform.String())
	if _, err := os.Stat(p); err == nil {
		// Put there by an earlier run (or another process): checked as
		// a download is, then used.
		if sum, err := checkArchive(ctx, h.o.Cache, pkg, p, want, nil); err == nil {
			return sum, nil
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return hash.ZipSum{}, err
		}
	}
	return bringArchive(ctx, bringOptions{Source: h.o.Source, Cache: h.o.Cache, Remote: h.o.Remote}, pkg, want, p, func() { h.fetched.Add(1) })
}

// same reports whether st is the file that was verified.
func (f fileStamp) same(st os.FileInfo) bool {
	return f.h1 != "" && f.size == st.Size() && f.mod.Equal(st.ModTime())
}

// knownH1 is the h1: of pkg's archive when the handler verified it, or the
// cache holds pkg (asked only when the cache has no remote tier: a lookup
// would download from the tier every platform a VERSION.json lists).
func (h *Handler) knownH1(ctx context.Context, pkg source.ProviderPackage, hs []hash.Hash) (hash.Hash, bool) {
	p := archivePath(h.o.Dir, pkg)
	h.mu.Lock()
	f := h.verified[p]
	h.mu.Unlock()
	if f.h1 != "" {
		if st, err := os.Stat(p); err == nil && f.same(st) {
			return f.h1, true
		}
	}
	if h.o.Cache.Tiered() {
		return "", false
	}
	e, ok, err := h.o.Cache.Lookup(ctx, pkg, hs)
	if err != nil || !ok {
		return "", false
	}
	return e.H1, true
}

func (h *Handler) fail(w http.ResponseWriter, err error) {
	status := http.StatusBadGateway
	switch {
	case errors.Is(err, source.ErrNotFound), errors.Is(err, source.ErrVersionNotFound), errors.Is(err, source.ErrPlatformNotSupported):
		status = http.StatusNotFound
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		status = http.StatusServiceUnavailable
	}
	// source errors show no credentials (source.Error redacts them).
	http.Error(w, err.Error(), status)
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(b, '\n'))
}
