// Command floor makes the requests of a "providers lock" against a
// registry that sends OpenTofu 1.12's packages field, and nothing else: for
// every provider at once, its version list, the download response of its
// newest version for one platform, then SHA256SUMS and its signature
// together. It reads each answer whole and parses only the JSON it needs for
// the next request; it checks no signature, writes no file and reads no
// configuration. BenchmarkSideBySide runs it as the tool "floor": the time
// that a process start, Go's TLS with the system's certificate pool and the
// protocol's chain of requests take on this machine, which no client of the
// protocol can go below.
//
//	floor [-platform OS_ARCH] BASE NAMESPACE/TYPE...
//
// BASE is the registry's providers.v1 service URL.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"

	"golang.org/x/mod/semver"
)

func main() {
	platform := flag.String("platform", "linux_amd64", "the platform whose download response is asked for")
	flag.Parse()
	if flag.NArg() < 2 {
		fmt.Fprintln(os.Stderr, "usage: floor [-platform OS_ARCH] BASE NAMESPACE/TYPE...")
		os.Exit(2)
	}
	base, err := url.Parse(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	osName, arch, _ := strings.Cut(*platform, "_")
	var wg sync.WaitGroup
	errs := make(chan error, flag.NArg())
	for _, p := range flag.Args()[1:] {
		wg.Go(func() {
			if err := lock(base, p, osName, arch); err != nil {
				errs <- fmt.Errorf("%s: %w", p, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	code := 0
	for err := range errs {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

// lock makes one provider's requests.
func lock(base *url.URL, p, osName, arch string) error {
	var list struct {
		Versions []struct {
			Version string `json:"version"`
		} `json:"versions"`
	}
	if err := getJSON(base.JoinPath(p, "versions"), &list); err != nil {
		return err
	}
	newest := ""
	for _, v := range list.Versions {
		if newest == "" || semver.Compare("v"+v.Version, "v"+newest) > 0 {
			newest = v.Version
		}
	}
	if newest == "" {
		return fmt.Errorf("no versions")
	}
	var dl struct {
		Sums string `json:"shasums_url"`
		Sig  string `json:"shasums_signature_url"`
	}
	if err := getJSON(base.JoinPath(p, newest, "download", osName, arch), &dl); err != nil {
		return err
	}
	sums, err := base.Parse(dl.Sums)
	if err != nil {
		return err
	}
	sig, err := base.Parse(dl.Sig)
	if err != nil {
		return err
	}
	sigErr := make(chan error, 1)
	go func() { _, err := get(sig); sigErr <- err }()
	_, err = get(sums)
	if serr := <-sigErr; err == nil {
		err = serr
	}
	return err
}

func getJSON(u *url.URL, v any) error {
	b, err := get(u)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// client dials one connection to the registry, which every request shares
// (HTTP/2), as tflock's client does; without the bound, each request made
// before the first connection is up would dial and handshake its own.
var client = func() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxConnsPerHost = 1
	return &http.Client{Transport: t}
}()

func get(u *url.URL) ([]byte, error) {
	resp, err := client.Get(u.String())
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return b, err
}
