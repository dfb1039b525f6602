package registry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tflock/tflock/source"
)

// HTTPError reports an HTTP response that the protocol did not expect. The
// URL has no credentials and no query string.
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

// ErrInsecureRedirect is wrapped by the error for a redirect from https to
// http.
var ErrInsecureRedirect = errors.New("redirect from https to http refused")

// ErrTooLarge is wrapped by the error for a response larger than the
// configured limit. A package archive larger than [Options.Limits] also
// wraps [source.ErrTooLarge].
var ErrTooLarge = errors.New("response too large")

func noDowngrade(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) > 0 && via[0].URL.Scheme == "https" && req.URL.Scheme != "https" {
			return fmt.Errorf("%w: %s", ErrInsecureRedirect, redact(req.URL))
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
}

// redact returns u for display: no user information, no query, no fragment.
func redact(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	c.User = nil
	if c.RawQuery != "" {
		c.RawQuery = ""
		c.ForceQuery = false
	}
	c.Fragment = ""
	return c.String()
}

// client is the retrying HTTP layer.
type client struct {
	o      Options
	warned sync.Map // host → struct{}: a token was withheld from plain http
}

// request describes one GET.
type request struct {
	url   *url.URL
	token string // bearer token, or ""
	// accept lists extra status codes handed back to the caller instead of
	// being an error (for example 204 for module downloads).
	accept []int
	// started, for downloads, is called with the announced size (or 0)
	// when a response starts arriving.
	started func(total int64)
}

type response struct {
	status int
	header http.Header
	body   []byte
	url    *url.URL // the final URL, after redirects
}

func (c *client) newRequest(ctx context.Context, r request) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.url.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", c.o.UserAgent)
	if r.token != "" {
		if tokenAllowed(r.url, c.o.LoopbackHTTPTokens) {
			req.Header.Set("Authorization", "Bearer "+r.token)
		} else if _, seen := c.warned.LoadOrStore(r.url.Host, struct{}{}); !seen {
			c.o.Warn(fmt.Sprintf("Not sending the credentials for %s over plain http (%s): tokens are sent only over https", r.url.Hostname(), redact(r.url)))
		}
	}
	return req, nil
}

// tokenAllowed reports whether a bearer token may be sent to u: always over
// https; over http only to a loopback host, and only if loopback is set.
// OpenTofu sends a host's token whatever the scheme; a token sent in clear
// text can be read by anyone on the path, so this package does not.
func tokenAllowed(u *url.URL, loopback bool) bool {
	switch strings.ToLower(u.Scheme) {
	case "https":
		return true
	case "http":
		return loopback && isLoopback(u.Hostname())
	}
	return false
}

// isLoopback reports whether host is "localhost" or a loopback IP address.
func isLoopback(host string) bool {
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

// errAttemptTimeout is the cause of a per-attempt deadline, which is
// retryable, unlike the caller's own.
var errAttemptTimeout = errors.New("request attempt timed out")

// doErr classifies an error from HTTPClient.Do or from reading a body.
func doErr(actx context.Context, err error) error {
	if context.Cause(actx) == errAttemptTimeout {
		return &transientError{err: fmt.Errorf("%w: %v", errAttemptTimeout, err)}
	}
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	if errors.Is(err, ErrInsecureRedirect) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.As(err, &certErr) || errors.As(err, &unknownAuth) || errors.As(err, &hostErr) {
		return err
	}
	return &transientError{err: err}
}

// statusErr classifies an unexpected status: 429 and 5xx (but 501) are
// retried, honouring Retry-After.
func statusErr(u *url.URL, resp *http.Response) error {
	e := &HTTPError{URL: redact(u), StatusCode: resp.StatusCode, Status: resp.Status}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 && resp.StatusCode != http.StatusNotImplemented {
		return &transientError{err: e, wait: retryAfter(resp.Header.Get("Retry-After"))}
	}
	return e
}

func retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

func (c *client) backoff(attempt int, asked time.Duration) time.Duration {
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

// retry runs fn until it succeeds, fails permanently, or the retries are
// used up. The error returned is the last attempt's, unwrapped from its
// transient marker.
func (c *client) retry(ctx context.Context, fn func(ctx context.Context) error) error {
	for attempt := 0; ; attempt++ {
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
		if attempt >= c.o.Retries {
			return fmt.Errorf("%w (after %d attempts)", te.err, attempt+1)
		}
		if err := sleep(ctx, c.backoff(attempt, te.wait)); err != nil {
			return err
		}
	}
}

func checkDowngrade(orig *url.URL, resp *http.Response) error {
	if orig.Scheme == "https" && resp.Request != nil && resp.Request.URL != nil && resp.Request.URL.Scheme != "https" {
		return fmt.Errorf("%w: %s", ErrInsecureRedirect, redact(resp.Request.URL))
	}
	return nil
}

func (c *client) send(actx context.Context, r request) (*http.Response, error) {
	req, err := c.newRequest(actx, r)
	if err != nil {
		return nil, err
	}
	resp, err := c.o.HTTPClient.Do(req)
	if err != nil {
		return nil, doErr(actx, err)
	}
	if err := checkDowngrade(r.url, resp); err != nil {
		resp.Body.Close()
		return nil, err
	}
	return resp, nil
}

// get fetches a metadata document into memory.
func (c *client) get(ctx context.Context, r request) (*response, error) {
	var out *response
	err := c.retry(ctx, func(ctx context.Context) error {
		actx, cancel := context.WithTimeoutCause(ctx, c.o.RequestTimeout, errAttemptTimeout)
		defer cancel()
		resp, err := c.send(actx, r)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		ok := resp.StatusCode >= 200 && resp.StatusCode < 300
		for _, a := range r.accept {
			ok = ok || resp.StatusCode == a
		}
		if !ok {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			return statusErr(r.url, resp)
		}
		body, err := readBody(resp, c.o.MaxResponseBytes)
		if err != nil {
			return doErr(actx, fmt.Errorf("reading %s: %w", redact(r.url), err))
		}
		if int64(len(body)) > c.o.MaxResponseBytes {
			return fmt.Errorf("%w: %s is larger than %d bytes", ErrTooLarge, redact(r.url), c.o.MaxResponseBytes)
		}
		final := r.url
		if resp.Request != nil && resp.Request.URL != nil {
			final = resp.Request.URL
		}
		out = &response{status: resp.StatusCode, header: resp.Header, body: body, url: final}
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

// download streams a package into f, rewinding f and calling reset before
// each attempt, and returns the number of bytes written.
func (c *client) download(ctx context.Context, r request, f *os.File, w io.Writer, reset func()) (int64, error) {
	var n int64
	err := c.retry(ctx, func(ctx context.Context) error {
		if err := f.Truncate(0); err != nil {
			return err
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		reset()
		actx, cancel := context.WithTimeoutCause(ctx, c.o.DownloadTimeout, errAttemptTimeout)
		defer cancel()
		resp, err := c.send(actx, r)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return statusErr(r.url, resp)
		}
		if r.started != nil {
			r.started(max(resp.ContentLength, 0))
		}
		if resp.ContentLength > c.o.Limits.MaxBytes {
			return fmt.Errorf("%w: %w: %s is %d bytes, more than the limit of %d", ErrTooLarge, source.ErrTooLarge, redact(r.url), resp.ContentLength, c.o.Limits.MaxBytes)
		}
		n, err = io.Copy(io.MultiWriter(f, w), io.LimitReader(resp.Body, c.o.Limits.MaxBytes+1))
		if err != nil {
			return doErr(actx, fmt.Errorf("downloading %s: %w", redact(r.url), err))
		}
		if n > c.o.Limits.MaxBytes {
			return fmt.Errorf("%w: %w: %s is larger than %d bytes", ErrTooLarge, source.ErrTooLarge, redact(r.url), c.o.Limits.MaxBytes)
		}
		if resp.ContentLength >= 0 && n != resp.ContentLength {
			return &transientError{err: fmt.Errorf("downloading %s: %w: got %d of %d bytes", redact(r.url), io.ErrUnexpectedEOF, n, resp.ContentLength)}
		}
		return nil
	})
	return n, err
}
