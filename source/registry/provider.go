package registry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/url"
	"os"
	"path"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	tfhash "github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/internal/archive"
	"github.com/tflock/tflock/source/internal/display"
	"github.com/tflock/tflock/source/internal/fsutil"
	"github.com/tflock/tflock/source/internal/httpx"
)

// providerVersionsResponse is the body of GET :namespace/:type/versions.
// ID and MovedTo are only sent for the legacy "-" namespace lookup.
type providerVersionsResponse struct {
	ID       string         `json:"id"`
	MovedTo  string         `json:"moved_to"`
	Versions []versionEntry `json:"versions"`
	Warnings []string       `json:"warnings"`
}

type versionEntry struct {
	Version   string   `json:"version"`
	Protocols []string `json:"protocols"`
	Platforms []struct {
		OS   string `json:"os"`
		Arch string `json:"arch"`
	} `json:"platforms"`
}

// downloadResponse is the body of GET
// :namespace/:type/:version/download/:os/:arch.
type downloadResponse struct {
	Protocols           []string `json:"protocols"`
	OS                  string   `json:"os"`
	Arch                string   `json:"arch"`
	Filename            string   `json:"filename"`
	DownloadURL         string   `json:"download_url"`
	SHASumsURL          string   `json:"shasums_url"`
	SHASumsSignatureURL string   `json:"shasums_signature_url"`
	SHASum              string   `json:"shasum"`
	SigningKeys         struct {
		GPGPublicKeys []struct {
			KeyID          string `json:"key_id"`
			ASCIIArmor     string `json:"ascii_armor"`
			TrustSignature string `json:"trust_signature"`
		} `json:"gpg_public_keys"`
	} `json:"signing_keys"`
	// Packages is OpenTofu 1.12's extension: the hashes and archive size of
	// every platform's package, by platform ("linux_amd64").
	Packages map[string]struct {
		Hashes      []string `json:"hashes"`
		PackageSize int64    `json:"package_size"`
	} `json:"packages"`
}

// ErrProtocolNotSupported is matched by the error for a provider release
// that speaks none of the plugin protocols OpenTofu and Terraform support
// (major versions 5 and 6), a [*source.ProtocolNotSupportedError]. It is
// [source.ErrProtocolNotSupported].
var ErrProtocolNotSupported = source.ErrProtocolNotSupported

func supportedProtocol(p string) bool {
	major, _, _ := strings.Cut(p, ".")
	return major == "5" || major == "6"
}

// downloadMeta is a checked download response with its URLs resolved.
type downloadMeta struct {
	resp        downloadResponse
	metaURL     *url.URL // where resp came from, after redirects
	platform    source.Platform
	downloadURL *url.URL
	sumsURL     *url.URL
	sigURL      *url.URL
	shasum      tfhash.Hash
	packages    map[source.Platform]platformData
}

type platformData struct {
	hashes []tfhash.Hash
	size   int64
}

func (s *Source) errorFor(pkg source.Package, host string, err error) error {
	var se *source.Error
	if errors.As(err, &se) {
		return err
	}
	return &source.Error{Source: host, Package: pkg, Err: source.Canceled(err)}
}

// providerService returns the providers.v1 base URL for addr's host and the
// token to send there. A host that offers no provider registry gives a
// [*source.HostNoProvidersError], one whose discovery fails a
// [*source.HostUnreachableError].
func (s *Source) providerService(ctx context.Context, addr tfaddr.Provider) (*url.URL, string, error) {
	host := addr.Hostname.String()
	base, err := s.d.serviceURL(ctx, host, ServiceProviders)
	switch {
	case err == nil:
	case errors.Is(err, context.Canceled):
		return nil, "", source.Canceled(err)
	case errors.Is(err, ErrNoService):
		return nil, "", &source.HostNoProvidersError{Host: display.Host(addr.Hostname), HasOtherVersion: s.d.offersOther(ctx, host, ServiceProviders), Err: err}
	default:
		return nil, "", &source.HostUnreachableError{Host: display.Host(addr.Hostname), Err: err}
	}
	tok, _ := s.o.Credentials.Token(host)
	return base, tok, nil
}

// invalidResponse is the error for a registry answer that does not parse
// or breaks the protocol: a failed query, as OpenTofu types it.
func invalidResponse(addr tfaddr.Provider, format string, args ...any) error {
	return &source.QueryFailedError{Package: source.ProviderPackage{Addr: addr}, Err: fmt.Errorf(format, args...)}
}

// queryError is the error of a failed provider registry query that did
// not answer 404 (which each query tells apart itself): cancelled,
// unauthorized, or failed, as OpenTofu tells them apart.
func queryError(addr tfaddr.Provider, tok string, err error) error {
	switch {
	case errors.Is(err, context.Canceled):
		return source.Canceled(err)
	case errors.Is(err, source.ErrUnauthorized):
		return &source.UnauthorizedError{Host: display.Host(addr.Hostname), HaveCredentials: tok != "", Err: err}
	}
	return &source.QueryFailedError{Package: source.ProviderPackage{Addr: addr}, Err: err}
}

func (s *Source) providerVersions(ctx context.Context, p source.ProviderPackage) ([]source.Available, error) {
	addr, err := s.ResolveProvider(ctx, p.Addr)
	if err != nil {
		return nil, err
	}
	p.Addr = addr
	host := display.Host(addr.Hostname)
	body, err := s.getProviderVersions(ctx, addr)
	if err != nil {
		return nil, s.errorFor(p, host, err)
	}
	for _, w := range body.Warnings {
		s.warn(ctx, p, fmt.Sprintf("%s: the registry says: %s", addr.ForDisplay(), w))
	}
	out := make([]source.Available, 0, len(body.Versions))
	seen := make(map[versions.Version]bool, len(body.Versions))
	for _, v := range body.Versions {
		ver, err := versions.Parse(v.Version)
		if err != nil {
			s.warn(ctx, p, fmt.Sprintf("%s: ignoring invalid version %q listed by the registry", addr.ForDisplay(), v.Version))
			continue
		}
		if seen[ver] {
			continue
		}
		seen[ver] = true
		a := source.Available{Version: ver, Protocols: v.Protocols}
		// Sorted by name ("darwin_arm64" < "linux_amd64"), each name
		// built and parsed once.
		type named struct {
			name string
			plat source.Platform
		}
		plats := make([]named, 0, len(v.Platforms))
		for _, pl := range v.Platforms {
			name := pl.OS + "_" + pl.Arch
			if plat, err := source.ParsePlatform(name); err == nil {
				plats = append(plats, named{name, plat})
			}
		}
		slices.SortFunc(plats, func(x, y named) int { return strings.Compare(x.name, y.name) })
		for _, p := range plats {
			a.Platforms = append(a.Platforms, p.plat)
		}
		out = append(out, a)
	}
	slices.SortStableFunc(out, func(x, y source.Available) int { return x.Version.Compare(y.Version) })
	return out, nil
}

func (s *Source) getProviderVersions(ctx context.Context, addr tfaddr.Provider) (*providerVersionsResponse, error) {
	base, tok, err := s.providerService(ctx, addr)
	if err != nil {
		return nil, err
	}
	u := base.ResolveReference(&url.URL{Path: path.Join(addr.Namespace, addr.Type, "versions")})
	resp, err := s.c.get(ctx, request{url: u, token: tok})
	if errors.Is(err, source.ErrNotFound) {
		return nil, &source.RegistryNotKnownError{Package: source.ProviderPackage{Addr: addr}, Host: display.Host(addr.Hostname), Err: err}
	}
	if err != nil {
		return nil, queryError(addr, tok, err)
	}
	var body providerVersionsResponse
	if err := json.Unmarshal(resp.body, &body); err != nil {
		return nil, invalidResponse(addr, "invalid response from %s: %v", redact(u), err)
	}
	return &body, nil
}

// metaTTL is how long a download response is reused. Registries may
// answer with pre-signed download URLs that expire, so the memo is short.
const metaTTL = 5 * time.Minute

type metaKey struct {
	addr     tfaddr.Provider
	version  string
	platform source.Platform
}

// downloadMeta returns the download metadata of one platform, asking the
// registry once per (provider, version, platform) and Source: Checksums
// then Fetch of the same package (a lock run's download mode) make one
// request. Concurrent callers share the request; failures are not kept,
// successes for metaTTL.
func (s *Source) downloadMeta(ctx context.Context, addr tfaddr.Provider, v versions.Version, plat source.Platform) (*downloadMeta, error) {
	key := metaKey{addr: addr, version: v.String(), platform: plat}
	return s.metas.Do(ctx, key, func() (*downloadMeta, error) { return s.fetchDownloadMeta(ctx, addr, v, plat) })
}

// fetchDownloadMeta asks for the download metadata of one platform.
func (s *Source) fetchDownloadMeta(ctx context.Context, addr tfaddr.Provider, v versions.Version, plat source.Platform) (*downloadMeta, error) {
	base, tok, err := s.providerService(ctx, addr)
	if err != nil {
		return nil, err
	}
	u := base.ResolveReference(&url.URL{Path: path.Join(addr.Namespace, addr.Type, v.String(), "download", plat.OS, plat.Arch)})
	resp, err := s.c.get(ctx, request{url: u, token: tok})
	if errors.Is(err, source.ErrNotFound) {
		// Tell a missing version from a missing platform.
		list, lerr := s.getProviderVersions(ctx, addr)
		if errors.Is(lerr, source.ErrNotFound) {
			return nil, lerr
		}
		if lerr == nil && !slices.ContainsFunc(list.Versions, func(x versionEntry) bool {
			return x.Version == v.String()
		}) {
			return nil, fmt.Errorf("%w: %v", source.ErrVersionNotFound, err)
		}
		return nil, &source.PlatformNotSupportedError{Package: source.ProviderPackage{Addr: addr, Version: v, Platform: plat}, Err: err}
	}
	if err != nil {
		return nil, queryError(addr, tok, err)
	}
	m := &downloadMeta{platform: plat, metaURL: resp.url}
	if err := json.Unmarshal(resp.body, &m.resp); err != nil {
		return nil, invalidResponse(addr, "invalid response from %s: %v", redact(u), err)
	}
	r := &m.resp
	if r.OS != plat.OS || r.Arch != plat.Arch {
		return nil, invalidResponse(addr, "invalid response from %s: it describes the %s_%s package, not %s", redact(u), r.OS, r.Arch, plat)
	}
	if r.Filename == "" || strings.ContainsAny(r.Filename, "/\\") {
		return nil, invalidResponse(addr, "invalid response from %s: invalid filename %q", redact(u), r.Filename)
	}
	for _, f := range []struct {
		name string
		raw  string
		dst  **url.URL
	}{{"download_url", r.DownloadURL, &m.downloadURL}, {"shasums_url", r.SHASumsURL, &m.sumsURL}, {"shasums_signature_url", r.SHASumsSignatureURL, &m.sigURL}} {
		ref, err := url.Parse(f.raw)
		if err != nil || f.raw == "" {
			return nil, invalidResponse(addr, "invalid response from %s: invalid %s", redact(u), f.name)
		}
		abs := resp.url.ResolveReference(ref)
		if abs.Scheme != "https" && abs.Scheme != "http" {
			return nil, invalidResponse(addr, "invalid response from %s: %s must use http or https", redact(u), f.name)
		}
		*f.dst = abs
	}
	if len(r.Protocols) > 0 && !slices.ContainsFunc(r.Protocols, supportedProtocol) {
		return nil, &source.ProtocolNotSupportedError{
			Package:    source.ProviderPackage{Addr: addr, Version: v, Platform: plat},
			Protocols:  slices.Clone(r.Protocols),
			Suggestion: s.protocolSuggestion(ctx, addr),
		}
	}
	sum, err := hex.DecodeString(r.SHASum)
	if err != nil || len(sum) != sha256.Size {
		return nil, invalidResponse(addr, "invalid response from %s: invalid shasum %q", redact(u), r.SHASum)
	}
	m.shasum = tfhash.Hash(string(tfhash.SchemeZH) + strings.ToLower(r.SHASum))
	if len(r.Packages) > 0 {
		m.packages = make(map[source.Platform]platformData, len(r.Packages))
		for ps, pd := range r.Packages {
			pl, err := source.ParsePlatform(ps)
			if err != nil {
				return nil, invalidResponse(addr, "invalid response from %s: packages: %v", redact(u), err)
			}
			d := platformData{size: pd.PackageSize}
			for _, raw := range pd.Hashes {
				h, err := tfhash.ParseHash(raw)
				if err != nil {
					return nil, invalidResponse(addr, "invalid response from %s: packages: %v", redact(u), err)
				}
				d.hashes = append(d.hashes, h)
			}
			m.packages[pl] = d
		}
	}
	return m, nil
}

func (m *downloadMeta) armoredKeys() []string {
	var keys []string
	for _, k := range m.resp.SigningKeys.GPGPublicKeys {
		keys = append(keys, k.ASCIIArmor)
	}
	return keys
}

// release is a release's verified SHA256SUMS.
type release struct {
	sums     Sums
	keyID    string // "" when the policy accepted the release unsigned
	signer   Signer
	warnings []string // given when it was verified, returned with each fetch
}

type releaseKey struct {
	addr    tfaddr.Provider
	version string
	sums    string
	sig     string
	// keys is the digest of the signing keys the download response
	// lists (keysDigest): a document verified with one platform's keys
	// is not taken as verified for a platform whose response lists
	// others.
	keys string
}

// keysDigest identifies the signing keys m lists, with their trust
// signatures, in order.
func (m *downloadMeta) keysDigest() string {
	h := sha256.New()
	for _, k := range m.resp.SigningKeys.GPGPublicKeys {
		for _, part := range []string{k.ASCIIArmor, k.TrustSignature} {
			fmt.Fprintf(h, "%d:%s", len(part), part)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// release fetches and verifies the SHA256SUMS document of m, once per
// Source and set of signing keys: each platform's checksums are verified
// with the keys its own download response lists, as tofu verifies them.
func (s *Source) release(ctx context.Context, addr tfaddr.Provider, v versions.Version, m *downloadMeta) (*release, error) {
	key := releaseKey{addr: addr, version: v.String(), sums: m.sumsURL.String(), sig: m.sigURL.String(), keys: m.keysDigest()}
	return s.rels.Do(ctx, key, func() (*release, error) { return s.verifyRelease(ctx, addr, m) })
}

func (s *Source) signatureRequired(addr tfaddr.Provider, keys []string) bool {
	return len(keys) > 0 || !s.signingExempt(addr)
}

// signingExempt is OpenTofu's rule (the negation of its
// ShouldEnforceGPGValidationForProvider): the providers of the hosts of
// [Options.UnsignedHosts] need no signature under [PolicyOpenTofu], and
// every hash such a registry reports is recorded in a lock file, signed
// or not ([hash.Provenance.SigningExempt]).
func (s *Source) signingExempt(addr tfaddr.Provider) bool {
	if s.o.SignaturePolicy == PolicyTerraform {
		return false
	}
	host := NormalizeHost(addr.Hostname.String())
	for _, h := range s.o.UnsignedHosts {
		if NormalizeHost(h) == host {
			return true
		}
	}
	return false
}

func (s *Source) verifyRelease(ctx context.Context, addr tfaddr.Provider, m *downloadMeta) (*release, error) {
	keys := m.armoredKeys()
	sigNeeded := s.signatureRequired(addr, keys)
	// The signature does not depend on the document: when it is needed,
	// both are asked for at once (one round trip instead of two).
	type got struct {
		resp *response
		err  error
	}
	var sigc chan got
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if sigNeeded {
		sigc = make(chan got, 1)
		go func() {
			r, err := s.c.get(cctx, request{url: m.sigURL})
			sigc <- got{r, err}
		}()
	}
	doc, err := s.c.get(ctx, request{url: m.sumsURL})
	if err != nil {
		return nil, fmt.Errorf("fetching SHA256SUMS: %w", err)
	}
	sums, err := ParseSums(doc.body)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", source.ErrChecksumMismatch, redact(m.sumsURL), err)
	}
	rel := &release{sums: sums}
	if !sigNeeded {
		rel.warnings = append(rel.warnings, unsignedWarning(addr, m))
		s.warn(ctx, source.ProviderPackage{Addr: addr}, rel.warnings[0])
		return rel, nil
	}
	sg := <-sigc
	sig, err := sg.resp, sg.err
	if err != nil {
		return nil, fmt.Errorf("fetching the SHA256SUMS signature: %w", err)
	}
	keyID, index, expired, err := verifySignature(doc.body, sig.body, keys)
	if err != nil {
		return nil, err
	}
	rel.signer = Signer{KeyID: keyID, Trust: s.classify(doc.body, sig.body, m.resp.SigningKeys.GPGPublicKeys[index].ASCIIArmor, m.resp.SigningKeys.GPGPublicKeys[index].TrustSignature)}
	if expired {
		w := fmt.Sprintf("%s: signed with key %s, which has expired", addr.ForDisplay(), keyID)
		rel.warnings = append(rel.warnings, w)
		s.warn(ctx, source.ProviderPackage{Addr: addr}, w)
	}
	rel.keyID = keyID
	return rel, nil
}

// unsignedWarning is the warning for checksums accepted without a
// signature. They are vouched for by the connections that brought them:
// only when the download response and SHA256SUMS both came over https can
// that be said to be TLS.
func unsignedWarning(addr tfaddr.Provider, m *downloadMeta) string {
	for _, u := range []*url.URL{m.metaURL, m.sumsURL} {
		if u != nil && !strings.EqualFold(u.Scheme, "https") {
			return fmt.Sprintf("%s: the registry lists no signing key, and the checksums came over plain http (%s), which nothing authenticates: anyone on the network path could have replaced them", addr.ForDisplay(), redact(u))
		}
	}
	hosts := []string{m.sumsURL.Hostname()}
	if m.metaURL != nil && !strings.EqualFold(m.metaURL.Hostname(), m.sumsURL.Hostname()) {
		hosts = append([]string{m.metaURL.Hostname()}, hosts...)
	}
	return fmt.Sprintf("%s: the registry lists no signing key; the checksums are trusted on the strength of the TLS connections to %s only", addr.ForDisplay(), strings.Join(hosts, " and "))
}

// checkPackages validates OpenTofu's packages field against the signed
// checksums: every zh: it lists must be signed, and this platform's entry
// must agree with the shasum.
func checkPackages(m *downloadMeta, rel *release) error {
	if m.packages == nil {
		return nil
	}
	for pl, d := range m.packages {
		for _, h := range d.hashes {
			if h.Scheme() == tfhash.SchemeZH && !rel.sums.Contains(h) {
				return fmt.Errorf("%w: the registry reports %s for %s, which the SHA256SUMS document does not list", source.ErrChecksumMismatch, h, pl)
			}
		}
	}
	d, ok := m.packages[m.platform]
	if !ok {
		return fmt.Errorf("%w: the registry's packages field has no entry for %s", source.ErrChecksumMismatch, m.platform)
	}
	if !slices.Contains(d.hashes, m.shasum) {
		return fmt.Errorf("%w: the registry's packages entry for %s does not list its shasum %s", source.ErrChecksumMismatch, m.platform, m.shasum)
	}
	return nil
}

// records builds the origin hashes of a release, merged by hash: each
// hash is reported by the registry's host, signed by the release's key if
// SHA256SUMS lists it, for the platforms whose archive (in SHA256SUMS) or
// packages entry names it; exempt when the host needs no signature.
func records(addr tfaddr.Provider, v versions.Version, m *downloadMeta, rel *release, exempt bool) []tfhash.Record {
	host := display.Host(addr.Hostname)
	type origin struct {
		signed    bool
		platforms []string
	}
	seen := make(map[tfhash.Hash]*origin, len(rel.sums)+2*len(m.packages))
	at := func(h tfhash.Hash) *origin {
		o := seen[h]
		if o == nil {
			o = &origin{}
			seen[h] = o
		}
		return o
	}
	prefix := "terraform-provider-" + addr.Type + "_" + v.String() + "_"
	for name, h := range rel.sums {
		o := at(h)
		o.signed = true
		if rest, ok := strings.CutPrefix(name, prefix); ok {
			if pl, err := source.ParsePlatform(strings.TrimSuffix(rest, ".zip")); err == nil && strings.HasSuffix(rest, ".zip") {
				o.platforms = append(o.platforms, pl.String())
			}
		}
	}
	for pl, d := range m.packages {
		name := pl.String()
		for _, h := range d.hashes {
			o := at(h)
			o.platforms = append(o.platforms, name)
		}
	}
	out := make([]tfhash.Record, 0, len(seen))
	for h, o := range seen {
		p := tfhash.Provenance{Registries: []string{host}, SigningExempt: exempt}
		if o.signed && rel.keyID != "" {
			p.SignedBy = []string{rel.keyID}
		}
		if len(o.platforms) > 0 {
			slices.Sort(o.platforms)
			p.Platforms = slices.Compact(o.platforms)
		}
		out = append(out, tfhash.Record{Hash: h, Provenance: p})
	}
	slices.SortFunc(out, func(a, b tfhash.Record) int { return strings.Compare(string(a.Hash), string(b.Hash)) })
	return out
}

func (s *Source) providerChecksums(ctx context.Context, p source.ProviderPackage) ([]tfhash.Record, error) {
	addr, err := s.ResolveProvider(ctx, p.Addr)
	if err != nil {
		return nil, err
	}
	p.Addr = addr
	host := display.Host(addr.Hostname)
	if p.Version.IsZero() {
		return nil, s.errorFor(p, host, fmt.Errorf("%w: a version is needed to report checksums", source.ErrVersionNotFound))
	}
	plat := p.Platform
	if plat.IsZero() {
		plat = source.CurrentPlatform
	}
	m, err := s.downloadMeta(ctx, addr, p.Version, plat)
	if errors.Is(err, source.ErrPlatformNotSupported) && p.Platform.IsZero() {
		// Any platform's metadata names the same SHA256SUMS.
		list, lerr := s.providerVersions(ctx, source.ProviderPackage{Addr: addr})
		if lerr != nil {
			return nil, lerr
		}
		for _, a := range list {
			if a.Version == p.Version && len(a.Platforms) > 0 {
				m, err = s.downloadMeta(ctx, addr, p.Version, a.Platforms[0])
				break
			}
		}
	}
	if err != nil {
		return nil, s.errorFor(p, host, err)
	}
	rel, err := s.release(ctx, addr, p.Version, m)
	if err != nil {
		return nil, s.errorFor(p, host, err)
	}
	if err := checkSums(m, rel); err != nil {
		return nil, s.errorFor(p, host, err)
	}
	if err := checkPackages(m, rel); err != nil {
		return nil, s.errorFor(p, host, err)
	}
	return records(addr, p.Version, m, rel, s.signingExempt(addr)), nil
}

// checkSums makes sure the signed document lists the package's shasum under
// its file name.
func checkSums(m *downloadMeta, rel *release) error {
	got, ok := rel.sums[m.resp.Filename]
	if !ok {
		return fmt.Errorf("%w: the SHA256SUMS document has no entry for %s", source.ErrChecksumMismatch, m.resp.Filename)
	}
	if got != m.shasum {
		return fmt.Errorf("%w: the SHA256SUMS document lists %s for %s, but the registry reports %s", source.ErrChecksumMismatch, got, m.resp.Filename, m.shasum)
	}
	return nil
}

func (s *Source) fetchProvider(ctx context.Context, p source.ProviderPackage, dir string, handOver bool) (*source.Fetched, error) {
	addr, err := s.ResolveProvider(ctx, p.Addr)
	if err != nil {
		return nil, err
	}
	p.Addr = addr
	host := display.Host(addr.Hostname)
	if p.Version.IsZero() || p.Platform.IsZero() {
		return nil, s.errorFor(p, host, errors.New("fetching a provider needs a version and a platform"))
	}
	if err := checkEmptyDir(dir); err != nil {
		return nil, s.errorFor(p, host, err)
	}
	m, err := s.downloadMeta(ctx, addr, p.Version, p.Platform)
	if err != nil {
		return nil, s.errorFor(p, host, err)
	}
	// The signed checksums and the package are asked for at once (the
	// package's URL does not depend on them); nothing is extracted before
	// the checksums are verified and list the package.
	type relResult struct {
		rel *release
		err error
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	relc := make(chan relResult, 1)
	go func() {
		rel, err := s.release(rctx, addr, p.Version, m)
		relc <- relResult{rel, err}
	}()
	var rel *release
	verified := false
	verify := func() error {
		r := <-relc
		verified = true
		if r.err != nil {
			return r.err
		}
		rel = r.rel
		if err := checkSums(m, rel); err != nil {
			return err
		}
		return checkPackages(m, rel)
	}
	f, err := s.downloadZip(ctx, p, m, dir, handOver, verify)
	if err != nil {
		if !verified {
			// A failed release verification explains more than the
			// download's failure: report it, as if it had come first.
			if r := <-relc; r.err != nil && ctx.Err() == nil {
				err = r.err
			}
		}
		return nil, s.errorFor(p, host, err)
	}
	f.Package = p
	f.Origin = records(addr, p.Version, m, rel, s.signingExempt(addr))
	f.Warnings = slices.Clone(rel.warnings)
	return f, nil
}

// downloadZip downloads, checks and extracts the package of m into dir,
// or hands it over unextracted when handOver is set (FetchArchive).
// verify, called once the package is downloaded and before anything else
// is done with it, checks the metadata against the signed checksums.
func (s *Source) downloadZip(ctx context.Context, pkg source.Package, m *downloadMeta, dir string, handOver bool, verify func() error) (*source.Fetched, error) {
	if handOver {
		return s.downloadZipArchive(ctx, pkg, m, dir, verify)
	}
	stage, tmp, done, err := stageDownload(dir, ".download-*.zip")
	if err != nil {
		return nil, err
	}
	defer done()
	d := s.newZipDownload(ctx, pkg, m)
	n, err := s.c.download(ctx, d.req, tmp, d.writer(), d.reset)
	if err != nil {
		return nil, err
	}
	zh, err := d.check(n, verify)
	if err != nil {
		return nil, err
	}
	content := stage + "/pkg"
	if err := os.Mkdir(content, 0o755); err != nil {
		return nil, err
	}
	h1, err := s.extractZip(ctx, m, tmp, n, content)
	if err != nil {
		return nil, err
	}
	if err := commitDir(content, dir); err != nil {
		return nil, err
	}
	return &source.Fetched{
		Dir:      dir,
		Location: redact(m.downloadURL),
		Size:     n,
		Hashes:   []tfhash.Hash{h1, zh},
	}, nil
}

// downloadZipArchive downloads the package of m into an archive file in dir
// and hands it over unextracted: a large archive while it still
// downloads, once the signed checksums list it (httpx.Stream.Pending);
// the caller (the cache) then checks its zh: as it reads it. Under a
// context made with source.WithArchiveInMemory, a small archive (at most
// httpx.MemoryMax, within the process's httpx.MemoryBudget) is handed over
// in memory (source.Fetched.ArchiveData), with no file made. verify is as
// for downloadZip.
func (s *Source) downloadZipArchive(ctx context.Context, pkg source.Package, m *downloadMeta, dir string, verify func() error) (_ *source.Fetched, err error) {
	create := func() (*os.File, error) { return fsutil.ArchiveFile(dir) }
	var sp *httpx.Spool
	if source.ArchiveInMemory(ctx) {
		sp = httpx.MemorySpool(create)
	} else {
		f, err := create()
		if err != nil {
			return nil, err
		}
		sp = httpx.FileSpool(f)
	}
	keep := false // the archive is handed over (a file still downloading, or memory)
	defer func() {
		if keep {
			return // the pending archive's (it closes or removes it), or the caller's
		}
		sp.Release()
		if tmp := sp.File(); tmp != nil {
			tmp.Close()
			if err != nil {
				os.Remove(tmp.Name())
			}
		}
	}()
	d := s.newZipDownload(ctx, pkg, m)
	dctx, stop := context.WithCancel(ctx)
	st := s.c.startDownload(dctx, d.req, sp, d.writer(), d.reset)
	if size, ok := st.Size(); ok {
		if err := d.checkPending(size, verify); err != nil {
			stop()
			st.Wait()
			return nil, err
		}
		d.handedOver.Store(true)
		keep = true
		tmp := sp.File()
		return &source.Fetched{
			Location: redact(m.downloadURL),
			Size:     size,
			Hashes:   append([]tfhash.Hash{m.shasum}, statedH1(m)...),
			Archive:  tmp.Name(),
			Pending:  st.Pending(tmp, stop, func() { d.pr.finish(redact(m.downloadURL)) }),
			Limits:   s.o.Limits,
		}, nil
	}
	n, err := st.Wait()
	stop()
	if err != nil {
		return nil, err
	}
	zh, err := d.check(n, verify)
	if err != nil {
		return nil, err
	}
	f := &source.Fetched{
		Location: redact(m.downloadURL),
		Size:     n,
		Hashes:   append([]tfhash.Hash{zh}, statedH1(m)...),
		Limits:   s.o.Limits,
	}
	if data := sp.Data(); data != nil {
		// In memory: a file an earlier attempt made is not needed.
		if tmp := sp.File(); tmp != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
		keep = true
		f.ArchiveData, f.Release = data, sp.Release
		return f, nil
	}
	// The caller (the cache) extracts and hashes the archive in one
	// read, and checks the h1: stated here against what it computes.
	tmp := sp.File()
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	f.Archive = tmp.Name()
	return f, nil
}

// zipDownload is one download of a provider package: its request, its
// progress, and the SHA-256 of the bytes received.
type zipDownload struct {
	m          *downloadMeta
	req        request
	pr         *progress
	h          hash.Hash   // set by reset, which each (re)start of the download calls
	handedOver atomic.Bool // the caller checks the zh: of what it reads
}

// newZipDownload starts the record of the download of the package of m.
func (s *Source) newZipDownload(ctx context.Context, pkg source.Package, m *downloadMeta) *zipDownload {
	pr := s.newProgress(ctx, pkg)
	return &zipDownload{m: m, req: request{url: m.downloadURL, started: pr.start}, pr: pr}
}

// reset starts the digest afresh, when the download (re)starts.
func (d *zipDownload) reset() { d.h = sha256.New() }

// writer is where the download writes what it receives besides the file:
// the digest (until the archive is handed over) and the progress.
func (d *zipDownload) writer() io.Writer {
	sum := writerFunc(func(b []byte) (int, error) {
		if d.handedOver.Load() {
			return len(b), nil
		}
		return d.h.Write(b)
	})
	return io.MultiWriter(sum, d.pr)
}

// checkPending checks an archive about to be handed over while it
// downloads: the signed checksums (verify), and its size against the
// registry's.
func (d *zipDownload) checkPending(size int64, verify func() error) error {
	if err := verify(); err != nil {
		return err
	}
	if p, ok := d.m.packages[d.m.platform]; ok && p.size > 0 && p.size != size {
		return fmt.Errorf("%w: %s is %d bytes, but the registry reports %d", source.ErrChecksumMismatch, redact(d.m.downloadURL), size, p.size)
	}
	return nil
}

// check finishes a complete download of n bytes: it reports the end of
// the progress, checks the signed checksums (verify), and the archive's
// SHA-256 and size against the registry's. It returns the archive's zh:.
func (d *zipDownload) check(n int64, verify func() error) (tfhash.Hash, error) {
	d.pr.finish(redact(d.m.downloadURL))
	if err := verify(); err != nil {
		return "", err
	}
	var digest [32]byte
	d.h.Sum(digest[:0])
	zh := tfhash.NewHash(tfhash.SchemeZH, digest)
	if zh != d.m.shasum {
		return "", fmt.Errorf("%w: %s has checksum %s, but the registry reports %s", source.ErrChecksumMismatch, redact(d.m.downloadURL), zh, d.m.shasum)
	}
	if p, ok := d.m.packages[d.m.platform]; ok && p.size > 0 && p.size != n {
		return "", fmt.Errorf("%w: %s is %d bytes, but the registry reports %d", source.ErrChecksumMismatch, redact(d.m.downloadURL), n, p.size)
	}
	return zh, nil
}

// extractZip extracts the downloaded archive tmp of n bytes into content
// and returns the h1: of the tree, which must be one the registry states
// if it states any.
func (s *Source) extractZip(ctx context.Context, m *downloadMeta, tmp *os.File, n int64, content string) (tfhash.Hash, error) {
	if err := archive.ExtractZip(ctx, tmp, n, content, archive.Options{Limits: s.o.Limits, Symlinks: true}); err != nil {
		return "", fmt.Errorf("%s: %w", m.resp.Filename, err)
	}
	h1, err := tfhash.Options{}.H1Dir(ctx, content)
	if err != nil {
		return "", fmt.Errorf("hashing %s: %w", m.resp.Filename, err)
	}
	if stated := statedH1(m); len(stated) > 0 && !slices.Contains(stated, h1) {
		return "", fmt.Errorf("%w: the contents of %s hash to %s, but the registry reports %s", source.ErrChecksumMismatch, m.resp.Filename, h1, stated[0])
	}
	return h1, nil
}

// statedH1 returns the h1: hashes the registry states for m's package.
func statedH1(m *downloadMeta) []tfhash.Hash {
	var hs []tfhash.Hash
	if d, ok := m.packages[m.platform]; ok {
		for _, x := range d.hashes {
			if x.Scheme() == tfhash.SchemeH1 {
				hs = append(hs, x)
			}
		}
	}
	return hs
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// protocolSuggestion is the newest version of addr that the registry lists
// with a supported plugin protocol (OpenTofu's suggestion for a release
// that speaks none), or the zero version.
func (s *Source) protocolSuggestion(ctx context.Context, addr tfaddr.Provider) versions.Version {
	list, err := s.getProviderVersions(ctx, addr)
	if err != nil {
		return versions.Version{}
	}
	var best versions.Version
	for _, e := range list.Versions {
		v, err := versions.Parse(e.Version)
		if err != nil || !slices.ContainsFunc(e.Protocols, supportedProtocol) {
			continue
		}
		if best.IsZero() || v.Compare(best) > 0 {
			best = v
		}
	}
	return best
}
