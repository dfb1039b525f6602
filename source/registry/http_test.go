package registry_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/registry"
	"github.com/tflock/tflock/source/registry/registrytest"
)

func TestFlakyServer(t *testing.T) {
	srv := registrytest.New(t, fixtures, registrytest.Options{FailFirst: 2})
	src, _ := newSource(srv, nil)
	pkg := providerPkg(t, "registry.example.test/hashicorp/aws", "5.1.0", "linux_amd64")
	if _, err := src.Fetch(context.Background(), pkg, filepath.Join(t.TempDir(), "p")); err != nil {
		t.Fatalf("Fetch against a server failing twice per path with 503: %v", err)
	}
	if n := srv.RequestsTo("/.well-known/terraform.json"); n != 3 {
		t.Errorf("discovery requested %d times, want 3 (two 503s, then 200)", n)
	}

	srv2 := registrytest.New(t, fixtures, registrytest.Options{FailFirst: 2})
	src2, _ := newSource(srv2, func(o *registry.Options) { o.Retries = -1 })
	_, err := src2.Versions(context.Background(), pkg)
	var he *registry.HTTPError
	if !errors.As(err, &he) || he.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("without retries: got %v, want an HTTPError 503", err)
	}
}

// TestRetryCount checks OpenTofu's retry rules: 2 retries by default,
// TF_PROVIDER_DOWNLOAD_RETRY when positive and Options.Retries is zero,
// Options.Retries over both. Each server fails its first 3 requests per path.
func TestRetryCount(t *testing.T) {
	pkg := providerPkg(t, "registry.example.test/hashicorp/aws", "", "")
	for _, tc := range []struct {
		name     string
		retries  int
		env      map[string]string
		attempts int // requests made to the discovery document
		ok       bool
	}{
		{"Default", 0, nil, 3, false},
		{"Env", 0, map[string]string{registry.RetryEnv: "3"}, 4, true},
		{"EnvZero", 0, map[string]string{registry.RetryEnv: "0"}, 3, false},
		{"EnvNotANumber", 0, map[string]string{registry.RetryEnv: "many"}, 3, false},
		{"OptionOverEnv", 1, map[string]string{registry.RetryEnv: "5"}, 2, false},
		{"None", -1, map[string]string{registry.RetryEnv: "5"}, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := registrytest.New(t, fixtures, registrytest.Options{FailFirst: 3})
			src, _ := newSource(srv, func(o *registry.Options) {
				o.Retries = tc.retries
				o.LookupEnv = func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
			})
			_, err := src.Versions(context.Background(), pkg)
			if (err == nil) != tc.ok {
				t.Errorf("error %v, want success %v", err, tc.ok)
			}
			if n := srv.RequestsTo("/.well-known/terraform.json"); n != tc.attempts {
				t.Errorf("discovery requested %d times, want %d", n, tc.attempts)
			}
		})
	}
	if registry.DefaultRetries != 2 {
		t.Errorf("DefaultRetries = %d, want OpenTofu's providerDownloadDefaultRetry, 2", registry.DefaultRetries)
	}
}

func TestSlowServer(t *testing.T) {
	srv := registrytest.New(t, fixtures, registrytest.Options{Latency: 300 * time.Millisecond})
	pkg := providerPkg(t, "registry.example.test/hashicorp/aws", "", "")

	t.Run("RequestTimeout", func(t *testing.T) {
		src, _ := newSource(srv, func(o *registry.Options) { o.RequestTimeout = 20 * time.Millisecond; o.Retries = 1 })
		start := time.Now()
		_, err := src.Versions(context.Background(), pkg)
		if err == nil || !strings.Contains(err.Error(), "timed out") {
			t.Errorf("got %v, want a timeout", err)
		}
		if d := time.Since(start); d > 250*time.Millisecond {
			t.Errorf("took %v; the per-request timeout was not applied", d)
		}
	})
	t.Run("Cancel", func(t *testing.T) {
		src, _ := newSource(srv, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		_, err := src.Versions(ctx, pkg)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("got %v, want context.DeadlineExceeded", err)
		}
	})
	t.Run("Latency", func(t *testing.T) {
		srv.SetLatency(5 * time.Millisecond)
		src, _ := newSource(srv, nil)
		if _, err := src.Versions(context.Background(), pkg); err != nil {
			t.Error(err)
		}
	})
}

// handlerServer is a TLS test server with a fixed handler, reached through
// a host override.
func handlerServer(t *testing.T, h http.HandlerFunc, mods ...func(*registry.Options)) (*httptest.Server, *registry.Source) {
	ts := httptest.NewTLSServer(h)
	t.Cleanup(ts.Close)
	o := registry.Options{
		HTTPClient:  ts.Client(),
		Credentials: registry.Tokens{},
		Hosts:       map[string]registry.Services{"registry.example.test": {"providers.v1": ts.URL + "/v1/providers/"}},
		MinBackoff:  time.Millisecond,
		MaxBackoff:  2 * time.Second,
		UserAgent:   "tflock-test/1",
	}
	for _, mod := range mods {
		mod(&o)
	}
	return ts, registry.NewSource(o)
}

func TestRetryAfter(t *testing.T) {
	var times []time.Time
	_, src := handlerServer(t, func(w http.ResponseWriter, r *http.Request) {
		times = append(times, time.Now())
		if len(times) == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.Write([]byte(`{"versions":[]}`))
	})
	if _, err := src.Versions(context.Background(), providerPkg(t, "registry.example.test/a/b", "", "")); err != nil {
		t.Fatal(err)
	}
	if len(times) != 2 || times[1].Sub(times[0]) < 900*time.Millisecond {
		t.Errorf("requests at %v; want a second one after Retry-After: 1", times)
	}
}

func TestUserAgentAndSizeLimit(t *testing.T) {
	var ua string
	ts, _ := handlerServer(t, func(w http.ResponseWriter, r *http.Request) {
		ua = r.Header.Get("User-Agent")
		w.Write([]byte(`{"versions":[` + strings.Repeat(`{"version":"1.0.0"},`, 100) + `{"version":"1.0.0"}]}`))
	})
	src := registry.NewSource(registry.Options{
		HTTPClient:       ts.Client(),
		Credentials:      registry.Tokens{},
		Hosts:            map[string]registry.Services{"registry.example.test": {"providers.v1": ts.URL + "/v1/providers/"}},
		UserAgent:        "tflock-test/1",
		MaxResponseBytes: 100,
	})
	_, err := src.Versions(context.Background(), providerPkg(t, "registry.example.test/a/b", "", ""))
	if !errors.Is(err, registry.ErrTooLarge) {
		t.Errorf("got %v, want ErrTooLarge", err)
	}
	if ua != "tflock-test/1" {
		t.Errorf("User-Agent %q", ua)
	}
}

func TestRedirectToHTTPRefused(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"versions":[]}`))
	}))
	t.Cleanup(plain.Close)
	_, src := handlerServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, plain.URL+r.URL.Path, http.StatusFound)
	})
	_, err := src.Versions(context.Background(), providerPkg(t, "registry.example.test/a/b", "", ""))
	if !errors.Is(err, registry.ErrInsecureRedirect) {
		t.Errorf("got %v, want ErrInsecureRedirect", err)
	}
}

func TestUnauthorized(t *testing.T) {
	const secret = "s3cr3t-t0ken"
	srv := registrytest.New(t, fixtures, registrytest.Options{Token: secret})
	pkg := providerPkg(t, "registry.example.test/hashicorp/aws", "", "")

	src, _ := newSource(srv, func(o *registry.Options) { o.Credentials = registry.Tokens{"registry.example.test": "wrong-" + secret} })
	_, err := src.Versions(context.Background(), pkg)
	if !errors.Is(err, source.ErrUnauthorized) {
		t.Errorf("got %v, want ErrUnauthorized", err)
	}
	if err != nil && strings.Contains(err.Error(), secret) {
		t.Errorf("the error text contains the token: %v", err)
	}

	env := registry.EnvCredentials([]string{registry.TokenVariable("registry.example.test") + "=" + secret})
	src, _ = newSource(srv, func(o *registry.Options) { o.Credentials = env })
	if _, err := src.Versions(context.Background(), pkg); err != nil {
		t.Errorf("with TF_TOKEN_registry_example_test: %v", err)
	}
}

// TestIdleTimeoutNotRetried: a registry that sends its headers and then
// stalls fails the request after Options.IdleTimeout, once (it used to be
// held for the whole timeout of each of 3 attempts).
func TestIdleTimeoutNotRetried(t *testing.T) {
	var n atomic.Int64
	_, src := handlerServer(t, func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Content-Length", "100")
		w.Write([]byte(`{"versions":`))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}, func(o *registry.Options) { o.IdleTimeout = 200 * time.Millisecond })
	_, err := src.Versions(context.Background(), providerPkg(t, "registry.example.test/a/b", "", ""))
	if !errors.Is(err, registry.ErrIdleTimeout) {
		t.Errorf("got %v, want ErrIdleTimeout", err)
	}
	if n.Load() != 1 {
		t.Errorf("%d requests, want 1: an idle timeout is not retried", n.Load())
	}
}

// TestRedirectLoopNotRetried: a redirect loop is one chain of requests.
func TestRedirectLoopNotRetried(t *testing.T) {
	var n atomic.Int64
	_, src := handlerServer(t, func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		http.Redirect(w, r, r.URL.Path, http.StatusFound)
	})
	_, err := src.Versions(context.Background(), providerPkg(t, "registry.example.test/a/b", "", ""))
	if !errors.Is(err, registry.ErrTooManyRedirects) {
		t.Errorf("got %v, want ErrTooManyRedirects", err)
	}
	if n.Load() != 10 {
		t.Errorf("%d requests, want 10 (one chain of redirects, no retry)", n.Load())
	}
}

// TestNotFoundNotRetried: a 404 or 403 is asked once.
func TestNotFoundNotRetried(t *testing.T) {
	for _, status := range []int{http.StatusNotFound, http.StatusForbidden, http.StatusBadRequest} {
		var n atomic.Int64
		_, src := handlerServer(t, func(w http.ResponseWriter, r *http.Request) {
			n.Add(1)
			w.WriteHeader(status)
		})
		_, err := src.Versions(context.Background(), providerPkg(t, "registry.example.test/a/b", "", ""))
		var he *registry.HTTPError
		if !errors.As(err, &he) || he.StatusCode != status {
			t.Errorf("%d: got %v", status, err)
		}
		if n.Load() != 1 {
			t.Errorf("%d: %d requests, want 1", status, n.Load())
		}
	}
}

// TestTokenDroppedOnCrossHostRedirect: the registry's token follows a
// redirect on its own host, and is not sent when the registry redirects to
// another host, even one with the same name on another port (Go's client
// alone would send it there).
func TestTokenDroppedOnCrossHostRedirect(t *testing.T) {
	const token = "s3cr3t-t0ken"
	other := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a := r.Header.Get("Authorization"); a != "" {
			t.Errorf("the other host got Authorization %q", a)
		}
		w.Write([]byte(`{"versions":[{"version":"1.0.0"}]}`))
	}))
	t.Cleanup(other.Close)
	var own atomic.Value
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/v1/providers/a/"):
			http.Redirect(w, r, "/moved"+r.URL.Path, http.StatusFound)
		case strings.HasPrefix(r.URL.Path, "/moved/"):
			own.Store(r.Header.Get("Authorization"))
			w.Write([]byte(`{"versions":[{"version":"1.0.0"}]}`))
		default:
			http.Redirect(w, r, other.URL+r.URL.Path, http.StatusFound)
		}
	}))
	t.Cleanup(ts.Close)
	src := registry.NewSource(registry.Options{
		HTTPClient:  ts.Client(), // trusts the test certificate, which both servers share
		Credentials: registry.Tokens{"registry.example.test": token},
		Hosts:       map[string]registry.Services{"registry.example.test": {"providers.v1": ts.URL + "/v1/providers/"}},
		LookupEnv:   noEnv,
	})
	if _, err := src.Versions(context.Background(), providerPkg(t, "registry.example.test/a/b", "", "")); err != nil {
		t.Fatal(err)
	}
	if got, _ := own.Load().(string); got != "Bearer "+token {
		t.Errorf("same-host redirect: Authorization %q, want the token", got)
	}
	if _, err := src.Versions(context.Background(), providerPkg(t, "registry.example.test/b/b", "", "")); err != nil {
		t.Fatal(err)
	}
}
