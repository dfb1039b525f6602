package address

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"path"
	"strconv"
	"strings"

	tfaddr "github.com/hashicorp/terraform-registry-address"
	svchost "github.com/hashicorp/terraform-svchost"
	"github.com/tflock/tflock/internal/provaddr"
)

// DefaultRegistryHost is the module and provider registry host of an
// address that names none, in OpenTofu.
const DefaultRegistryHost = provaddr.DefaultRegistryHost

// Options adjusts parsing. The zero value parses as OpenTofu does.
type Options struct {
	// DefaultRegistryHost is the registry host of registry addresses that
	// do not name one. Default: [DefaultRegistryHost] (OpenTofu's);
	// set "registry.terraform.io" to parse as Terraform does.
	DefaultRegistryHost string
}

func (o Options) defaultHost() (svchost.Hostname, error) {
	if o.DefaultRegistryHost == "" {
		return svchost.Hostname(DefaultRegistryHost), nil
	}
	h, err := svchost.ForComparison(o.DefaultRegistryHost)
	if err != nil {
		return "", fmt.Errorf("invalid default registry host %q: %v", o.DefaultRegistryHost, err)
	}
	return h, nil
}

// ModuleSource is a parsed module source address: a [Local], a [Registry]
// or a [Remote]. The set is closed.
type ModuleSource interface {
	// String returns the address as OpenTofu prints it after parsing.
	String() string
	// ForDisplay returns the address as a user would idiomatically write it.
	ForDisplay() string
	// Package returns the package address without subdirectory, revision
	// selector (git "ref", OCI "tag"/"digest") or download options, as
	// source.ModulePackage.Source expects. It is "" for a [Local].
	Package() string
	// LockSource returns Package with the "//SUBDIR" suffix, if any: the
	// "source" of the module's lock entry. It is "" for a [Local].
	LockSource() string
	isModuleSource()
}

var (
	_ ModuleSource = Local("")
	_ ModuleSource = Registry{}
	_ ModuleSource = Remote{}
)

// ParseModuleSource parses a module source address with the default
// [Options]. It returns a [*ParseError] for a malformed address.
func ParseModuleSource(raw string) (ModuleSource, error) {
	return ParseModuleSourceWith(raw, Options{})
}

// MustParseModuleSource is like [ParseModuleSource] but panics on error. It
// is for addresses written in program text.
func MustParseModuleSource(raw string) ModuleSource {
	s, err := ParseModuleSource(raw)
	if err != nil {
		panic(err)
	}
	return s
}

// ParseModuleSourceWith parses a module source address with the given
// options. See the package documentation for the syntax.
func ParseModuleSourceWith(raw string, opts Options) (ModuleSource, error) {
	host, err := opts.defaultHost()
	if err != nil {
		return nil, moduleError(raw, err)
	}
	if raw == "" {
		return nil, moduleError(raw, errors.New("a module source address must not be empty"))
	}
	if isLocal(raw) {
		return parseLocal(raw), nil
	}
	if r, ok := parseRegistry(raw, host); ok {
		return r, nil
	}
	r, err := parseRemote(raw)
	if err != nil {
		return nil, moduleError(raw, err)
	}
	return r, nil
}

// Local is a path from the calling module's directory to the called
// module's, inside the same package: normalised, with forward slashes,
// starting with "./" or "../".
type Local string

var localPrefixes = []string{"./", "../", `.\`, `..\`}

func isLocal(raw string) bool {
	for _, p := range localPrefixes {
		if strings.HasPrefix(raw, p) {
			return true
		}
	}
	return false
}

func parseLocal(raw string) Local {
	clean := path.Clean(strings.ReplaceAll(raw, `\`, "/"))
	if !strings.HasPrefix(clean, "../") {
		// As OpenTofu: even ".." becomes "./..".
		clean = "./" + clean
	}
	return Local(clean)
}

func (Local) isModuleSource() {}

// String returns the normalised path.
func (l Local) String() string { return string(l) }

// ForDisplay returns the normalised path.
func (l Local) ForDisplay() string { return string(l) }

// Package returns "": local modules belong to their caller's package.
func (Local) Package() string { return "" }

// LockSource returns "": local modules are never locked.
func (Local) LockSource() string { return "" }

// Registry is a module in a module registry, with an optional
// subdirectory inside its package. Addr.Host is always set.
type Registry struct {
	// Addr is the module package address (host, namespace, name, target system).
	Addr tfaddr.ModulePackage
	// Subdir is the subdirectory inside the package (after "//"), or "".
	Subdir string
}

func parseRegistry(raw string, defaultHost svchost.Hostname) (Registry, bool) {
	m, err := tfaddr.ParseModuleSource(raw)
	if err != nil {
		return Registry{}, false
	}
	pkg, _ := splitSubdir(raw)
	if strings.Count(pkg, "/") == 2 {
		m.Package.Host = defaultHost
	}
	if _, ok := hostForDisplay(m.Package.Host); !ok {
		return Registry{}, false
	}
	return Registry{Addr: m.Package, Subdir: m.Subdir}, true
}

func (Registry) isModuleSource() {}

// String returns "HOST/NAMESPACE/NAME/SYSTEM[//SUBDIR]".
func (r Registry) String() string { return r.LockSource() }

// ForDisplay is String without the host when it is [DefaultRegistryHost].
func (r Registry) ForDisplay() string {
	s := r.Addr.Namespace + "/" + r.Addr.Name + "/" + r.Addr.TargetSystem
	if r.Addr.Host != svchost.Hostname(DefaultRegistryHost) {
		s = displayHost(r.Addr.Host) + "/" + s
	}
	if r.Subdir != "" {
		s += "//" + r.Subdir
	}
	return s
}

// Package returns "HOST/NAMESPACE/NAME/SYSTEM".
func (r Registry) Package() string {
	return displayHost(r.Addr.Host) + "/" + r.Addr.Namespace + "/" + r.Addr.Name + "/" + r.Addr.TargetSystem
}

// PackageAddr returns the package address of r, typed: r without its
// subdirectory, what r.Package() parses as.
func (r Registry) PackageAddr() Registry { return Registry{Addr: r.Addr} }

// LockSource returns Package with "//SUBDIR" when there is one.
func (r Registry) LockSource() string {
	if r.Subdir != "" {
		return r.Package() + "//" + r.Subdir
	}
	return r.Package()
}

// RemoteKind is the go-getter getter that fetches a [Remote] package.
type RemoteKind string

// The kinds of remote package. Only [KindGit] and [KindOCI] are fetched by
// this module's sources; the others are recognised so that they can be
// named in messages.
const (
	KindGit  RemoteKind = "git"
	KindOCI  RemoteKind = "oci"
	KindHTTP RemoteKind = "http" // an archive or X-Terraform-Get over HTTP or HTTPS
	KindHg   RemoteKind = "hg"
	KindS3   RemoteKind = "s3"
	KindGCS  RemoteKind = "gcs"
	KindFile RemoteKind = "file" // an absolute path on this machine
)

var getterKinds = map[string]RemoteKind{
	"git": KindGit, "oci": KindOCI, "http": KindHTTP, "https": KindHTTP,
	"hg": KindHg, "s3": KindS3, "gcs": KindGCS, "file": KindFile,
}

// Remote is a package fetched from elsewhere by one of go-getter's getters.
type Remote struct {
	// Kind is the getter.
	Kind RemoteKind
	// Address is the package address after go-getter's detection, with
	// any forced getter and the whole query string, but no subdirectory:
	// what OpenTofu calls the module package ("git::https://h/o/r.git?ref=v1").
	Address string
	// Subdir is the normalised subdirectory inside the package, or "".
	Subdir string
	// URL is Address without forced getter and without the arguments
	// decoded below: "https://h/o/r.git", "ssh://git@h/o/r.git",
	// "oci://h/repo"; for git, the URL to give "git clone". Other query
	// arguments stay.
	URL string
	// Ref is a git "ref" argument: a branch, tag or commit. Empty if none.
	Ref string
	// Depth is a git "depth" argument, or 0.
	Depth int
	// SSHKey is a git "sshkey" argument: a base64-encoded private key.
	SSHKey string
	// Tag is an OCI "tag" argument; "latest" when neither tag nor digest
	// is given.
	Tag string
	// Digest is an OCI "digest" argument ("sha256:..."), or "".
	Digest string
}

func (Remote) isModuleSource() {}

// String returns Address with "//SUBDIR" inserted before the query string,
// as OpenTofu prints a remote source.
func (r Remote) String() string {
	if r.Subdir == "" {
		return r.Address
	}
	base, query, ok := strings.Cut(r.Address, "?")
	if ok {
		return base + "//" + r.Subdir + "?" + query
	}
	return base + "//" + r.Subdir
}

// ForDisplay is the same as String, as in OpenTofu.
func (r Remote) ForDisplay() string { return r.String() }

// Package returns the package address without subdirectory or revision
// selector: "git::URL" plus any "depth" and "sshkey" arguments (git),
// "oci://HOST/REPO" (OCI), Address (others).
func (r Remote) Package() string {
	switch r.Kind {
	case KindGit:
		q := url.Values{}
		if r.Depth > 0 {
			q.Set("depth", strconv.Itoa(r.Depth))
		}
		if r.SSHKey != "" {
			q.Set("sshkey", r.SSHKey)
		}
		return r.gitBase(q)
	case KindOCI:
		return r.URL
	}
	return r.Address
}

// PackageAddr returns the package address of r, typed: what r.Package()
// parses as, without its subdirectory or revision selector (git "ref";
// OCI "tag" or "digest", so the tag is OCI's default, "latest").
func (r Remote) PackageAddr() Remote {
	p := Remote{Kind: r.Kind, Address: r.Package(), URL: r.URL}
	switch r.Kind {
	case KindGit:
		p.Depth, p.SSHKey = r.Depth, r.SSHKey
	case KindOCI:
		p.Tag = ociDefaultTag
	default:
		p = r
		p.Subdir = ""
	}
	return p
}

// gitBase returns the forced getter (if Address has one), URL and the
// extra arguments in q.
func (r Remote) gitBase(q url.Values) string {
	s := r.URL
	if getter, _ := splitForcedGetter(r.Address); getter != "" {
		s = getter + "::" + s
	}
	if len(q) > 0 {
		if strings.Contains(s, "?") {
			s += "&" + q.Encode()
		} else {
			s += "?" + q.Encode()
		}
	}
	return s
}

// LockSource returns the package address for the lock file: Package
// without the git download options "depth" and "sshkey" (a private key
// must never be written to the lock file) and without credentials in its URL
// (an ssh user name is kept, a password or an HTTP user never), with
// "//SUBDIR" when there is one (before any query string).
func (r Remote) LockSource() string {
	p := r.Package()
	if r.Kind == KindGit {
		p = r.gitBase(nil)
	}
	p = StripCredentials(p)
	if r.Subdir == "" {
		return p
	}
	base, query, ok := strings.Cut(p, "?")
	if ok {
		return base + "//" + r.Subdir + "?" + query
	}
	return base + "//" + r.Subdir
}

// ParseRemote parses a remote module source address and fails if the
// address is local or a registry address.
func ParseRemote(raw string) (Remote, error) {
	s, err := ParseModuleSource(raw)
	if err != nil {
		return Remote{}, err
	}
	r, ok := s.(Remote)
	if !ok {
		return Remote{}, moduleError(raw, fmt.Errorf("not a remote address"))
	}
	return r, nil
}

func parseRemote(raw string) (Remote, error) {
	if m := regexpOnlyGetter(raw); m != "" {
		return Remote{}, fmt.Errorf("the %q prefix must be followed by a URL", m+"::")
	}
	pkg, subdir := splitSubdir(raw)
	subdir, err := cleanSubdir(subdir)
	if err != nil {
		return Remote{}, err
	}
	forced, rest := splitForcedGetter(pkg)
	if rest == "" {
		return Remote{}, errors.New("the address is empty")
	}
	addr := pkg
	if forced == "" && isDrivePath(rest) {
		return Remote{Kind: KindFile, Address: addr, Subdir: subdir, URL: rest}, nil
	}
	if u, err := url.Parse(rest); err != nil || u.Scheme == "" {
		detected, moreSubdir, err := detect(rest)
		if err != nil {
			return Remote{}, err
		}
		detForced, detRest := splitForcedGetter(detected)
		if forced == "" {
			forced = detForced
		}
		addr = detRest
		if forced != "" {
			addr = forced + "::" + detRest
		}
		if moreSubdir != "" {
			if subdir != "" {
				subdir = path.Join(moreSubdir, subdir)
			} else {
				subdir = moreSubdir
			}
			if subdir, err = cleanSubdir(subdir); err != nil {
				return Remote{}, err
			}
		}
		rest = detRest
	}
	u, err := url.Parse(rest)
	if err != nil {
		return Remote{}, fmt.Errorf("invalid URL: %v", err)
	}
	name := forced
	if name == "" {
		name = strings.ToLower(u.Scheme)
	}
	kind, ok := getterKinds[name]
	if !ok {
		if forced != "" {
			return Remote{}, fmt.Errorf("unsupported module source type %q", forced)
		}
		return Remote{}, fmt.Errorf("download not supported for scheme %q", u.Scheme)
	}
	if kind != KindFile && kind != KindOCI && u.Host == "" && !strings.EqualFold(u.Scheme, "file") {
		return Remote{}, fmt.Errorf("URL %q has no host", Redact(rest))
	}
	if base, _, _ := strings.Cut(rest, "?"); subdir != "" && strings.HasSuffix(base, "/") {
		return Remote{}, fmt.Errorf("URL %q must not end with a slash when a subdirectory follows", Redact(rest))
	}
	if strings.Contains(rest, "#") {
		return Remote{}, fmt.Errorf("URL %q must not contain a fragment (#)", Redact(rest))
	}
	if strings.Contains(u.Path, "//") {
		return Remote{}, fmt.Errorf("URL %q has an empty path segment", Redact(rest))
	}
	r := Remote{Kind: kind, Address: addr, Subdir: subdir, URL: rest}
	switch kind {
	case KindGit:
		err = r.decodeGit(u)
	case KindOCI:
		err = r.decodeOCI(u)
	}
	if err != nil {
		return Remote{}, err
	}
	return r, nil
}

// regexpOnlyGetter returns "git" for "git::" (a getter and nothing else,
// possibly followed by a subdirectory or query only).
func regexpOnlyGetter(raw string) string {
	i := strings.Index(raw, "::")
	if i <= 0 {
		return ""
	}
	for _, c := range raw[:i] {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return ""
		}
	}
	rest := raw[i+2:]
	if rest == "" || strings.HasPrefix(rest, "?") || strings.HasPrefix(rest, "//") {
		return raw[:i]
	}
	return ""
}

func (r *Remote) decodeGit(u *url.URL) error {
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return fmt.Errorf("invalid query string: %v", err)
	}
	for _, name := range []string{"ref", "depth", "sshkey"} {
		if len(q[name]) > 1 {
			return fmt.Errorf("too many %q arguments", name)
		}
	}
	r.Ref = q.Get("ref")
	if _, set := q["ref"]; set && r.Ref == "" {
		return errors.New(`the "ref" argument must not be empty`)
	}
	if strings.Contains(r.Ref, "//") {
		// go-getter reads the subdirectory only before the query, so the
		// ref keeps it, and no git ref has "//": tofu fails to install it
		// ("invalid ref").
		return fmt.Errorf(`invalid ref: %q: a git ref never contains "//"; write a subdirectory before the query string ("...//SUBDIR?ref=REF")`, r.Ref)
	}
	if d, set := q["depth"]; set {
		n, err := strconv.Atoi(d[0])
		if err != nil || n <= 0 {
			return fmt.Errorf(`invalid "depth" argument %q: must be a positive integer`, d[0])
		}
		r.Depth = n
	}
	if k, set := q["sshkey"]; set {
		if _, err := base64.StdEncoding.DecodeString(k[0]); err != nil || k[0] == "" {
			return errors.New(`invalid "sshkey" argument: must be a base64-encoded private key`)
		}
		r.SSHKey = k[0]
	}
	q.Del("ref")
	q.Del("depth")
	q.Del("sshkey")
	v := *u
	v.RawQuery = q.Encode()
	v.ForceQuery = false
	r.URL = v.String()
	return nil
}

// hostForDisplay is svchost's ForDisplay without its panic on a host name
// that cannot be converted.
func hostForDisplay(h svchost.Hostname) (s string, ok bool) {
	defer func() {
		if recover() != nil {
			s, ok = string(h), false
		}
	}()
	return h.ForDisplay(), true
}

func displayHost(h svchost.Hostname) string {
	s, _ := hostForDisplay(h)
	return s
}
