package install_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/dirhash"

	"github.com/tflock/tflock/internal/benchdata"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/registry"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// bigProviderMiB is the size of the executable of BenchmarkInstallProvider's
// provider: TFLOCK_BENCH_PROVIDER_MIB, default 400 (a large real provider
// is 400 to 650 MB unpacked).
func bigProviderMiB(b *testing.B) int {
	if s := os.Getenv("TFLOCK_BENCH_PROVIDER_MIB"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			b.Fatalf("TFLOCK_BENCH_PROVIDER_MIB=%q: want a positive whole number", s)
		}
		return n
	}
	return 400
}

const bigProviderTF = `terraform {
  required_providers {
    big = {
      source  = "registry.example.test/acme/big"
      version = "1.0.0"
    }
  }
}
`

// BenchmarkInstallProvider installs one large provider (provider-like
// contents, see internal/benchdata) from a registry in this process, each
// way measured in the same run as its baseline:
//
//   - cold: nothing installed, no lock file, an empty cache;
//   - warm: the lock file, the install and the cache present.
//
// way=opentofu is the baseline, OpenTofu's passes over the package done
// with the libraries it uses: cold, the zip downloaded to a file, read
// again for its SHA-256, extracted with archive/zip, and the installed
// tree read again by dirhash.HashDir for the lock file; warm, one request
// (the version list) and the installed tree hashed by dirhash.HashDir.
// way=tflock is install.Init. peak-heap-MB is the largest growth of the
// heap in use (runtime.MemStats.HeapInuse, read every 5 ms) over what it
// was when the sub-benchmark started, for the goal of less than 64 MB for
// any package size.
func BenchmarkInstallProvider(b *testing.B) {
	mib := bigProviderMiB(b)
	plat := source.CurrentPlatform.String()
	srv := registrytest.New(b, registrytest.Fixtures{Providers: []registrytest.Provider{{
		Addr:     "registry.example.test/acme/big",
		Versions: []registrytest.ProviderVersion{{Version: "1.0.0", Platforms: []string{plat}, Size: mib << 20, Binary: true}},
	}}}, registrytest.Options{})
	info, ok := srv.ProviderPackage("registry.example.test/acme/big", "1.0.0", plat)
	if !ok {
		b.Fatal("no package")
	}
	b.Logf("provider: %d MiB executable, %.1f MB zip", mib, float64(info.Size)/1e6)

	tflockInit := func(b *testing.B, dir, cacheDir string) *install.Result {
		c, err := cache.Open(cacheDir, cache.Options{})
		if err != nil {
			b.Fatal(err)
		}
		client := srv.Client()
		defer client.CloseIdleConnections()
		res, err := install.Init(context.Background(), install.Options{Dir: dir, Source: registry.NewSource(registry.Options{HTTPClient: client}), Cache: c})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := install.WriteLock(filepath.Join(dir, install.LockFileName), res); err != nil {
			b.Fatal(err)
		}
		return res
	}
	tofuCold := func(b *testing.B, dir string) {
		client := srv.Client()
		defer client.CloseIdleConnections()
		pkgDir := filepath.Join(dir, ".terraform", "providers", "registry.example.test", "acme", "big", "1.0.0", plat)
		if err := tofuWayInstall(client, srv.URL, plat, filepath.Join(dir, ".terraform"), pkgDir, info.ZH.Value()); err != nil {
			b.Fatal(err)
		}
	}
	fresh := func(b *testing.B) (dir, cacheDir string) {
		root := b.TempDir()
		dir, cacheDir = filepath.Join(root, "config"), filepath.Join(root, "cache")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(bigProviderTF), 0o644); err != nil {
			b.Fatal(err)
		}
		return dir, cacheDir
	}

	b.Run("phase=cold/way=opentofu", func(b *testing.B) {
		peak := watchHeap(b)
		for b.Loop() {
			b.StopTimer()
			dir, _ := fresh(b)
			b.StartTimer()
			tofuCold(b, dir)
		}
		peak.report()
	})
	b.Run("phase=cold/way=tflock", func(b *testing.B) {
		peak := watchHeap(b)
		for b.Loop() {
			b.StopTimer()
			dir, cacheDir := fresh(b)
			b.StartTimer()
			if res := tflockInit(b, dir, cacheDir); res.Downloads != 1 {
				b.Fatalf("downloads = %d, want 1", res.Downloads)
			}
		}
		peak.report()
	})
	b.Run("phase=warm/way=opentofu", func(b *testing.B) {
		dir, _ := fresh(b)
		tofuCold(b, dir)
		pkgDir := filepath.Join(dir, ".terraform", "providers", "registry.example.test", "acme", "big", "1.0.0", plat)
		want, err := dirhash.HashDir(pkgDir, "", dirhash.Hash1)
		if err != nil {
			b.Fatal(err)
		}
		client := srv.Client()
		for b.Loop() {
			if err := tofuWayWarm(client, srv.URL, pkgDir, want); err != nil {
				b.Fatal(err)
			}
		}
		client.CloseIdleConnections()
	})
	b.Run("phase=warm/way=tflock", func(b *testing.B) {
		dir, cacheDir := fresh(b)
		tflockInit(b, dir, cacheDir)
		before := srv.Requests()
		peak := watchHeap(b)
		for b.Loop() {
			res := tflockInit(b, dir, cacheDir)
			if !res.Providers[0].Reused {
				b.Fatal("the warm run did not keep the install")
			}
		}
		peak.report()
		b.ReportMetric(float64(srv.Requests()-before)/float64(b.N), "requests/op")
	})
}

// tofuWayInstall installs the provider as OpenTofu does, pass by pass: the
// download metadata, the zip downloaded to a file, the file read again for
// its SHA-256, extracted with archive/zip, the tree hashed for the lock.
func tofuWayInstall(client *http.Client, base, plat, installDir, pkgDir, shasum string) error {
	osName, arch, _ := strings.Cut(plat, "_")
	var meta struct {
		DownloadURL string `json:"download_url"`
		Shasum      string `json:"shasum"`
	}
	if err := getJSON(client, fmt.Sprintf("%s/v1/providers/acme/big/1.0.0/download/%s/%s", base, osName, arch), &meta); err != nil {
		return err
	}
	if meta.Shasum != shasum {
		return fmt.Errorf("shasum %s, want %s", meta.Shasum, shasum)
	}
	u := meta.DownloadURL
	if !strings.HasPrefix(u, "https://") {
		u = base + u
	}
	if err := os.MkdirAll(installDir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(installDir, "download-*.zip")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	resp, err := client.Get(u)
	if err != nil {
		return err
	}
	_, err = io.Copy(tmp, resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return err
	}
	h := sha256.New()
	if _, err := io.Copy(h, tmp); err != nil {
		return err
	}
	tmp.Close()
	if hex.EncodeToString(h.Sum(nil)) != shasum {
		return fmt.Errorf("checksum mismatch")
	}
	if err := benchdata.ExtractStd(tmp.Name(), pkgDir); err != nil {
		return err
	}
	_, err = dirhash.HashDir(pkgDir, "", dirhash.Hash1)
	return err
}

// tofuWayWarm is OpenTofu's warm init of the provider: the version list
// asked for, and the installed package hashed and compared with the lock.
func tofuWayWarm(client *http.Client, base, pkgDir, want string) error {
	var versions json.RawMessage
	if err := getJSON(client, base+"/v1/providers/acme/big/versions", &versions); err != nil {
		return err
	}
	got, err := dirhash.HashDir(pkgDir, "", dirhash.Hash1)
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("installed package hashes to %s, want %s", got, want)
	}
	return nil
}

func getJSON(client *http.Client, u string, v any) error {
	resp, err := client.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// heapWatch records the largest growth of the heap in use during a
// benchmark, over what was in use when it started (the in-process
// registry's packages among it).
type heapWatch struct {
	b    *testing.B
	base uint64
	stop chan struct{}
	done chan uint64
}

// watchHeap samples runtime.MemStats.HeapInuse every few milliseconds
// until report.
func watchHeap(b *testing.B) *heapWatch {
	runtime.GC()
	var ms0 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	w := &heapWatch{b: b, base: ms0.HeapInuse, stop: make(chan struct{}), done: make(chan uint64)}
	go func() {
		var peak uint64
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-w.stop:
				w.done <- peak
				return
			default:
			}
			select {
			case <-w.stop:
				w.done <- peak
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return w
}

func (w *heapWatch) report() {
	close(w.stop)
	w.b.ReportMetric(float64(max(<-w.done, w.base)-w.base)/1e6, "peak-heap-MB")
}
