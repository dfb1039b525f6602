package main

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/oci/ocitest"
)

// A provider_installation block with an oci_mirror: providers come from an
// OCI registry in OpenTofu's provider mirror format, are locked with the
// zh: the mirror vouches for and the h1: of what is installed, and are
// found in the cache on the next run.
func TestCLIConfigOCIMirror(t *testing.T) {
	srv := ocitest.New(t, ocitest.ServerOptions{})
	ociTestClient = srv.Client()
	defer func() { ociTestClient = nil }()
	repo, err := srv.Repository("mirror/acme/tool")
	if err != nil {
		t.Fatal(err)
	}
	plats := []source.Platform{source.CurrentPlatform, {OS: "plan9", Arch: "arm"}}
	zips := map[string]map[source.Platform][]byte{}
	for _, v := range []string{"1.0.0", "1.3.0", "2.0.0"} {
		zips[v] = map[source.Platform][]byte{}
		for _, p := range plats {
			z, err := ocitest.Zip(map[string]string{"terraform-provider-tool_v" + v: "tool " + v + " for " + p.String()})
			if err != nil {
				t.Fatal(err)
			}
			zips[v][p] = z
		}
		if _, err := ocitest.PushProvider(context.Background(), repo, v, zips[v]); err != nil {
			t.Fatal(err)
		}
	}

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "main.tf"), toolConfig)
	cfgFile := filepath.Join(t.TempDir(), "tofu.tfrc")
	writeFile(t, cfgFile, `provider_installation {
  oci_mirror {
    repository_template = "`+srv.Host()+`/mirror/${namespace}/${type}"
    include             = ["example.test/*/*"]
  }
}
`)
	t.Setenv("TF_CLI_CONFIG_FILE", cfgFile)
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	cacheDir := t.TempDir()
	out, code := runLock(t, "-cache-dir", cacheDir, dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	lf, err := lockfile.ParseFile(filepath.Join(dir, ".terraform.lock.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	p := lf.Provider(mustProvider("example.test/acme/tool"))
	if p == nil || p.Version.String() != "1.3.0" {
		t.Fatalf("tool lock = %+v, want 1.3.0 (~> 1.0)\n%s", p, out)
	}
	// The zip's SHA-256 is its zh:, which the mirror's layer digest is.
	zh := hash.NewHash(hash.SchemeZH, sha256.Sum256(zips["1.3.0"][source.CurrentPlatform]))
	installed := filepath.Join(dir, ".terraform", "providers", "example.test", "acme", "tool", "1.3.0", source.CurrentPlatform.String())
	h1, err := hash.H1Dir(installed)
	if err != nil {
		t.Fatalf("not installed: %v\n%s", err, out)
	}
	if !containsHashOf(p.Hashes, zh) || !containsHashOf(p.Hashes, h1) {
		t.Errorf("tool hashes %v, want %s and %s", p.Hashes, zh, h1)
	}
	if b, err := os.ReadFile(filepath.Join(installed, "terraform-provider-tool_v1.3.0")); err != nil || string(b) != "tool 1.3.0 for "+source.CurrentPlatform.String() {
		t.Errorf("installed binary %q, %v", b, err)
	}

	// Again, in a fresh copy of the configuration with the lock file: the
	// package comes from the cache.
	dir2 := t.TempDir()
	writeFile(t, filepath.Join(dir2, "main.tf"), toolConfig)
	lock, _ := os.ReadFile(filepath.Join(dir, ".terraform.lock.hcl"))
	writeFile(t, filepath.Join(dir2, ".terraform.lock.hcl"), string(lock))
	out, code = runLock(t, "-cache-dir", cacheDir, dir2)
	if code != 0 || !strings.Contains(out, "0 version lists fetched, 0 packages downloaded.") || !strings.Contains(out, "No changes to ") {
		t.Errorf("second run: exit %d\n%s", code, out)
	}
}

func containsHashOf(hs []hash.Hash, h hash.Hash) bool {
	for _, x := range hs {
		if x == h {
			return true
		}
	}
	return false
}
