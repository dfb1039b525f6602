package registrytest

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/internal/testcert"
)

// Fault makes the server lie, to test that clients notice.
type Fault int

// The faults.
const (
	// NoFault: the server tells the truth.
	NoFault Fault = iota
	// BadSignature: SHA256SUMS signatures are made by another key than the
	// one the download responses list.
	BadSignature
	// TamperedPackage: the zip served differs from the one whose shasum
	// the registry reports and signs.
	TamperedPackage
	// TruncatedBody: package downloads announce their full length but
	// send only half of it, every time.
	TruncatedBody
	// UnsignedZH: the packages field (sent even without
	// [Options.Packages]) lists, for one extra platform, a zh: hash that
	// the signed SHA256SUMS does not contain.
	UnsignedZH
	// WrongH1: the packages field lists a wrong h1: hash for every
	// platform.
	WrongH1
	// TruncatedFirst: the first whole download of each provider package
	// (a request without a Range header) announces its full length but
	// sends only half of it; later ones are whole.
	TruncatedFirst
	// RangeMismatch: a ranged request of a provider package (one with a
	// Range header) gets bytes that differ from the package's: the last
	// byte of the range is changed.
	RangeMismatch
)

// Options configure a [Server]. The zero value serves the fixtures honestly
// on one host, "registry.example.test", without latency.
type Options struct {
	// Hosts are the host names the server answers for. Default
	// ["registry.example.test"].
	Hosts []string
	// Latency delays every response. Default none.
	Latency time.Duration
	// Packages adds OpenTofu 1.12's "packages" field (the hashes and size
	// of every platform's package) to provider download responses.
	Packages bool
	// Token, when set, is the bearer token the registry API (and direct
	// module downloads) require; other requests get 401.
	Token string
	// FailFirst makes the first FailFirst requests to each path answer 503
	// with "Retry-After: 0" (a flaky server). Default 0.
	FailFirst int
	// Fault makes the server lie. Default [NoFault].
	Fault Fault
	// HTTP1 makes the server offer HTTP/1.1 only. Default false: it offers
	// HTTP/2 (as public registries do) and HTTP/1.1, and [Server.Client]
	// speaks HTTP/2, so concurrent requests share one connection.
	HTTP1 bool
	// NoRanges makes file downloads ignore Range headers (a full 200
	// response), as some servers do. Default false: files are served
	// with ranges, as public download hosts serve them.
	NoRanges bool
}

// PackageInfo describes one generated provider package.
type PackageInfo struct {
	Platform string    // "linux_amd64"
	Filename string    // "terraform-provider-TYPE_VERSION_OS_ARCH.zip"
	ZH       hash.Hash // the zip's zh:
	H1       hash.Hash // the contents' h1:, computed with x/mod dirhash
	Size     int64     // the zip's size
}

// Server is a running fake-but-real registry. Close it when done.
type Server struct {
	// URL is the base URL of the listener ("https://127.0.0.1:PORT").
	URL string
	// Hosts are the host names the server answers for; Host is the first.
	Hosts []string
	// Host is the first of Hosts.
	Host string
	// KeyID is the upper-case hex ID of the key that signs SHA256SUMS.
	KeyID string
	// PublicKey is that key, ASCII-armored.
	PublicKey string
	// PartnerKey is the ASCII-armored public key of the "partner" whose
	// trust signature over PublicKey is sent for [Provider.Partner]
	// providers.
	PartnerKey string

	srv       *httptest.Server
	opts      Options
	latency   atomic.Int64
	fault     atomic.Int64
	requests  atomic.Int64
	mu        sync.Mutex
	perPath   map[string]int
	truncated map[string]int       // TruncatedFirst's downloads, by path
	providers map[string]*provider // by "host/ns/type"
	modules   map[string]*module   // by "host/ns/name/system"
	files     map[string][]byte    // by path
	keys      [3]*signer
	trustSig  string
	// bodies caches the JSON bodies of provider API responses, which
	// depend only on the request's host and path and on the fault, by
	// bodyKey: the fixtures do not change once the server has started, so
	// each body is built and encoded once instead of on every request.
	bodies sync.Map
}

// bodyKey identifies a cached response body.
type bodyKey struct {
	host, path string
	fault      Fault
}

type provider struct {
	host, ns, typ string
	fx            Provider
	releases      []*release
}

type release struct {
	version   string
	protocols []string
	platforms []string
	pkgs      map[string]PackageInfo
	sumsName  string
	dir       string // URL path of the release's files, with trailing slash
}

type module struct {
	host, ns, name, sys string
	versions            []*moduleVersion
}

type moduleVersion struct {
	fx      ModuleVersion
	archive string // URL path of the archive, or ""
	h1      hash.Hash
}

// New starts a server for a test and closes it when the test ends. It
// fails the test on error.
func New(tb testing.TB, fx Fixtures, opts Options) *Server {
	tb.Helper()
	s, err := Start(fx, opts)
	if err != nil {
		tb.Fatalf("registrytest: %v", err)
	}
	tb.Cleanup(s.Close)
	return s
}

// Start starts a server. The caller must Close it.
func Start(fx Fixtures, opts Options) (*Server, error) {
	if len(opts.Hosts) == 0 {
		opts.Hosts = []string{"registry.example.test"}
	}
	keys, err := testKeys()
	if err != nil {
		return nil, fmt.Errorf("generating the signing key: %w", err)
	}
	s := &Server{
		Hosts: opts.Hosts, Host: opts.Hosts[0], KeyID: keys[0].keyID, PublicKey: keys[0].armored, PartnerKey: keys[2].armored,
		opts: opts, perPath: map[string]int{}, truncated: map[string]int{}, providers: map[string]*provider{}, modules: map[string]*module{},
		files: map[string][]byte{}, keys: keys,
	}
	if s.trustSig, err = keys[2].armoredSign([]byte(keys[0].armored)); err != nil {
		return nil, err
	}
	s.latency.Store(int64(opts.Latency))
	s.fault.Store(int64(opts.Fault))
	for _, p := range fx.Providers {
		if err := s.addProvider(p); err != nil {
			return nil, err
		}
	}
	for _, m := range fx.Modules {
		if err := s.addModule(m); err != nil {
			return nil, err
		}
	}
	cert, err := testcert.SelfSigned("tflock registrytest", opts.Hosts)
	if err != nil {
		return nil, err
	}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.srv.EnableHTTP2 = !opts.HTTP1
	s.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	if !opts.HTTP1 {
		s.srv.TLS.NextProtos = []string{"h2", "http/1.1"}
	}
	s.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.srv.StartTLS()
	s.URL = s.srv.URL
	return s, nil
}

// Close shuts the server down.
func (s *Server) Close() { s.srv.Close() }

// Client returns an HTTP client that trusts the server's certificate and
// connects every host name to the server. It speaks HTTP/2 unless
// [Options.HTTP1] is set, and keeps up to 64 idle connections per host
// for HTTP/1.1.
func (s *Server) Client() *http.Client {
	return ClientFor(s.srv.Listener.Addr().String(), s.Certificate(), s.opts.HTTP1)
}

// Certificate returns the server's self-signed TLS certificate, which a
// client in another process needs to trust it (see [ClientFor]).
func (s *Server) Certificate() *x509.Certificate { return s.srv.Certificate() }

// ClientFor returns the client [Server.Client] returns, for a server that
// runs elsewhere (in another process, say) and listens on addr
// (host:port) with certificate cert: it trusts cert, connects every host
// name to addr, speaks HTTP/2 unless http1 is set, and keeps up to 64
// idle connections per host for HTTP/1.1.
func ClientFor(addr string, cert *x509.Certificate, http1 bool) *http.Client {
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	var d net.Dialer
	tr := &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		},
		ForceAttemptHTTP2:   !http1,
		MaxIdleConnsPerHost: 64,
	}
	return &http.Client{Transport: tr}
}

// SetLatency changes the delay added to every response.
func (s *Server) SetLatency(d time.Duration) { s.latency.Store(int64(d)) }

// SetFault changes the server's lie.
func (s *Server) SetFault(f Fault) { s.fault.Store(int64(f)) }

// Requests returns the number of requests served so far.
func (s *Server) Requests() int { return int(s.requests.Load()) }

// RequestsTo returns the number of requests for one URL path so far.
func (s *Server) RequestsTo(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.perPath[path]
}

// ProviderPackage describes the generated package of a provider release
// for one platform. addr is written as in [Provider.Addr].
func (s *Server) ProviderPackage(addr, version, platform string) (PackageInfo, bool) {
	p := s.providers[s.qualify(addr, 3)]
	if p == nil {
		return PackageInfo{}, false
	}
	for _, r := range p.releases {
		if r.version == version {
			info, ok := r.pkgs[platform]
			return info, ok
		}
	}
	return PackageInfo{}, false
}

// SHA256SUMS returns the checksum document of a provider release, or nil.
func (s *Server) SHA256SUMS(addr, version string) []byte {
	p := s.providers[s.qualify(addr, 3)]
	if p == nil {
		return nil
	}
	for _, r := range p.releases {
		if r.version == version {
			return s.files[r.dir+r.sumsName]
		}
	}
	return nil
}

// ModuleH1 returns the h1: hash of a module version's files, computed with
// x/mod dirhash over the files that are not version-control metadata
// (hash.IsVCSMetadata), as a module package's h1: is defined.
func (s *Server) ModuleH1(addr, version string) (hash.Hash, bool) {
	m := s.modules[s.qualify(addr, 4)]
	if m == nil {
		return "", false
	}
	for _, v := range m.versions {
		if v.fx.Version == version {
			return v.h1, v.h1 != ""
		}
	}
	return "", false
}

// WithLatency returns a handler that waits d before handing each request
// to h (or gives up when the request is cancelled).
func WithLatency(h http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// qualify prefixes the first host to an address with n-1 parts.
func (s *Server) qualify(addr string, n int) string {
	if strings.Count(addr, "/") == n-2 {
		return s.Host + "/" + addr
	}
	return addr
}

func (s *Server) addProvider(fx Provider) error {
	parts := strings.Split(s.qualify(fx.Addr, 3), "/")
	if len(parts) != 3 {
		return fmt.Errorf("provider address %q: want [HOST/]NAMESPACE/TYPE", fx.Addr)
	}
	p := &provider{host: parts[0], ns: parts[1], typ: parts[2], fx: fx}
	key := strings.Join(parts, "/")
	if s.providers[key] != nil {
		return fmt.Errorf("provider %s listed twice", key)
	}
	s.providers[key] = p
	for _, v := range fx.Versions {
		r := &release{version: v.Version, protocols: v.Protocols, platforms: v.Platforms, pkgs: map[string]PackageInfo{}}
		if len(r.protocols) == 0 {
			r.protocols = []string{"6.0"}
		}
		if len(r.platforms) == 0 {
			r.platforms = []string{"darwin_arm64", "linux_amd64"}
		}
		size := v.Size
		if size <= 0 {
			size = 1024
		}
		r.dir = fmt.Sprintf("/files/providers/%s/%s/%s/%s/", p.host, p.ns, p.typ, v.Version)
		r.sumsName = fmt.Sprintf("terraform-provider-%s_%s_SHA256SUMS", p.typ, v.Version)
		var sums strings.Builder
		plats := slices.Clone(r.platforms)
		slices.Sort(plats)
		for _, plat := range plats {
			data := executable(key, v.Version, plat, size)
			if v.Binary {
				data = binaryExecutable(key, v.Version, plat, size)
			}
			files := []file{{name: "terraform-provider-" + p.typ + "_v" + v.Version, mode: 0o755, data: data}}
			z, err := makeZip(files)
			if err != nil {
				return err
			}
			h, err := h1(files)
			if err != nil {
				return err
			}
			name := fmt.Sprintf("terraform-provider-%s_%s_%s.zip", p.typ, v.Version, plat)
			info := PackageInfo{Platform: plat, Filename: name, ZH: zh(z), H1: h, Size: int64(len(z))}
			r.pkgs[plat] = info
			s.files[r.dir+name] = z
			fmt.Fprintf(&sums, "%s  %s\n", info.ZH.Value(), name)
		}
		doc := []byte(sums.String())
		s.files[r.dir+r.sumsName] = doc
		sig, err := s.keys[0].sign(doc)
		if err != nil {
			return err
		}
		bad, err := s.keys[1].sign(doc)
		if err != nil {
			return err
		}
		s.files[r.dir+r.sumsName+".sig"] = sig
		s.files[r.dir+r.sumsName+".badsig"] = bad
		p.releases = append(p.releases, r)
	}
	return nil
}

func (s *Server) addModule(fx Module) error {
	parts := strings.Split(s.qualify(fx.Addr, 4), "/")
	if len(parts) != 4 {
		return fmt.Errorf("module address %q: want [HOST/]NAMESPACE/NAME/SYSTEM", fx.Addr)
	}
	m := &module{host: parts[0], ns: parts[1], name: parts[2], sys: parts[3]}
	key := strings.Join(parts, "/")
	if s.modules[key] != nil {
		return fmt.Errorf("module %s listed twice", key)
	}
	s.modules[key] = m
	for _, v := range fx.Versions {
		mv := &moduleVersion{fx: v}
		m.versions = append(m.versions, mv)
		if v.Location != "" {
			continue
		}
		contents := v.Files
		if contents == nil {
			contents = map[string]string{"main.tf": fmt.Sprintf("# %s %s\n", key, v.Version)}
		}
		names := make([]string, 0, len(contents))
		for n := range contents {
			names = append(names, n)
		}
		sort.Strings(names)
		var files []file
		for _, n := range names {
			files = append(files, file{name: n, mode: 0o644, data: []byte(contents[n])})
		}
		// A module's h1: leaves out version-control metadata, as every
		// module source installs it.
		var hashed []file
		for _, f := range files {
			if !hash.IsVCSMetadata(f.name) {
				hashed = append(hashed, f)
			}
		}
		h, err := h1(hashed)
		if err != nil {
			return err
		}
		mv.h1 = h
		var data []byte
		base := fmt.Sprintf("/files/modules/%s/%s/%s/%s/%s", m.host, m.ns, m.name, m.sys, v.Version)
		if v.Delivery == DeliverJSON {
			mv.archive = base + ".tar.gz"
			data, err = makeTarGz(files)
		} else {
			mv.archive = base + ".zip"
			data, err = makeZip(files)
		}
		if err != nil {
			return err
		}
		s.files[mv.archive] = data
	}
	return nil
}

// host returns the host name a request was sent to, mapping the
// listener's own address to the first host.
func (s *Server) host(r *http.Request) string {
	h := r.Host
	if hh, _, err := net.SplitHostPort(h); err == nil {
		h = hh
	}
	if slices.Contains(s.Hosts, h) {
		return h
	}
	if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
		return s.Host
	}
	return ""
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeBody(w, b)
}

// writeBody sends a JSON body.
func writeBody(w http.ResponseWriter, b []byte) {
	w.Header()["Content-Type"] = []string{"application/json"}
	w.Header()["Content-Length"] = []string{strconv.Itoa(len(b))}
	_, _ = w.Write(b)
}

func (s *Server) authorized(r *http.Request) bool {
	return s.opts.Token == "" || r.Header.Get("Authorization") == "Bearer "+s.opts.Token
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	s.mu.Lock()
	s.perPath[r.URL.Path]++
	n := s.perPath[r.URL.Path]
	s.mu.Unlock()
	if d := time.Duration(s.latency.Load()); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	if n <= s.opts.FailFirst {
		w.Header().Set("Retry-After", "0")
		http.Error(w, "try again", http.StatusServiceUnavailable)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	host := s.host(r)
	if host == "" {
		http.Error(w, "unknown host "+r.Host, http.StatusNotFound)
		return
	}
	p := r.URL.Path
	switch {
	case p == "/.well-known/terraform.json":
		writeJSON(w, map[string]any{
			"providers.v1": "/v1/providers/",
			"modules.v1":   "https://" + r.Host + "/v1/modules/",
		})
	case strings.HasPrefix(p, "/v1/providers/"):
		if !s.authorized(r) {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		key := bodyKey{host: r.Host, path: p, fault: Fault(s.fault.Load())}
		if b, ok := s.bodies.Load(key); ok {
			writeBody(w, b.([]byte))
			return
		}
		s.serveProviders(w, r, host, strings.Split(strings.TrimPrefix(p, "/v1/providers/"), "/"), key)
	case strings.HasPrefix(p, "/v1/modules/"):
		if !s.authorized(r) {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		s.serveModules(w, r, host, strings.Split(strings.TrimPrefix(p, "/v1/modules/"), "/"))
	case strings.HasPrefix(p, "/files/"):
		s.serveFile(w, r, p)
	default:
		http.NotFound(w, r)
	}
}

type platformJSON struct {
	OS   string `json:"os"`
	Arch string `json:"arch"`
}

func splitPlatform(p string) platformJSON {
	os, arch, _ := strings.Cut(p, "_")
	return platformJSON{os, arch}
}

func (s *Server) versionsJSON(p *provider) []map[string]any {
	var out []map[string]any
	for _, r := range p.releases {
		var plats []platformJSON
		for _, pl := range r.platforms {
			plats = append(plats, splitPlatform(pl))
		}
		out = append(out, map[string]any{"version": r.version, "protocols": r.protocols, "platforms": plats})
	}
	return out
}

// writeCachedJSON encodes v, remembers the body under key and sends it.
func (s *Server) writeCachedJSON(w http.ResponseWriter, key bodyKey, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	s.bodies.Store(key, b)
	writeBody(w, b)
}

func (s *Server) serveProviders(w http.ResponseWriter, r *http.Request, host string, parts []string, key bodyKey) {
	switch {
	case len(parts) == 3 && parts[0] == "-" && parts[2] == "versions":
		// Legacy lookup: the provider of this type on this host, preferring
		// the "hashicorp" namespace as the public registry does.
		var found []*provider
		for _, p := range s.providers {
			if p.host == host && p.typ == parts[1] {
				found = append(found, p)
			}
		}
		if len(found) == 0 {
			http.NotFound(w, r)
			return
		}
		sort.Slice(found, func(i, j int) bool {
			return (found[i].ns == "hashicorp") && found[j].ns != "hashicorp" || found[i].ns < found[j].ns && (found[i].ns == "hashicorp") == (found[j].ns == "hashicorp")
		})
		p := found[0]
		body := map[string]any{"id": p.ns + "/" + p.typ, "versions": s.versionsJSON(p)}
		if p.fx.MovedTo != "" {
			body["moved_to"] = p.fx.MovedTo
		}
		s.writeCachedJSON(w, key, body)
	case len(parts) == 3 && parts[2] == "versions":
		p := s.providers[host+"/"+parts[0]+"/"+parts[1]]
		if p == nil {
			http.NotFound(w, r)
			return
		}
		s.writeCachedJSON(w, key, map[string]any{"versions": s.versionsJSON(p)})
	case len(parts) == 6 && parts[3] == "download":
		p := s.providers[host+"/"+parts[0]+"/"+parts[1]]
		if p == nil {
			http.NotFound(w, r)
			return
		}
		for _, rel := range p.releases {
			if rel.version == parts[2] {
				s.serveDownload(w, r, p, rel, parts[4]+"_"+parts[5], key)
				return
			}
		}
		http.NotFound(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) serveDownload(w http.ResponseWriter, r *http.Request, p *provider, rel *release, plat string, key bodyKey) {
	info, ok := rel.pkgs[plat]
	if !ok {
		http.NotFound(w, r)
		return
	}
	pl := splitPlatform(plat)
	keys := []map[string]string{}
	sig := rel.dir + rel.sumsName + ".sig"
	if !p.fx.Unsigned {
		k := map[string]string{"key_id": s.KeyID, "ascii_armor": s.PublicKey}
		if p.fx.Partner {
			k["trust_signature"] = s.trustSig
		}
		keys = append(keys, k)
	}
	body := map[string]any{
		"protocols":             rel.protocols,
		"os":                    pl.OS,
		"arch":                  pl.Arch,
		"filename":              info.Filename,
		"download_url":          "https://" + r.Host + rel.dir + info.Filename,
		"shasums_url":           rel.dir + rel.sumsName,
		"shasums_signature_url": sig,
		"shasum":                info.ZH.Value(),
		"signing_keys":          map[string]any{"gpg_public_keys": keys},
	}
	fault := key.fault
	if s.opts.Packages || fault == UnsignedZH || fault == WrongH1 {
		pkgs := map[string]any{}
		for name, in := range rel.pkgs {
			h := in.H1
			if fault == WrongH1 {
				h = hash.NewHash(hash.SchemeH1, [32]byte{1})
			}
			pkgs[name] = map[string]any{"hashes": []string{string(h), string(in.ZH)}, "package_size": in.Size}
		}
		if fault == UnsignedZH {
			pkgs["plan9_amd64"] = map[string]any{"hashes": []string{string(hash.NewHash(hash.SchemeZH, [32]byte{2}))}, "package_size": 1}
		}
		body["packages"] = pkgs
	}
	s.writeCachedJSON(w, key, body)
}

func (s *Server) serveModules(w http.ResponseWriter, r *http.Request, host string, parts []string) {
	if len(parts) < 4 {
		http.NotFound(w, r)
		return
	}
	m := s.modules[host+"/"+strings.Join(parts[:3], "/")]
	if m == nil {
		http.NotFound(w, r)
		return
	}
	switch {
	case len(parts) == 4 && parts[3] == "versions":
		var vs []map[string]string
		for _, v := range m.versions {
			vs = append(vs, map[string]string{"version": v.fx.Version})
		}
		writeJSON(w, map[string]any{"modules": []any{map[string]any{"versions": vs}}})
	case len(parts) == 5 && parts[4] == "download":
		for _, v := range m.versions {
			if v.fx.Version != parts[3] {
				continue
			}
			loc := v.fx.Location
			if loc == "" {
				loc = v.archive
			}
			switch v.fx.Delivery {
			case DeliverHeader:
				if v.fx.Subdir != "" {
					loc += "//" + v.fx.Subdir
				}
				w.Header().Set("X-Terraform-Get", loc)
				w.WriteHeader(http.StatusNoContent)
			case DeliverDirect:
				if v.fx.Location == "" {
					loc = "https://" + r.Host + loc
				}
				writeJSON(w, map[string]any{"location": loc, "use_registry_credentials": true})
			default:
				if v.fx.Location == "" {
					loc = "https://" + r.Host + loc
				}
				writeJSON(w, map[string]any{"location": loc})
			}
			return
		}
		http.NotFound(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) serveFile(w http.ResponseWriter, r *http.Request, p string) {
	data, ok := s.files[p]
	if !ok || strings.HasSuffix(p, ".badsig") {
		http.NotFound(w, r)
		return
	}
	if strings.HasPrefix(p, "/files/modules/") && strings.HasSuffix(p, ".zip") && !s.authorized(r) {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	isPkg := strings.HasPrefix(p, "/files/providers/") && strings.HasSuffix(p, ".zip")
	switch Fault(s.fault.Load()) {
	case TamperedPackage:
		if isPkg {
			data = append(slices.Clone(data), 0)
		}
	case TruncatedBody:
		if isPkg {
			sendHalf(w, data)
		}
	case TruncatedFirst:
		if isPkg && r.Header.Get("Range") == "" {
			s.mu.Lock()
			first := s.truncated[p] == 0
			s.truncated[p]++
			s.mu.Unlock()
			if first {
				sendHalf(w, data)
			}
		}
	case BadSignature:
		if strings.HasSuffix(p, ".sig") {
			data = s.files[strings.TrimSuffix(p, ".sig")+".badsig"]
		}
	}
	if s.opts.NoRanges {
		r.Header.Del("Range")
	} else if isPkg && r.Header.Get("Range") != "" && Fault(s.fault.Load()) == RangeMismatch {
		data = slices.Clone(data)
		if from, to, ok := oneRange(r.Header.Get("Range"), len(data)); ok && to > from {
			data[to-1] ^= 0xff
		}
	}
	// The standard library's file server: ranges, Content-Length,
	// conditional requests, as a real download host answers.
	http.ServeContent(w, r, path.Base(p), time.Time{}, bytes.NewReader(data))
}

// sendHalf announces data's whole length, sends half of it and drops the
// connection: a body cut short.
func sendHalf(w http.ResponseWriter, data []byte) {
	w.Header().Set("Content-Length", fmt.Sprint(len(data)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data[:len(data)/2])
	if rc := http.NewResponseController(w); rc != nil {
		_ = rc.Flush()
	}
	panic(http.ErrAbortHandler)
}

// oneRange parses a Range header asking for one range "bytes=A-B" of a
// file of n bytes, returning [A, B+1).
func oneRange(h string, n int) (from, to int, ok bool) {
	a, b, ok := strings.Cut(strings.TrimPrefix(h, "bytes="), "-")
	if !ok {
		return 0, 0, false
	}
	x, err1 := strconv.Atoi(a)
	y, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || x > y || y >= n {
		return 0, 0, false
	}
	return x, y + 1, true
}
