package httpx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tflock/tflock/source"
)

// server is a TLS test server that counts its requests.
type server struct {
	*httptest.Server
	n atomic.Int64
}

func newServer(t testing.TB, h http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.n.Add(1)
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) requests() int { return int(s.n.Load()) }

func (s *server) url(t testing.TB, p string) *url.URL {
	t.Helper()
	u, err := url.Parse(s.URL + p)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// fast are options with fast retries and the given client.
func fast(c Doer) Options {
	return Options{Client: c, Retries: 2, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}
}

func tempFile(t *testing.T) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "download"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// trickle writes the headers announcing n bytes, then one byte every
// interval.
func trickle(w http.ResponseWriter, r *http.Request, n int, interval time.Duration) {
	w.Header().Set("Content-Length", strconv.Itoa(n))
	w.WriteHeader(http.StatusOK)
	f := w.(http.Flusher)
	f.Flush()
	for i := 0; i < n; i++ {
		select {
		case <-r.Context().Done():
			return
		case <-time.After(interval):
		}
		if _, err := w.Write([]byte{'x'}); err != nil {
			return
		}
		f.Flush()
	}
}

// stall waits until the client goes away (or a long time), then aborts
// the response: a stalled server never completes one. (Returning instead
// would send whatever the handler wrote so far as a complete response; on
// a loaded machine the server sometimes ended the request's context while
// the client still waited, which then got an empty 200.)
func stall(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
	}
	panic(http.ErrAbortHandler)
}

// TestSlowLoris: a server that sends its headers, a few bytes slowly, then
// nothing, fails the request after the idle timeout, once: an idle timeout
// is not retried.
func TestSlowLoris(t *testing.T) {
	for _, mode := range []string{"Get", "Download"} {
		t.Run(mode, func(t *testing.T) {
			s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Length", "1000")
				w.WriteHeader(http.StatusOK)
				for i := 0; i < 3; i++ {
					w.Write([]byte{'x'})
					w.(http.Flusher).Flush()
					time.Sleep(20 * time.Millisecond)
				}
				stall(r)
			})
			o := fast(s.Client())
			o.IdleTimeout = 150 * time.Millisecond
			o.RequestTimeout = 10 * time.Second
			c := New(o)
			u := s.url(t, "/pkg.zip?secret=1")
			start := time.Now()
			var err error
			if mode == "Get" {
				_, err = c.Get(context.Background(), Request{URL: u, MaxBytes: 1 << 20})
			} else {
				_, err = c.Download(context.Background(), Request{URL: u, MaxBytes: 1 << 20}, tempFile(t), nil, nil)
			}
			if !errors.Is(err, ErrIdleTimeout) {
				t.Fatalf("got %v, want ErrIdleTimeout", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, s.URL+"/pkg.zip") || !strings.Contains(msg, "no data for 150ms") || strings.Contains(msg, "secret") {
				t.Errorf("error %q: want the URL without its query and \"no data for 150ms\"", msg)
			}
			if n := s.requests(); n != 1 {
				t.Errorf("%d requests, want 1: an idle timeout is not retried", n)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

// TestNoHeaders: a server that accepts the request and never answers is
// cut by the idle timeout too.
func TestNoHeaders(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { stall(r) })
	o := fast(s.Client())
	o.IdleTimeout = 100 * time.Millisecond
	_, err := New(o).Get(context.Background(), Request{URL: s.url(t, "/index.json"), MaxBytes: 1 << 20})
	if !errors.Is(err, ErrIdleTimeout) || s.requests() != 1 {
		t.Errorf("got %v after %d requests, want ErrIdleTimeout after 1", err, s.requests())
	}
}

// TestSteadyTrickle is the 75 s network-mirror download scaled down: a
// body that keeps coming for longer than the metadata timeout, never idle
// for the idle timeout, downloads; the same body as a metadata request
// hits the (short) request timeout, once.
func TestSteadyTrickle(t *testing.T) {
	const size = 80
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { trickle(w, r, size, 10*time.Millisecond) })
	o := fast(s.Client())
	o.RequestTimeout = 300 * time.Millisecond // the body takes 800ms or more
	o.IdleTimeout = time.Second               // 100 times the gap between two bytes
	c := New(o)
	if c.Options().DownloadTimeout != 0 {
		t.Fatalf("DownloadTimeout %v with the default: want none", c.Options().DownloadTimeout)
	}
	f := tempFile(t)
	start := time.Now()
	n, err := c.Download(context.Background(), Request{URL: s.url(t, "/big.zip"), MaxBytes: 1 << 20}, f, nil, nil)
	if err != nil || n != size {
		t.Fatalf("download: %d bytes, %v; want %d bytes", n, err, size)
	}
	if d := time.Since(start); d < o.RequestTimeout {
		t.Errorf("the body took %v, less than the metadata timeout: the test proves nothing", d)
	}
	if b, _ := os.ReadFile(f.Name()); string(b) != strings.Repeat("x", size) {
		t.Errorf("file holds %q", b)
	}

	before := s.requests()
	_, err = c.Get(context.Background(), Request{URL: s.url(t, "/index.json"), MaxBytes: 1 << 20})
	if !errors.Is(err, ErrTimeout) || errors.Is(err, ErrIdleTimeout) {
		t.Errorf("metadata request: got %v, want ErrTimeout", err)
	}
	if n := s.requests() - before; n != 1 {
		t.Errorf("metadata request sent %d times, want 1: a timeout is not retried", n)
	}
}

// TestDefaults: a package download has no overall timeout by default (it
// lasts while data comes), metadata requests a short one, and a stall is
// ended by the idle timeout.
func TestDefaults(t *testing.T) {
	o := New(Options{}).Options()
	if o.DownloadTimeout != 0 && o.DownloadTimeout < time.Hour {
		t.Errorf("default DownloadTimeout %v: want none or at least an hour", o.DownloadTimeout)
	}
	if o.RequestTimeout <= 0 || o.RequestTimeout > time.Minute {
		t.Errorf("default RequestTimeout %v: want a short one", o.RequestTimeout)
	}
	if o.IdleTimeout <= 0 || o.IdleTimeout > 5*time.Minute {
		t.Errorf("default IdleTimeout %v", o.IdleTimeout)
	}
	if o.UserAgent != "tflock" || o.Client == nil {
		t.Errorf("defaults %+v", o)
	}
}

// TestRedirectLoop: a redirect loop is one chain of requests, not retried.
func TestRedirectLoop(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Path, http.StatusFound)
	})
	for _, mode := range []string{"Get", "Download"} {
		t.Run(mode, func(t *testing.T) {
			before := s.requests()
			c := New(fast(s.Client()))
			var err error
			if mode == "Get" {
				_, err = c.Get(context.Background(), Request{URL: s.url(t, "/loop"), MaxBytes: 1 << 20})
			} else {
				_, err = c.Download(context.Background(), Request{URL: s.url(t, "/loop"), MaxBytes: 1 << 20}, tempFile(t), nil, nil)
			}
			if !errors.Is(err, ErrTooManyRedirects) {
				t.Errorf("got %v, want ErrTooManyRedirects", err)
			}
			if n := s.requests() - before; n != MaxRedirects {
				t.Errorf("%d requests, want %d (one chain, no retry)", n, MaxRedirects)
			}
		})
	}
}

// TestCallerRedirectPolicy: an error of the caller's own redirect policy is
// not retried either.
func TestCallerRedirectPolicy(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	})
	hc := s.Client()
	refused := errors.New("no redirects here")
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return refused }
	_, err := New(fast(hc)).Get(context.Background(), Request{URL: s.url(t, "/a"), MaxBytes: 1 << 20})
	if !errors.Is(err, refused) || s.requests() != 1 {
		t.Errorf("got %v after %d requests, want the policy's error after 1", err, s.requests())
	}
}

// TestStatusRetries: 5xx and 429 are retried; other 4xx are not.
func TestStatusRetries(t *testing.T) {
	for _, tc := range []struct {
		statuses []int // the answers, in order; then 200
		requests int
		ok       bool
		is       error
	}{
		{[]int{503}, 2, true, nil},
		{[]int{500, 502}, 3, true, nil},
		{[]int{429}, 2, true, nil},
		{[]int{503, 503, 503}, 3, false, nil}, // 2 retries
		{[]int{404}, 1, false, source.ErrNotFound},
		{[]int{403}, 1, false, source.ErrUnauthorized},
		{[]int{401}, 1, false, source.ErrUnauthorized},
		{[]int{400}, 1, false, nil},
		{[]int{410}, 1, false, nil},
		{[]int{501}, 1, false, nil},
	} {
		t.Run(fmt.Sprint(tc.statuses), func(t *testing.T) {
			for _, mode := range []string{"Get", "Download"} {
				var i atomic.Int64
				s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
					k := int(i.Add(1)) - 1
					if k < len(tc.statuses) {
						w.Header().Set("Retry-After", "0")
						w.WriteHeader(tc.statuses[k])
						return
					}
					w.Write([]byte("body"))
				})
				c := New(fast(s.Client()))
				var err error
				if mode == "Get" {
					_, err = c.Get(context.Background(), Request{URL: s.url(t, "/x"), MaxBytes: 1 << 20})
				} else {
					_, err = c.Download(context.Background(), Request{URL: s.url(t, "/x"), MaxBytes: 1 << 20}, tempFile(t), nil, nil)
				}
				if (err == nil) != tc.ok {
					t.Errorf("%s: error %v, want success %v", mode, err, tc.ok)
				}
				if tc.is != nil && !errors.Is(err, tc.is) {
					t.Errorf("%s: error %v, want one matching %v", mode, err, tc.is)
				}
				var he *HTTPError
				if !tc.ok && !errors.As(err, &he) {
					t.Errorf("%s: error %v is not an *HTTPError", mode, err)
				}
				if n := s.requests(); n != tc.requests {
					t.Errorf("%s: %d requests, want %d", mode, n, tc.requests)
				}
			}
		})
	}
}

// TestConnectionErrorsRetried: a connection cut before the answer, and a
// body shorter than announced, are retried.
func TestConnectionErrorsRetried(t *testing.T) {
	var i atomic.Int64
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch i.Add(1) {
		case 1: // cut the connection without an answer
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		case 2: // announce 10 bytes, send 3, cut
			w.Header().Set("Content-Length", "10")
			w.Write([]byte("abc"))
			w.(http.Flusher).Flush()
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		default:
			w.Write([]byte("0123456789"))
		}
	})
	hc := s.Client()
	hc.Transport.(*http.Transport).ForceAttemptHTTP2 = false
	resets := 0
	f := tempFile(t)
	n, err := New(fast(hc)).Download(context.Background(), Request{URL: s.url(t, "/p.zip"), MaxBytes: 1 << 20}, f, nil, func() { resets++ })
	if err != nil || n != 10 {
		t.Fatalf("got %d bytes, %v; want 10 bytes after two retries", n, err)
	}
	if s.requests() != 3 || resets != 3 {
		t.Errorf("%d requests, %d resets; want 3 and 3", s.requests(), resets)
	}
	if b, _ := os.ReadFile(f.Name()); string(b) != "0123456789" {
		t.Errorf("file holds %q: an earlier attempt's bytes were kept", b)
	}
}

// failingWriter fails every write with err.
type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

// TestLocalWriteErrorNotRetried: a full disk, a quota or a read-only
// filesystem ends the download at once, naming the cause.
func TestLocalWriteErrorNotRetried(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT, syscall.EROFS} {
		t.Run(errno.Error(), func(t *testing.T) {
			s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Write([]byte(strings.Repeat("x", 4096)))
			})
			werr := &os.PathError{Op: "write", Path: "/cache/tmp/x", Err: errno}
			_, err := New(fast(s.Client())).Download(context.Background(), Request{URL: s.url(t, "/p.zip"), MaxBytes: 1 << 20}, tempFile(t), failingWriter{werr}, nil)
			if !errors.Is(err, errno) {
				t.Errorf("got %v, want %v", err, errno)
			}
			if n := s.requests(); n != 1 {
				t.Errorf("%d requests, want 1: a local write error is not retried", n)
			}
		})
	}
	t.Run("OtherWriteError", func(t *testing.T) {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("abc")) })
		werr := errors.New("checksum writer refused")
		_, err := New(fast(s.Client())).Download(context.Background(), Request{URL: s.url(t, "/p.zip"), MaxBytes: 1 << 20}, tempFile(t), failingWriter{werr}, nil)
		if !errors.Is(err, werr) || s.requests() != 1 {
			t.Errorf("got %v after %d requests, want the writer's error after 1", err, s.requests())
		}
	})
}

// TestAuthorizationOnRedirect: the token follows a redirect on the same
// host and is dropped when the redirect leads to another host (another
// port counts), also when the chain comes back.
func TestAuthorizationOnRedirect(t *testing.T) {
	const token = "s3cr3t"
	other := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if a := r.Header.Get("Authorization"); a != "" {
			t.Errorf("the other host got Authorization %q", a)
		}
		w.Write([]byte("from the other host"))
	})
	var sameHostAuth atomic.Value
	origin := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/same":
			http.Redirect(w, r, "/landing", http.StatusFound)
		case "/landing":
			sameHostAuth.Store(r.Header.Get("Authorization"))
			w.Write([]byte("landed"))
		case "/away":
			http.Redirect(w, r, other.URL+"/file", http.StatusFound)
		}
	})
	c := New(Options{Client: origin.Client()}) // trusts the test certificate, which both servers share
	resp, err := c.Get(context.Background(), Request{URL: origin.url(t, "/same"), Token: token, MaxBytes: 1 << 20})
	if err != nil || string(resp.Body) != "landed" {
		t.Fatalf("same-host redirect: %v", err)
	}
	if got, _ := sameHostAuth.Load().(string); got != "Bearer "+token {
		t.Errorf("same-host redirect: Authorization %q, want the token kept", got)
	}
	for _, mode := range []string{"Get", "Download"} {
		before := other.requests()
		if mode == "Get" {
			resp, err := c.Get(context.Background(), Request{URL: origin.url(t, "/away"), Token: token, MaxBytes: 1 << 20})
			if err != nil || string(resp.Body) != "from the other host" {
				t.Fatalf("%s: cross-host redirect: %v", mode, err)
			}
		} else if _, err := c.Download(context.Background(), Request{URL: origin.url(t, "/away"), Token: token, MaxBytes: 1 << 20}, tempFile(t), nil, nil); err != nil {
			t.Fatalf("%s: cross-host redirect: %v", mode, err)
		}
		if other.requests() != before+1 {
			t.Errorf("%s: the other host was not reached", mode)
		}
	}
}

func TestSameHost(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"https://r.example.test/a", "https://R.example.test/b", true},
		{"https://r.example.test/a", "https://r.example.test:443/b", true},
		{"http://r.example.test/a", "https://r.example.test/b", false},
		{"https://r.example.test/a", "https://s.r.example.test/b", false},
		{"https://127.0.0.1:1000/a", "https://127.0.0.1:1001/a", false},
		{"https://r.example.test/a", "https://r.example.test.evil.test/a", false},
	} {
		a, _ := url.Parse(tc.a)
		b, _ := url.Parse(tc.b)
		if got := SameHost(a, b); got != tc.same {
			t.Errorf("SameHost(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
}

// TestCancelNotRetried: the caller's context ending stops everything.
func TestCancelNotRetried(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { trickle(w, r, 100, 10*time.Millisecond) })
	ctx, cancel := context.WithTimeout(context.Background(), 80*time.Millisecond)
	defer cancel()
	_, err := New(fast(s.Client())).Download(ctx, Request{URL: s.url(t, "/p.zip"), MaxBytes: 1 << 20}, tempFile(t), nil, nil)
	if !errors.Is(err, context.DeadlineExceeded) || s.requests() != 1 {
		t.Errorf("got %v after %d requests, want context.DeadlineExceeded after 1", err, s.requests())
	}
}

// TestDowngradeAfterTheFact: with a client that is not an *http.Client (so
// its redirects cannot be steered), a response that ended on http is
// refused.
func TestDowngradeAfterTheFact(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("plain")) }))
	t.Cleanup(plain.Close)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, plain.URL, http.StatusFound) })
	_, err := New(fast(doer{s.Client()})).Get(context.Background(), Request{URL: s.url(t, "/"), MaxBytes: 1 << 20})
	if !errors.Is(err, ErrInsecureRedirect) || s.requests() != 1 {
		t.Errorf("got %v after %d requests, want ErrInsecureRedirect after 1", err, s.requests())
	}
}

type doer struct{ c *http.Client }

func (d doer) Do(r *http.Request) (*http.Response, error) { return d.c.Do(r) }

func TestTooLarge(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(strings.Repeat("x", 100))) })
	c := New(fast(s.Client()))
	if _, err := c.Get(context.Background(), Request{URL: s.url(t, "/"), MaxBytes: 10}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Get: %v", err)
	}
	if _, err := c.Download(context.Background(), Request{URL: s.url(t, "/"), MaxBytes: 10}, tempFile(t), io.Discard, nil); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Download: %v", err)
	}
	if s.requests() != 2 {
		t.Errorf("%d requests, want 2 (no retry)", s.requests())
	}
}

// TestStdClient: the client a source hands to another library (the OCI
// registry client) follows this package's redirect policy: the
// Authorization header does not follow a redirect to another host, and
// the given client's transport is kept.
func TestStdClient(t *testing.T) {
	var gotAuth []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth = append(gotAuth, r.Header.Get("Authorization"))
	}))
	defer other.Close()
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth = append(gotAuth, r.Header.Get("Authorization"))
		http.Redirect(w, r, other.URL+"/blob", http.StatusFound)
	}))
	defer first.Close()
	given := first.Client()
	c := StdClient(given)
	if c == given || c.Transport != given.Transport || given.CheckRedirect != nil {
		t.Fatal("StdClient must copy the client, keep its transport and leave the original alone")
	}
	req, err := http.NewRequest(http.MethodGet, first.URL+"/v2/x", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer secret")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(gotAuth) != 2 || gotAuth[0] != "Bearer secret" || gotAuth[1] != "" {
		t.Errorf("Authorization seen by the first host, then the other: %q; want it sent once, then dropped", gotAuth)
	}
	if StdClient(nil).Transport != DefaultTransport() {
		t.Error("StdClient(nil) does not use the shared transport")
	}
}

// A lock run sends dozens of requests to one registry at once. With no
// connection yet, each used to dial its own and pay a TLS handshake, all
// but one then dropped once HTTP/2 was agreed; now the first request's
// connection is awaited and shared.
func TestConcurrentFirstRequestsShareOneConnection(t *testing.T) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(5 * time.Millisecond)
		fmt.Fprint(w, "ok")
	}))
	srv.EnableHTTP2 = true
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	c := New(fast(srv.Client()))
	u, err := url.Parse(srv.URL + "/v1/x")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Get(context.Background(), Request{URL: u, MaxBytes: 1 << 10}); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("32 concurrent first requests opened %d connections, want 1 (HTTP/2)", n)
	}
}

// When the first request to a host fails before it has a connection, the
// requests held back behind it go on (and fail on their own), instead of
// waiting.
func TestHeldBackRequestsGoOnWhenTheFirstFails(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: connections are refused
	c := New(Options{Retries: 0})
	u, _ := url.Parse("https://" + addr + "/v1/x")
	var wg sync.WaitGroup
	done := make(chan struct{})
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Get(context.Background(), Request{URL: u, MaxBytes: 1 << 10}); err == nil {
				t.Error("a request to a closed port succeeded")
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("requests held back behind a failed first request never went on")
	}
}
