package install_test

import (
	"archive/zip"
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/source/assemble"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/registry"
)

// TestAttackHTTPGetOldLockCacheOfAnotherSource: an HTTP module whose URL
// answers "X-Terraform-Get: ./pkg.zip//modules/good", a lock written
// before tflock recorded the subdirectory (the package root, then), and a
// cache that holds the same archive only under another source whose
// answer names the root. Without the cache, the location's subdirectory
// is a change (refused read-only); the cache must not turn it into the
// root installed silently.
func TestAttackHTTPGetOldLockCacheOfAnotherSource(t *testing.T) {
	w := startArchiveWorld(t, false)
	u := w.srv.URL
	w.set("/pkg.zip", monoFiles)
	w.setGet("/app", "./pkg.zip//modules/good")
	w.setGet("/other", "./pkg.zip")
	src := &assemble.Dispatch{HTTP: registry.NewArchiveSource(registry.Options{HTTPClient: w.srv.Client(), Credentials: registry.Tokens{}})}

	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": "module \"app\" {\n  source = \"" + u + "/app\"\n}\n"})
	initAndWrite(t, install.Options{Dir: dir, Source: src, Cache: openCache(t)})
	lock := readLock(t, dir)
	old := strings.Replace(lock, "  subdir = \"modules/good\"\n", "", 1)
	if old == lock {
		t.Fatalf("lock:\n%s", lock)
	}
	writeFiles(t, dir, map[string]string{install.LockFileName: old})

	// Without the cache's help: a change.
	freshMachine(t, dir)
	if _, err := install.Init(context.Background(), install.Options{Dir: dir, Source: src, Cache: openCache(t), ReadOnly: true}); err == nil {
		t.Fatalf("read-only Init with an empty cache accepted the location's subdirectory for an old lock; the test's premise is wrong")
	}

	c := openCache(t)
	other := t.TempDir()
	writeFiles(t, other, map[string]string{"main.tf": "module \"other\" {\n  source = \"" + u + "/other\"\n}\n"})
	initAndWrite(t, install.Options{Dir: other, Source: src, Cache: c})
	freshMachine(t, dir)
	_, err := install.Init(context.Background(), install.Options{Dir: dir, Source: src, Cache: c, ReadOnly: true})
	if err == nil || !strings.Contains(err.Error(), "modules/good") {
		t.Errorf("read-only Init with another source's entry in the cache: %v, want a refusal naming the subdirectory; installed %v", err, installedDirs(t, dir))
	}
}

// TestAttackZipDuplicateNames: a module archive that holds one name
// twice, with different contents (tflock's h1: and an extractor that
// keeps the first or the last entry could then disagree on what was
// installed). It is refused, from an HTTP origin, and through the cache.
func TestAttackZipDuplicateNames(t *testing.T) {
	for _, second := range []string{"main.tf", "./main.tf", "x/../main.tf", "//main.tf"} {
		t.Run(second, func(t *testing.T) { zipDuplicate(t, second) })
	}
}

func zipDuplicate(t *testing.T, second string) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i, body := range []string{"output \"which\" {\n  value = \"good\"\n}\n", "output \"which\" {\n  value = \"evil\"\n}\n"} {
		name := "main.tf"
		if i == 1 {
			name = second
		}
		f, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { _, _ = rw.Write(buf.Bytes()) }))
	t.Cleanup(srv.Close)
	src := &assemble.Dispatch{HTTP: registry.NewArchiveSource(registry.Options{HTTPClient: srv.Client(), Credentials: registry.Tokens{}})}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": "module \"app\" {\n  source = \"" + srv.URL + "/pkg.zip\"\n}\n"})
	for _, c := range []*cache.Cache{nil, openCache(t)} {
		opts := install.Options{Dir: dir, Source: src}
		if c != nil {
			opts.Cache = c
		}
		if _, err := install.Init(context.Background(), opts); err == nil {
			b, _ := os.ReadFile(filepath.Join(dir, ".terraform", "modules", "app", "main.tf"))
			t.Errorf("cache=%v: Init accepted a zip holding main.tf twice; installed %q", c != nil, b)
		}
	}
}
