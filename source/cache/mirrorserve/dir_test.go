package mirrorserve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache/mirrorserve"
	"github.com/tflock/tflock/source/registry/registrytest"
)

func lockWith(t *testing.T, hashes ...string) *lockfile.File {
	t.Helper()
	var hs string
	for _, h := range hashes {
		hs += fmt.Sprintf("    %q,\n", h)
	}
	src := fmt.Sprintf("provider %q {\n  version = %q\n  hashes = [\n%s  ]\n}\n", addr, version, hs)
	if len(hashes) == 0 {
		src = fmt.Sprintf("provider %q {\n  version = %q\n}\n", addr, version)
	}
	f, err := lockfile.Parse([]byte(src), ".terraform.lock.hcl")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func platforms(t *testing.T, names ...string) []source.Platform {
	t.Helper()
	var out []source.Platform
	for _, n := range names {
		p, err := source.ParsePlatform(n)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// WriteDir writes the packed layout and the network mirror's JSON files,
// each archive the origin's, checked against the lock file; a second run
// keeps what is there and downloads nothing.
func TestWriteDir(t *testing.T) {
	e := newEnv(t, registrytest.Options{})
	signed := e.signed(t)
	var all []string
	for _, h := range signed {
		all = append(all, h)
	}
	lock := lockWith(t, all...)
	dir := t.TempDir()
	opts := mirrorserve.DirOptions{Source: e.src, Cache: e.cache, Platforms: platforms(t, "linux_amd64", "darwin_arm64")}
	res, err := mirrorserve.WriteDir(context.Background(), dir, lock, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Written) != 2 || res.Fetched != 2 {
		t.Errorf("first run: %+v", res)
	}
	pdir := filepath.Join(dir, filepath.FromSlash(addr))
	for _, p := range []string{"linux_amd64", "darwin_arm64"} {
		b, err := os.ReadFile(filepath.Join(pdir, "terraform-provider-cloud_1.2.0_"+p+".zip"))
		if err != nil {
			t.Fatal(err)
		}
		if zhOf(b) != signed[p] {
			t.Errorf("%s: zh %s, want the signed %s", p, zhOf(b), signed[p])
		}
	}
	var doc versionDoc
	b, err := os.ReadFile(filepath.Join(pdir, version+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Archives) != 2 {
		t.Errorf("VERSION.json: %s", b)
	}
	for p, a := range doc.Archives {
		if len(a.Hashes) != 2 || !contains(a.Hashes, signed[p]) || !strings.HasPrefix(a.Hashes[0], "h1:") {
			t.Errorf("%s: hashes %v", p, a.Hashes)
		}
	}
	if b, err := os.ReadFile(filepath.Join(pdir, "index.json")); err != nil || !strings.Contains(string(b), `"1.2.0"`) {
		t.Errorf("index.json: %s %v", b, err)
	}

	res, err = mirrorserve.WriteDir(context.Background(), dir, lock, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Kept) != 2 || len(res.Written) != 0 || res.Fetched != 0 {
		t.Errorf("second run: %+v", res)
	}
	if n := e.downloads(t, "linux_amd64"); n != 1 {
		t.Errorf("%d downloads of linux_amd64, want 1", n)
	}
}

// A lock file the origin's package does not match gets nothing written;
// one without hashes cannot vouch for anything.
func TestWriteDirVerifiesAgainstTheLock(t *testing.T) {
	e := newEnv(t, registrytest.Options{})
	dir := t.TempDir()
	opts := mirrorserve.DirOptions{Source: e.src, Cache: e.cache, Platforms: platforms(t, "linux_amd64")}
	wrong := lockWith(t, "zh:"+strings.Repeat("ab", 32))
	if _, err := mirrorserve.WriteDir(context.Background(), dir, wrong, opts); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("a lock the package does not match: %v", err)
	}
	if _, err := mirrorserve.WriteDir(context.Background(), dir, lockWith(t), opts); err == nil || !strings.Contains(err.Error(), addr) {
		t.Errorf("a lock without hashes: %v", err)
	}
	var left []string
	_ = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			left = append(left, p)
		}
		return nil
	})
	if len(left) != 0 {
		t.Errorf("files left: %v", left)
	}
}

// What a killed run left in an archive directory is swept by New when it
// is old enough to be nobody's work any more; a recent one is left.
func TestNewSweepsDebris(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "registry.example.test", "acme", "cloud", ".tflock-tmp-1")
	recent := filepath.Join(dir, "registry.example.test", "acme", "cloud", ".tflock-tmp-2")
	for _, d := range []string{old, recent} {
		if err := os.MkdirAll(filepath.Join(d, "fetch"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "package.zip"), []byte("half"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	then := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(old, then, then); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, registrytest.Options{})
	if _, err := mirrorserve.New(mirrorserve.Options{Source: e.src, Cache: e.cache, Dir: dir}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("the old work directory is still there: %v", err)
	}
	if _, err := os.Stat(recent); err != nil {
		t.Errorf("a recent work directory was removed: %v", err)
	}
}

// An archive of another platform put in a platform's place is not kept,
// although the lock file records its hash too (a lock file's hashes cover
// every platform): the origin says which hash is whose.
func TestWriteDirTellsPlatformsApart(t *testing.T) {
	e := newEnv(t, registrytest.Options{})
	var all []string
	for _, h := range e.signed(t) {
		all = append(all, h)
	}
	lock := lockWith(t, all...)
	dir := t.TempDir()
	opts := mirrorserve.DirOptions{Source: e.src, Cache: e.cache, Platforms: platforms(t, "linux_amd64", "darwin_arm64")}
	if _, err := mirrorserve.WriteDir(context.Background(), dir, lock, opts); err != nil {
		t.Fatal(err)
	}
	pdir := filepath.Join(dir, filepath.FromSlash(addr))
	darwin, err := os.ReadFile(filepath.Join(pdir, "terraform-provider-cloud_1.2.0_darwin_arm64.zip"))
	if err != nil {
		t.Fatal(err)
	}
	linux := filepath.Join(pdir, zipName)
	if err := os.WriteFile(linux, darwin, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := mirrorserve.WriteDir(context.Background(), dir, lock, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Written) != 1 || res.Written[0].Platform.String() != "linux_amd64" {
		t.Errorf("the darwin archive in linux's place was kept: %+v", res)
	}
	if b, err := os.ReadFile(linux); err != nil || zhOf(b) != e.signed(t)["linux_amd64"] {
		t.Errorf("linux_amd64 archive is not the signed one (%v): res %+v got %s", err, res, zhOf(b))
	}
}
