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
//
// With -downloads, floor makes the requests of a "providers lock" against a
// registry that does not send the packages field, so that every platform's
// package is downloaded and hashed: for every provider at once, its version
// list, then for each platform of the comma-separated list, all at once,
// the download response of its newest version and the package it names
// (read into memory and SHA-256'd), and, once per provider, SHA256SUMS and
// its signature together. It writes no file and checks no signature.
//
//	floor -downloads OS_ARCH,OS_ARCH... BASE NAMESPACE/TYPE...
//
// With -install, floor is the floor of a cold install of one large
// provider instead: it downloads the package at the URL given into a file
// of the directory DIR and, at the same time, writes SIZE bytes (the
// size of the package's contents) into a second file there, and nothing
// else: no checksum, no decompression, no hash. It is the time that the
// download and the writing of the same bytes into the page cache take on
// this machine, below which no installer can go.
//
//	floor -install DIR URL SIZE
package main

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/mod/semver"
)

func main() {
	platform := flag.String("platform", "linux_amd64", "the platform whose download response is asked for")
	installDir := flag.String("install", "", "download the package at URL into this directory and write SIZE bytes beside it")
	downloads := flag.String("downloads", "", "download and hash the package of each of these comma-separated platforms")
	flag.Parse()
	if *installDir != "" {
		if err := install(*installDir, flag.Args()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if flag.NArg() < 2 {
		fmt.Fprintln(os.Stderr, "usage: floor [-platform OS_ARCH | -downloads OS_ARCH,...] BASE NAMESPACE/TYPE...")
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
			var err error
			if *downloads != "" {
				err = lockDownloads(base, p, strings.Split(*downloads, ","))
			} else {
				err = lock(base, p, osName, arch)
			}
			if err != nil {
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
	newest, err := newestVersion(base, p)
	if err != nil {
		return err
	}
	var dl download
	if err := getJSON(base.JoinPath(p, newest, "download", osName, arch), &dl); err != nil {
		return err
	}
	return sums(base, dl)
}

// lockDownloads makes one provider's requests in the -downloads mode.
func lockDownloads(base *url.URL, p string, platforms []string) error {
	newest, err := newestVersion(base, p)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	errs := make([]error, len(platforms)+1)
	sumsAsked := make(chan download, len(platforms))
	for i, plat := range platforms {
		wg.Go(func() {
			osName, arch, _ := strings.Cut(plat, "_")
			var dl download
			if errs[i] = getJSON(base.JoinPath(p, newest, "download", osName, arch), &dl); errs[i] != nil {
				sumsAsked <- download{}
				return
			}
			sumsAsked <- dl
			u, err := base.Parse(dl.URL)
			if err != nil {
				errs[i] = err
				return
			}
			b, err := get(u)
			if err != nil {
				errs[i] = err
				return
			}
			sink.Add(uint64(sha256.Sum256(b)[0]))
		})
	}
	// SHA256SUMS and its signature once, when the first download
	// response names them.
	for range platforms {
		if dl := <-sumsAsked; dl.Sums != "" {
			errs[len(platforms)] = sums(base, dl)
			break
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

// sink keeps the hashes computed from being optimised away.
var sink atomic.Uint64

// download is the part of a download response floor reads.
type download struct {
	URL  string `json:"download_url"`
	Sums string `json:"shasums_url"`
	Sig  string `json:"shasums_signature_url"`
}

// newestVersion asks p's version list and answers its newest version.
func newestVersion(base *url.URL, p string) (string, error) {
	var list struct {
		Versions []struct {
			Version string `json:"version"`
		} `json:"versions"`
	}
	if err := getJSON(base.JoinPath(p, "versions"), &list); err != nil {
		return "", err
	}
	newest := ""
	for _, v := range list.Versions {
		if newest == "" || semver.Compare("v"+v.Version, "v"+newest) > 0 {
			newest = v.Version
		}
	}
	if newest == "" {
		return "", fmt.Errorf("no versions")
	}
	return newest, nil
}

// sums gets the SHA256SUMS and signature that dl names, together.
func sums(base *url.URL, dl download) error {
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

// install is the -install mode: the download of args[0] and the writing
// of args[1] bytes, at once.
func install(dir string, args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("usage: floor -install DIR URL SIZE")
	}
	size, err := strconv.ParseInt(args[1], 10, 64)
	if err != nil || size < 0 {
		return fmt.Errorf("SIZE %q: want a whole number of bytes", args[1])
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	written := make(chan error, 1)
	go func() {
		f, err := os.Create(filepath.Join(dir, "contents"))
		if err != nil {
			written <- err
			return
		}
		buf := make([]byte, 1<<20)
		for left := size; left > 0 && err == nil; left -= int64(len(buf)) {
			_, err = f.Write(buf[:min(left, int64(len(buf)))])
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		written <- err
	}()
	f, err := os.Create(filepath.Join(dir, "package.zip"))
	if err != nil {
		return err
	}
	resp, err := client.Get(args[0])
	if err == nil {
		_, err = io.Copy(f, resp.Body)
		resp.Body.Close()
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("GET %s: %s", args[0], resp.Status)
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if werr := <-written; err == nil {
		err = werr
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
