package registry

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"os"

	"github.com/tflock/tflock/source/internal/httpx"
)

// HTTPError reports an HTTP response that the protocol did not expect. The
// URL has no credentials and no query string. A 401 or 403 matches
// [source.ErrUnauthorized] and a 404 [source.ErrNotFound] (errors.Is).
type HTTPError = httpx.HTTPError

// ErrInsecureRedirect is wrapped by the error for a redirect from https to
// http.
var ErrInsecureRedirect = httpx.ErrInsecureRedirect

// ErrTooLarge is wrapped by the error for a response larger than the
// configured limit. A package archive larger than [Options.Limits] also
// wraps [source.ErrTooLarge].
var ErrTooLarge = httpx.ErrTooLarge

// ErrIdleTimeout is wrapped by the error for a request during which the
// server sent nothing for [Options.IdleTimeout]. Such a request is not
// retried.
var ErrIdleTimeout = httpx.ErrIdleTimeout

// ErrTooManyRedirects is wrapped by the error for a request redirected more
// than 10 times (a redirect loop). Such a request is not retried.
var ErrTooManyRedirects = httpx.ErrTooManyRedirects

// redact returns u for display: no user information, no query, no fragment.
func redact(u *url.URL) string { return httpx.Redact(u) }

// client is the registry's use of the shared HTTP layer: its limits.
type client struct {
	x        *httpx.Client
	maxResp  int64
	maxBytes int64
}

func newClient(o Options) *client {
	return &client{
		x: httpx.New(httpx.Options{
			Client:             o.HTTPClient,
			UserAgent:          o.UserAgent,
			Retries:            o.Retries,
			MinBackoff:         o.MinBackoff,
			MaxBackoff:         o.MaxBackoff,
			RequestTimeout:     o.RequestTimeout,
			DownloadTimeout:    o.DownloadTimeout,
			IdleTimeout:        o.IdleTimeout,
			LoopbackHTTPTokens: o.LoopbackHTTPTokens,
			Warn:               o.Warn,
		}),
		maxResp:  o.MaxResponseBytes,
		maxBytes: o.Limits.MaxBytes,
	}
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
	header http.Header
	body   []byte
	url    *url.URL // the final URL, after redirects
}

// get fetches a metadata document into memory.
func (c *client) get(ctx context.Context, r request) (*response, error) {
	resp, err := c.x.Get(ctx, httpx.Request{URL: r.url, Token: r.token, Accept: r.accept, MaxBytes: c.maxResp})
	if err != nil {
		return nil, err
	}
	return &response{header: resp.Header, body: resp.Body, url: resp.URL}, nil
}

// download streams a package into f and w, rewinding f and calling reset
// before each attempt, and returns the number of bytes written.
func (c *client) download(ctx context.Context, r request, f *os.File, w io.Writer, reset func()) (int64, error) {
	return c.x.Download(ctx, httpx.Request{URL: r.url, Token: r.token, MaxBytes: c.maxBytes, Started: r.started}, f, w, reset)
}

// startDownload starts streaming a package into sp and w in the
// background (httpx.Client.StartDownload), asking for a large one's end
// apart.
func (c *client) startDownload(ctx context.Context, r request, sp *httpx.Spool, w io.Writer, reset func()) *httpx.Stream {
	return c.x.StartDownload(ctx, httpx.Request{URL: r.url, Token: r.token, MaxBytes: c.maxBytes, Started: r.started}, sp, w, reset, httpx.TailBytes, httpx.StreamMin)
}
