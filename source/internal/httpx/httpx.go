// Package httpx is the one HTTP client configuration of every HTTP source
// (the registry, its module archive downloads, the network mirror): the
// client and transport, the retry policy, the timeouts, the redirect policy,
// credentials and the user agent are decided here and nowhere else.
//
// # Retries
//
// Only GET requests are sent, and an attempt is retried only when asking
// again may help: a connection error (refused, reset, a body cut short) or a
// 429 or 5xx response other than 501, after an exponential backoff with
// jitter, or after what a Retry-After header asks, capped by
// [Options.MaxBackoff]. Nothing else is retried: other 4xx responses, a
// redirect refused or looping, a certificate error, an idle or overall
// timeout (a server that stalled once will stall again: a slow-loris server
// costs one idle timeout, not one per attempt), the caller's context ending,
// or a local write error (a full disk, a quota, a read-only filesystem).
//
// # Timeouts
//
// Each attempt has an idle timeout ([Options.IdleTimeout]): from sending
// the request, and again from each read of the body that returns data, the
// server must send something within it. On top of that, a metadata request
// ([Client.Get]) has a short overall timeout ([Options.RequestTimeout]),
// and a package download ([Client.Download]) a separate one
// ([Options.DownloadTimeout]) that is none by default, as in OpenTofu: a
// large package over a slow link takes as long as it takes while data keeps
// coming.
//
// # Redirects
//
// When the client is an [*http.Client], a copy of it is used whose redirect
// policy refuses to leave https for http, drops the Authorization header
// when a redirect leads to another host (host name or port), and stops after
// 10 redirects without retrying. With another [Doer], a response whose
// final URL was downgraded from https to http is refused after the fact.
//
// # Credentials
//
// A bearer token is sent over https, and over plain http only to a loopback
// host when [Options.LoopbackHTTPTokens] allows it; otherwise the request
// goes without it and [Options.Warn] is told once per host. Errors name
// URLs without user information, query or fragment, and never a token.
package httpx

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/internal/display"
)

// Doer sends HTTP requests; *http.Client implements it.
type Doer interface {
	Do(req *http.Request) (*http.Response, error)
}

// Defaults of [Options].
const (
	DefaultRetries        = 2
	DefaultMinBackoff     = 250 * time.Millisecond
	DefaultMaxBackoff     = 10 * time.Second
	DefaultRequestTimeout = 30 * time.Second
	// DefaultDownloadTimeout is no overall limit: a download lasts while
	// data keeps coming (see DefaultIdleTimeout).
	DefaultDownloadTimeout = 0
	DefaultIdleTimeout     = 60 * time.Second
	DefaultUserAgent       = "tflock"
	// MaxRedirects is how many redirects one request follows.
	MaxRedirects = 10
)

// Options configure a [Client]. The zero value works, with the defaults
// above.
type Options struct {
	// Client sends the requests. Default: an http.Client on a transport
	// shared by every default client (see [DefaultTransport]).
	Client Doer
	// UserAgent is sent as the User-Agent header. Default "tflock".
	UserAgent string
	// Retries is how many times a failed attempt is retried when worth
	// it. Zero means none here: the sources apply their own defaults
	// (DefaultRetries, TF_PROVIDER_DOWNLOAD_RETRY) before building a
	// Client. Negative also means none.
	Retries int
	// MinBackoff and MaxBackoff bound the delay between attempts, which
	// doubles each time (with jitter) or is what a Retry-After header
	// asks. Defaults 250ms and 10s.
	MinBackoff, MaxBackoff time.Duration
	// RequestTimeout, DownloadTimeout and IdleTimeout are the timeouts of
	// the package documentation. Defaults 30s, none and 60s.
	RequestTimeout, DownloadTimeout, IdleTimeout time.Duration
	// LoopbackHTTPTokens allows sending a bearer token over plain http to a
	// loopback host. Default false: tokens go over https only.
	LoopbackHTTPTokens bool
	// Warn receives warnings meant for the user (a token withheld from
	// plain http). Default: dropped.
	Warn func(msg string)
}

// Client sends GET requests with the policy of the package documentation.
// It is safe for concurrent use.
type Client struct {
	o      Options
	warned sync.Map // host → struct{}: a token was withheld from plain http
	hosts  sync.Map // scheme://host → *hostGate
}

// New returns a Client configured by o.
func New(o Options) *Client {
	if o.Client == nil {
		o.Client = StdClient(nil)
	} else if hc, ok := o.Client.(*http.Client); ok {
		o.Client = StdClient(hc)
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	if o.Retries < 0 {
		o.Retries = 0
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = DefaultMinBackoff
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = o.MinBackoff
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.DownloadTimeout < 0 {
		o.DownloadTimeout = 0
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.Warn == nil {
		o.Warn = func(string) {}
	}
	return &Client{o: o}
}

// Options returns the options in effect, defaults applied.
func (c *Client) Options() Options { return c.o }

// defaultMaxIdleConnsPerHost is the number of idle connections per host
// that the default transport keeps.
const defaultMaxIdleConnsPerHost = 64

var (
	defaultTransportOnce sync.Once
	sharedTransport      http.RoundTripper
)

// DefaultTransport returns the transport of the default client, shared by
// every source so that they share their connections: a copy of the
// standard library's default transport (HTTP/2 where the server offers it,
// proxies from the environment) that keeps up to 64 idle connections per
// host instead of 2, so that the concurrent requests of a lock run reuse
// their HTTP/1.1 connections instead of opening new TLS connections.
func DefaultTransport() http.RoundTripper {
	defaultTransportOnce.Do(func() {
		dt, ok := http.DefaultTransport.(*http.Transport)
		if !ok {
			sharedTransport = http.DefaultTransport
			return
		}
		tr := dt.Clone()
		tr.MaxIdleConnsPerHost = defaultMaxIdleConnsPerHost
		if tr.MaxIdleConns < 4*defaultMaxIdleConnsPerHost {
			tr.MaxIdleConns = 4 * defaultMaxIdleConnsPerHost
		}
		tr.ForceAttemptHTTP2 = true
		sharedTransport = tr
		// The first TLS handshake loads the system's roots (and
		// SSL_CERT_FILE), which takes milliseconds: start it now, beside
		// whatever the program does before its first request.
		go func() { _, _ = x509.SystemCertPool() }()
	})
	return sharedTransport
}

// Errors. Callers match them with errors.Is.
var (
	// ErrInsecureRedirect: a redirect from https to http was refused.
	ErrInsecureRedirect = errors.New("redirect from https to http refused")
	// ErrTooManyRedirects: a request was redirected more than
	// MaxRedirects times (a redirect loop, usually).
	ErrTooManyRedirects = fmt.Errorf("stopped after %d redirects", MaxRedirects)
	// ErrTooLarge: a response is larger than the caller's limit.
	ErrTooLarge = errors.New("response too large")
	// ErrIdleTimeout: the server sent nothing for IdleTimeout.
	ErrIdleTimeout = errors.New("idle timeout")
	// ErrTimeout: an attempt took longer than its overall timeout.
	ErrTimeout = errors.New("request timed out")
)

// HTTPError reports an HTTP response that the protocol did not expect. The
// URL has no credentials and no query string. A 401 or 403 matches
// [source.ErrUnauthorized] and a 404 [source.ErrNotFound].
type HTTPError struct {
	URL        string
	StatusCode int
	Status     string
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("GET %s: unexpected response %s", e.URL, e.Status)
}

// Is makes a 401 or 403 match [source.ErrUnauthorized] and a 404 match
// [source.ErrNotFound].
func (e *HTTPError) Is(target error) bool {
	switch target {
	case source.ErrUnauthorized:
		return e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden
	case source.ErrNotFound:
		return e.StatusCode == http.StatusNotFound
	}
	return false
}

// Redact returns u for display: no user information, no query, no fragment
// (the one decision is display.URL's).
func Redact(u *url.URL) string { return display.URL(u) }

// redirectError marks an error of the redirect policy: never retried.
type redirectError struct{ err error }

func (e *redirectError) Error() string { return e.err.Error() }
func (e *redirectError) Unwrap() error { return e.err }

// StdClient returns a copy of c whose redirect policy is this package's
// (see the package documentation), or, for a nil c, the default client:
// the shared [DefaultTransport] with that policy. It is the client of a
// source that sends its requests through another library (the OCI
// registry client), so that it shares the connections and the redirect
// rules of every other HTTP source.
func StdClient(c *http.Client) *http.Client {
	if c == nil {
		c = &http.Client{Transport: DefaultTransport()}
	}
	cp := *c
	cp.CheckRedirect = checkRedirect(c.CheckRedirect)
	return &cp
}

// checkRedirect wraps a client's redirect policy (nil: the standard one)
// with this package's.
func checkRedirect(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) > 0 {
			for _, v := range via {
				if v.URL.Scheme == "https" && req.URL.Scheme != "https" {
					return &redirectError{fmt.Errorf("%w: %s", ErrInsecureRedirect, Redact(req.URL))}
				}
			}
			if !SameHost(via[0].URL, req.URL) {
				req.Header.Del("Authorization")
			}
		}
		if next != nil {
			if err := next(req, via); err != nil {
				return &redirectError{err}
			}
			return nil
		}
		if len(via) >= MaxRedirects {
			return &redirectError{fmt.Errorf("%w (at %s)", ErrTooManyRedirects, Redact(req.URL))}
		}
		return nil
	}
}

// SameHost reports whether a and b name the same host and port (the
// scheme's default port when none is written), ignoring case.
func SameHost(a, b *url.URL) bool {
	return strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "http":
		return "80"
	case "https":
		return "443"
	}
	return ""
}

// Request describes one GET.
type Request struct {
	// URL is asked. Required.
	URL *url.URL
	// Token is a bearer token for URL's host, or "".
	Token string
	// Accept lists extra status codes handed back to the caller instead
	// of being an error (for example 204 for module downloads).
	Accept []int
	// MaxBytes limits the body. Required (positive).
	MaxBytes int64
	// Started, for downloads, is called with the announced size (or 0)
	// when a response starts arriving, once per attempt.
	Started func(total int64)

	byteRange string // a Range header, for Stream's tail
}

// Response is a metadata response read into memory.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	URL    *url.URL // the final URL, after redirects
}

func (c *Client) newRequest(ctx context.Context, r Request) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.URL.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", Redact(r.URL), stripURLError(err))
	}
	req.Header.Set("User-Agent", c.o.UserAgent)
	if r.byteRange != "" {
		req.Header.Set("Range", r.byteRange)
	}
	if r.Token != "" {
		if TokenAllowed(r.URL, c.o.LoopbackHTTPTokens) {
			req.Header.Set("Authorization", "Bearer "+r.Token)
		} else if _, seen := c.warned.LoadOrStore(r.URL.Host, struct{}{}); !seen {
			c.o.Warn(fmt.Sprintf("Not sending the credentials for %s over plain http (%s): tokens are sent only over https", r.URL.Hostname(), Redact(r.URL)))
		}
	}
	return req, nil
}

// TokenAllowed reports whether a bearer token may be sent to u: always over
// https; over http only to a loopback host, and only if loopback is set.
func TokenAllowed(u *url.URL, loopback bool) bool {
	switch strings.ToLower(u.Scheme) {
	case "https":
		return true
	case "http":
		return loopback && IsLoopback(u.Hostname())
	}
	return false
}

// IsLoopback reports whether host is "localhost" or a loopback IP address.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// transientError marks an attempt's failure as worth retrying, after wait
// if the server said how long (0 otherwise).
type transientError struct {
	err  error
	wait time.Duration
}

func (e *transientError) Error() string { return e.err.Error() }
func (e *transientError) Unwrap() error { return e.err }

// timeoutError is the cause of an attempt's context ending by one of its
// own timeouts.
type timeoutError struct {
	kind error // ErrIdleTimeout or ErrTimeout
	d    time.Duration
}

func (e *timeoutError) Error() string {
	if e.kind == ErrIdleTimeout {
		return fmt.Sprintf("%v: no data for %s", e.kind, e.d)
	}
	return fmt.Sprintf("%v after %s", e.kind, e.d)
}

func (e *timeoutError) Unwrap() error { return e.kind }

// attempt is the context of one attempt, with its idle and overall
// timeouts.
type attempt struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	stop   func() bool
	idle   *time.Timer
	d      time.Duration
}

func (c *Client) newAttempt(ctx context.Context, overall time.Duration) *attempt {
	a := &attempt{d: c.o.IdleTimeout}
	a.ctx, a.cancel = context.WithCancelCause(ctx)
	if overall > 0 {
		t := time.AfterFunc(overall, func() { a.cancel(&timeoutError{kind: ErrTimeout, d: overall}) })
		a.stop = t.Stop
	}
	a.idle = time.AfterFunc(a.d, func() { a.cancel(&timeoutError{kind: ErrIdleTimeout, d: a.d}) })
	return a
}

// kick restarts the idle timer: data arrived.
func (a *attempt) kick() { a.idle.Reset(a.d) }

func (a *attempt) end() {
	a.idle.Stop()
	if a.stop != nil {
		a.stop()
	}
	a.cancel(context.Canceled)
}

// body wraps a response body so that each read returning data restarts the
// idle timer.
type body struct {
	r io.Reader
	a *attempt
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 {
		b.a.kick()
	}
	return n, err
}

// classify turns an attempt's failure into the error to return: the
// attempt's timeout or the caller's context when they ended it, a
// transientError when retrying may help, else err as it is.
func (a *attempt) classify(u *url.URL, err error) error {
	cause := context.Cause(a.ctx)
	var te *timeoutError
	if errors.As(cause, &te) {
		return fmt.Errorf("GET %s: %w", Redact(u), te)
	}
	if cause != nil && cause != context.Canceled {
		return cause // the caller's context ended (or its own cause)
	}
	if local := localWriteError(err); local != nil {
		return local
	}
	var re *redirectError
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	if errors.As(err, &re) || errors.As(err, &certErr) || errors.As(err, &unknownAuth) || errors.As(err, &hostErr) ||
		errors.Is(err, ErrInsecureRedirect) || errors.Is(err, ErrTooManyRedirects) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("GET %s: %w", Redact(u), stripURLError(err))
	}
	var we *writeError
	if errors.As(err, &we) {
		return fmt.Errorf("GET %s: writing the download: %w", Redact(u), we.err)
	}
	return &transientError{err: fmt.Errorf("GET %s: %w", Redact(u), stripURLError(err))}
}

// localWriteErrnos are local storage failures: retrying a download cannot
// help.
var localWriteErrnos = []syscall.Errno{syscall.ENOSPC, syscall.EROFS, syscall.EDQUOT, syscall.EFBIG}

// localWriteError returns err, unwrapped from a writeError, when it is a
// local storage failure; else nil.
func localWriteError(err error) error {
	for _, e := range localWriteErrnos {
		if errors.Is(err, e) {
			var we *writeError
			if errors.As(err, &we) {
				return we.err
			}
			return err
		}
	}
	return nil
}

// writeError is an error writing a download locally: never retried.
type writeError struct{ err error }

func (e *writeError) Error() string { return e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

type errWriter struct{ w io.Writer }

func (w errWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	if err != nil {
		err = &writeError{err}
	}
	return n, err
}

func stripURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// statusErr classifies an unexpected status: 429 and 5xx (but 501) are
// retried, honouring Retry-After.
func statusErr(u *url.URL, resp *http.Response) error {
	e := &HTTPError{URL: Redact(u), StatusCode: resp.StatusCode, Status: resp.Status}
	if Retryable(resp.StatusCode) {
		return &transientError{err: e, wait: RetryAfter(resp.Header.Get("Retry-After"), time.Now())}
	}
	return e
}

// Retryable reports whether a response status is worth asking again: 429
// and 5xx but 501.
func Retryable(status int) bool {
	return status == http.StatusTooManyRequests || status >= 500 && status != http.StatusNotImplemented
}

// RetryAfter reads a Retry-After header (seconds or an HTTP date,
// relative to now); 0 when absent or invalid.
func RetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(min(s, 1<<20)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

func (c *Client) backoff(attempt int, asked time.Duration) time.Duration {
	if asked > 0 {
		return min(asked, c.o.MaxBackoff)
	}
	d := c.o.MinBackoff << min(attempt, 20)
	if d > c.o.MaxBackoff || d <= 0 {
		d = c.o.MaxBackoff
	}
	// Jitter in [d/2, d].
	return d/2 + rand.N(d/2+1)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// GaveUpError is the error of a request whose last attempt failed in a way
// worth retrying (a connection error, a 429 or a 5xx) when no retry was
// left. Its text ends as OpenTofu's does ("GET URL giving up after N
// attempt(s)"), followed by the last attempt's failure, which it unwraps
// to (an [*HTTPError] for a status).
type GaveUpError struct {
	URL      string // without credentials or query
	Attempts int
	Err      error
}

func (e *GaveUpError) Error() string {
	cause := strings.TrimPrefix(e.Err.Error(), "GET "+e.URL+": ")
	return fmt.Sprintf("GET %s giving up after %d attempt(s): %s", e.URL, e.Attempts, cause)
}

// Unwrap returns the last attempt's failure.
func (e *GaveUpError) Unwrap() error { return e.Err }

// retry runs fn until it succeeds, fails permanently, or the retries are
// used up. The error returned is the last attempt's, unwrapped from its
// transient marker: a [*GaveUpError] when it was worth retrying.
func (c *Client) retry(ctx context.Context, u *url.URL, fn func(ctx context.Context) error) error {
	for n := 0; ; n++ {
		err := fn(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var te *transientError
		if !errors.As(err, &te) {
			return err
		}
		if n >= c.o.Retries {
			return &GaveUpError{URL: Redact(u), Attempts: n + 1, Err: te.err}
		}
		if err := sleep(ctx, c.backoff(n, te.wait)); err != nil {
			return err
		}
	}
}

func checkDowngrade(orig *url.URL, resp *http.Response) error {
	if orig.Scheme == "https" && resp.Request != nil && resp.Request.URL != nil && resp.Request.URL.Scheme != "https" {
		return fmt.Errorf("GET %s: %w: %s", Redact(orig), ErrInsecureRedirect, Redact(resp.Request.URL))
	}
	return nil
}

// send sends one attempt's request; the response body, when there is one,
// restarts the idle timer with each read.
func (c *Client) send(a *attempt, r Request) (*http.Response, error) {
	// The requests held back by firstToHost may go as soon as this one
	// has its connection: an HTTP/2 connection is then shared.
	ctx := httptrace.WithClientTrace(a.ctx, &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { c.answered(r.URL) }})
	req, err := c.newRequest(ctx, r)
	if err != nil {
		return nil, err
	}
	resp, err := c.o.Client.Do(req)
	if err != nil {
		return nil, a.classify(r.URL, err)
	}
	a.kick()
	if err := checkDowngrade(r.URL, resp); err != nil {
		resp.Body.Close()
		return nil, err
	}
	resp.Body = readCloser{&body{r: resp.Body, a: a}, resp.Body}
	return resp, nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

func (c *Client) accepted(r Request, status int) bool {
	if status >= 200 && status < 300 {
		return true
	}
	for _, a := range r.Accept {
		if status == a {
			return true
		}
	}
	return false
}

// attempts sends r until an attempt succeeds, fails for good, or the
// retries are used up: each attempt runs before (if not nil), then sends
// the request with the overall timeout, and hands the response to use.
func (c *Client) attempts(ctx context.Context, r Request, overall time.Duration, before func() error, use func(*attempt, *http.Response) error) error {
	return c.retry(ctx, r.URL, func(ctx context.Context) error {
		if before != nil {
			if err := before(); err != nil {
				return err
			}
		}
		if err := c.firstToHost(ctx, r.URL); err != nil {
			return err
		}
		a := c.newAttempt(ctx, overall)
		defer a.end()
		resp, err := c.send(a, r)
		c.answered(r.URL)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		return use(a, resp)
	})
}

// firstToHost lets the first request to a host (scheme and host:port) go,
// and makes the requests that come before it has a connection wait until
// it has one (or has failed): a lock run starts dozens of requests to one
// registry at once, and without a connection yet each would dial its own
// and pay a TLS handshake, only for all but one to be dropped once HTTP/2
// is agreed (the standard transport does not share a pending dial). Once
// the first has its connection they share it (HTTP/2) or dial as usual
// (HTTP/1.1). The wait ends with ctx.
func (c *Client) firstToHost(ctx context.Context, u *url.URL) error {
	g := &hostGate{open: make(chan struct{})}
	got, loaded := c.hosts.LoadOrStore(u.Scheme+"://"+u.Host, g)
	if !loaded {
		return nil // the first: it goes
	}
	select {
	case <-got.(*hostGate).open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// answered marks the first request to u's host as connected (or failed),
// releasing the requests that wait for it; later calls do nothing.
func (c *Client) answered(u *url.URL) {
	if got, ok := c.hosts.Load(u.Scheme + "://" + u.Host); ok {
		g := got.(*hostGate)
		g.once.Do(func() { close(g.open) })
	}
}

// hostGate holds back the requests to one host until the first is
// answered.
type hostGate struct {
	open chan struct{}
	once sync.Once
}

// Get fetches a metadata document into memory, with the request timeout.
// A body larger than r.MaxBytes is an error wrapping [ErrTooLarge].
func (c *Client) Get(ctx context.Context, r Request) (*Response, error) {
	var out *Response
	err := c.attempts(ctx, r, c.o.RequestTimeout, nil, func(a *attempt, resp *http.Response) error {
		if !c.accepted(r, resp.StatusCode) {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			return statusErr(r.URL, resp)
		}
		b, err := readBody(resp, r.MaxBytes)
		if err != nil {
			return a.classify(r.URL, err)
		}
		if int64(len(b)) > r.MaxBytes {
			return fmt.Errorf("%w: %s is larger than %d bytes", ErrTooLarge, Redact(r.URL), r.MaxBytes)
		}
		final := r.URL
		if resp.Request != nil && resp.Request.URL != nil {
			final = resp.Request.URL
		}
		out = &Response{Status: resp.StatusCode, Header: resp.Header, Body: b, URL: final}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// readBody reads a response body of at most limit bytes (limit+1 bytes
// are read to detect a larger one). When the server announced the length,
// the buffer is allocated once at that size instead of grown.
func readBody(resp *http.Response, limit int64) ([]byte, error) {
	r := io.LimitReader(resp.Body, limit+1)
	if n := resp.ContentLength; n >= 0 && n <= limit {
		buf := make([]byte, 0, n+1)
		for {
			m, err := r.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+m]
			if err == io.EOF {
				return buf, nil
			}
			if err != nil {
				return buf, err
			}
			if len(buf) == cap(buf) {
				// Longer than announced: read the rest the usual way.
				rest, err := io.ReadAll(r)
				return append(buf, rest...), err
			}
		}
	}
	return io.ReadAll(r)
}

// Download streams a package into f and w, with the download timeout. Before
// each attempt it empties f, rewinds it and calls reset (which may be nil).
// It returns the number of bytes written. Only a 200 response is accepted;
// a body larger than r.MaxBytes is an error wrapping [ErrTooLarge] and
// [source.ErrTooLarge] (a package beyond its limit), a body shorter than
// announced is retried, and an error writing f or w is
// returned at once.
func (c *Client) Download(ctx context.Context, r Request, f *os.File, w io.Writer, reset func()) (int64, error) {
	return c.DownloadSpool(ctx, r, FileSpool(f), w, reset)
}

// DownloadSpool is [Client.Download] into the spool sp: into memory when
// it is a [MemorySpool] and the response is small.
func (c *Client) DownloadSpool(ctx context.Context, r Request, sp *Spool, w io.Writer, reset func()) (int64, error) {
	var n int64
	rewind := func() error {
		// reset first: a reader of the bytes written so far (a Stream's
		// ReadAt) learns that they are gone before the spool empties.
		if reset != nil {
			reset()
		}
		return sp.rewind()
	}
	err := c.attempts(ctx, r, c.o.DownloadTimeout, rewind, func(a *attempt, resp *http.Response) error {
		if resp.StatusCode != http.StatusOK {
			return statusErr(r.URL, resp)
		}
		if resp.ContentLength > r.MaxBytes {
			return fmt.Errorf("%w: %w: %s is %d bytes, more than the limit of %d", ErrTooLarge, source.ErrTooLarge, Redact(r.URL), resp.ContentLength, r.MaxBytes)
		}
		if r.Started != nil {
			r.Started(max(resp.ContentLength, 0))
		}
		if err := sp.begin(resp.ContentLength); err != nil {
			return err
		}
		dst := io.Writer(sp)
		if w != nil {
			dst = io.MultiWriter(sp, w)
		}
		var err error
		n, err = io.Copy(errWriter{dst}, io.LimitReader(resp.Body, r.MaxBytes+1))
		if err != nil {
			return a.classify(r.URL, err)
		}
		if n > r.MaxBytes {
			return fmt.Errorf("%w: %w: %s is larger than %d bytes", ErrTooLarge, source.ErrTooLarge, Redact(r.URL), r.MaxBytes)
		}
		if resp.ContentLength >= 0 && n != resp.ContentLength {
			return &transientError{err: fmt.Errorf("GET %s: %w: got %d of %d bytes", Redact(r.URL), io.ErrUnexpectedEOF, n, resp.ContentLength)}
		}
		return nil
	})
	return n, err
}
