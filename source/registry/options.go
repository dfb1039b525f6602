package registry

import (
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/tflock/tflock/internal/provaddr"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/internal/httpx"
)

// HTTPClient sends HTTP requests. *http.Client implements it. When the
// client is an *http.Client, the source uses a copy of it whose redirect
// policy refuses to leave https for http, drops the Authorization header
// when a redirect leads to another host, and stops after 10 redirects; with
// any other client, a response whose final URL was downgraded from https to
// http is rejected after the fact. The client's own Timeout, if any, still
// applies to every request, downloads included: leave it zero and use the
// timeouts of [Options].
type HTTPClient interface {
	Do(req *http.Request) (*http.Response, error)
}

// Services are a host's service URLs by service ID, as in a
// "/.well-known/terraform.json" document: "providers.v1" and "modules.v1".
// Values may be absolute URLs or paths relative to https://HOST/.
type Services map[string]string

// SignaturePolicy selects the rules for OpenPGP signatures over SHA256SUMS.
type SignaturePolicy int

const (
	// PolicyOpenTofu is OpenTofu's rule: when the registry lists signing
	// keys, a valid signature by one of them is required; when it lists
	// none, a signature is still required unless the provider's host is one
	// of [Options.UnsignedHosts] (by default the OpenTofu registry, which
	// serves providers whose authors never gave it a key). Hashes accepted
	// without a signature are recorded with no SignedBy key. This is the
	// default.
	PolicyOpenTofu SignaturePolicy = iota
	// PolicyTerraform is Terraform's rule: every package must be signed by
	// one of the keys the registry lists, on every host. The signing key
	// is classified as official, partner or community ([Trust], reported
	// by [Source.SignedBy]; see [Options.OfficialKeys] and
	// [Options.PartnerKeys]).
	PolicyTerraform
)

// Options configure a [Source]. The zero value works: it talks to the
// registries named in provider and module addresses over the network,
// authenticates with TF_TOKEN_* environment variables, and applies OpenTofu's
// signature policy.
type Options struct {
	// HTTPClient sends every request. Default: a client with a copy of
	// the standard library's default transport (HTTP/2 where the server
	// offers it, proxies from the environment) that keeps up to
	// 64 idle connections per host instead of 2,
	// so that the concurrent requests of a lock run reuse their HTTP/1.1
	// connections instead of opening new TLS connections. The transport
	// is shared with every other default client of tflock's HTTP sources.
	HTTPClient HTTPClient
	// UserAgent is sent as the User-Agent header. Default "tflock".
	UserAgent string
	// Credentials supplies bearer tokens per host. Default:
	// EnvCredentials(os.Environ()) (the TF_TOKEN_* variables). To add the
	// CLI configuration's credentials blocks, pass
	// Chain(EnvCredentials(os.Environ()), Tokens(blocks)).
	Credentials Credentials
	// LoopbackHTTPTokens allows sending a bearer token over plain http to
	// a loopback host ("localhost", 127.0.0.0/8, ::1), for a registry
	// under development. Default false: tokens are sent only over https,
	// whatever the discovery document or Hosts say; a request to an http
	// URL goes without its token, with one warning per host. (OpenTofu
	// sends the token whatever the scheme.)
	LoopbackHTTPTokens bool
	// Hosts overrides service discovery for the listed hosts, as the CLI
	// configuration's host blocks do. Keys are host names (normalized
	// internally). Default: none; every host is discovered.
	Hosts map[string]Services
	// DefaultHost is the registry that resolves legacy and unqualified
	// provider addresses ("aws", "-/aws"). Default "registry.opentofu.org".
	DefaultHost string
	// SignaturePolicy selects the signature rules. Default [PolicyOpenTofu].
	SignaturePolicy SignaturePolicy
	// UnsignedHosts lists the hosts where [PolicyOpenTofu] accepts a
	// provider release for which the registry lists no signing key, and
	// whose every reported hash a lock file records, signed or not
	// ([hash.Provenance.SigningExempt]), as OpenTofu does for its default
	// registry. Default: registry.opentofu.org only, or none when the
	// environment ([Options.LookupEnv]) sets [EnforceSignaturesEnv] to
	// "true", as in OpenTofu. Set it to an empty non-nil slice to enforce
	// signatures everywhere.
	UnsignedHosts []string
	// OfficialKeys are ASCII-armored public keys whose signatures make a
	// provider [TrustOfficial], as Terraform treats HashiCorp's key.
	// Default: [HashiCorpKey] under [PolicyTerraform], none otherwise.
	OfficialKeys []string
	// PartnerKeys are ASCII-armored public keys whose trust signature over
	// a signing key (the "trust_signature" of a signing_keys entry) makes
	// its providers [TrustPartner], as Terraform treats HashiCorp's
	// partners key. Default none.
	PartnerKeys []string
	// Retries is how many times a request is retried after a connection
	// error, a 429 or a 5xx response (other than 501). Nothing else is
	// retried: other 4xx responses, a redirect loop, an idle or overall
	// timeout, a checksum error, a local write error (a full disk). Default (zero): the value of the
	// TF_PROVIDER_DOWNLOAD_RETRY environment variable if it is a positive
	// integer, else 2, as in OpenTofu. Negative means no retries.
	Retries int
	// LookupEnv reads environment variables (TF_PROVIDER_DOWNLOAD_RETRY,
	// OPENTOFU_ENFORCE_GPG_VALIDATION).
	// Default os.LookupEnv.
	LookupEnv func(key string) (string, bool)
	// MinBackoff is the first delay between attempts; it doubles each time,
	// with jitter. Default 250ms.
	MinBackoff time.Duration
	// MaxBackoff caps the delay between attempts, including one asked for
	// by a Retry-After header. Default 10s.
	MaxBackoff time.Duration
	// RequestTimeout bounds one metadata request (discovery, versions,
	// download metadata, SHA256SUMS), including reading its body. Default
	// 30s.
	RequestTimeout time.Duration
	// DownloadTimeout bounds one package download attempt. Default: no
	// overall limit, as in OpenTofu (a large package over a slow link takes
	// as long as it takes); [Options.IdleTimeout] ends a download that
	// stalls.
	DownloadTimeout time.Duration
	// IdleTimeout is how long a request may wait for the response headers,
	// and then for each next part of the body: a server that sends nothing
	// for that long fails the request (error wrapping [ErrIdleTimeout]),
	// which is not retried. Default 60s.
	IdleTimeout time.Duration
	// MaxResponseBytes caps metadata responses. Default 8 MiB.
	MaxResponseBytes int64
	// Limits bound a package archive: its download size, the total size of
	// what it extracts to, and its number of entries. The zero value
	// applies the defaults [source.Limits] states.
	Limits source.Limits
	// Events receives progress reports: EventFetchStarted,
	// EventFetchProgress and EventFetchDone for each package download, and
	// EventWarning for each warning also given to Warn. Default nil:
	// nothing is reported.
	Events source.Events
	// Warn receives warnings meant for the user: a legacy address
	// resolved through the registry, a signature check skipped, warnings
	// sent by the registry. Default: warnings are dropped.
	Warn func(msg string)
}

// DefaultRetries is the default of [Options.Retries], OpenTofu's default
// provider download retry count.
const DefaultRetries = httpx.DefaultRetries

// RetryEnv names the environment variable that, as in OpenTofu, sets the
// retry count when [Options.Retries] is zero.
const RetryEnv = "TF_PROVIDER_DOWNLOAD_RETRY"

// EnforceSignaturesEnv names the environment variable that, set to
// "true", makes the default of [Options.UnsignedHosts] empty, as it makes
// OpenTofu require a signature from its default registry too (and record
// only signed hashes in the lock file).
const EnforceSignaturesEnv = "OPENTOFU_ENFORCE_GPG_VALIDATION"

func (o Options) withDefaults() Options {
	if o.Credentials == nil {
		o.Credentials = EnvCredentials(nil)
	}
	if o.DefaultHost == "" {
		o.DefaultHost = provaddr.DefaultRegistryHost
	}
	if o.LookupEnv == nil {
		o.LookupEnv = os.LookupEnv
	}
	if o.UnsignedHosts == nil {
		o.UnsignedHosts = []string{provaddr.DefaultRegistryHost}
		if v, ok := o.LookupEnv(EnforceSignaturesEnv); ok && v == "true" {
			o.UnsignedHosts = []string{}
		}
	}
	if o.OfficialKeys == nil && o.SignaturePolicy == PolicyTerraform {
		o.OfficialKeys = []string{HashiCorpKey}
	}
	if o.Retries == 0 {
		o.Retries = DefaultRetries
		if v, ok := o.LookupEnv(RetryEnv); ok {
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				o.Retries = n
			}
		}
	} else if o.Retries < 0 {
		o.Retries = 0
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = 8 << 20
	}
	o.Limits = o.Limits.WithDefaults()
	if o.Warn == nil {
		o.Warn = func(string) {}
	}
	return o
}
