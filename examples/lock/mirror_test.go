package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/source"
)

// toolPlatforms are the platforms the mirrors below serve; providers-lock
// asks for all of them, none of which needs to be this machine's.
var toolPlatforms = []string{"linux_amd64", "darwin_arm64", "windows_amd64"}

const toolConfig = `terraform {
  required_providers {
    tool = { source = "example.test/acme/tool", version = "~> 1.0" }
  }
}
`

// packedMirror writes a filesystem mirror in the packed layout holding
// example.test/acme/tool 1.3.0 for toolPlatforms, and returns its
// directory and each platform's h1: (computed from the zip).
func packedMirror(t *testing.T) (string, map[string]hash.Hash) {
	t.Helper()
	dir := t.TempDir()
	h1s := map[string]hash.Hash{}
	for _, p := range toolPlatforms {
		zip := filepath.Join(dir, "example.test", "acme", "tool", "terraform-provider-tool_1.3.0_"+p+".zip")
		writeZip(t, zip, map[string]string{"terraform-provider-tool_v1.3.0": "tool for " + p})
		h, err := hash.H1Zip(zip)
		if err != nil {
			t.Fatal(err)
		}
		h1s[p] = h
	}
	return dir, h1s
}

func providersLockArgs(extra ...string) []string {
	args := []string{"providers-lock"}
	for _, p := range toolPlatforms {
		args = append(args, "-platform", p)
	}
	return append(args, extra...)
}

// checkToolLock checks that the lock file in dir selects 1.3.0 and records
// the h1: of every platform, and that nothing was installed.
func checkToolLock(t *testing.T, dir string, h1s map[string]hash.Hash, out string) {
	t.Helper()
	lf, err := lockfile.ParseFile(filepath.Join(dir, ".terraform.lock.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	p := lf.Provider(mustProvider("example.test/acme/tool"))
	if p == nil || p.Version.String() != "1.3.0" {
		t.Fatalf("tool lock = %+v\n%s", p, out)
	}
	for plat, h := range h1s {
		found := false
		for _, got := range p.Hashes {
			found = found || got == h
		}
		if !found {
			t.Errorf("tool hashes %v lack %s's %s\n%s", p.Hashes, plat, h, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".terraform")); !os.IsNotExist(err) {
		t.Errorf("providers-lock installed something: %v", err)
	}
}

func TestProvidersLockFSMirror(t *testing.T) {
	mirrorDir, h1s := packedMirror(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "main.tf"), toolConfig)
	t.Setenv("TF_CLI_CONFIG_FILE", filepath.Join(dir, "none.tfrc"))
	out, code := runLock(t, providersLockArgs("-cache-dir", t.TempDir(), "-fs-mirror", mirrorDir, dir)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "Locking providers for "+strings.Join(toolPlatforms, ", ")) {
		t.Errorf("output lacks the platforms:\n%s", out)
	}
	checkToolLock(t, dir, h1s, out)
}

func TestProvidersLockNetMirror(t *testing.T) {
	mirrorDir, h1s := packedMirror(t)
	// A network mirror (OpenTofu's provider network mirror protocol)
	// serving the same packages.
	mux := http.NewServeMux()
	base := "/example.test/acme/tool/"
	mux.HandleFunc(base+"index.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"versions":{"1.3.0":{}}}`))
	})
	mux.HandleFunc(base+"1.3.0.json", func(w http.ResponseWriter, r *http.Request) {
		archives := map[string]any{}
		for _, p := range toolPlatforms {
			archives[p] = map[string]any{"url": "terraform-provider-tool_1.3.0_" + p + ".zip", "hashes": []string{h1s[p].String()}}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"archives": archives})
	})
	mux.Handle(base, http.StripPrefix(base, http.FileServer(http.Dir(filepath.Join(mirrorDir, "example.test", "acme", "tool")))))
	srv := httptest.NewTLSServer(mux)
	defer srv.Close()
	netMirrorClient = srv.Client()
	defer func() { netMirrorClient = nil }()

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "main.tf"), toolConfig)
	t.Setenv("TF_CLI_CONFIG_FILE", filepath.Join(dir, "none.tfrc"))
	out, code := runLock(t, providersLockArgs("-cache-dir", t.TempDir(), "-net-mirror", srv.URL+"/", dir)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	checkToolLock(t, dir, h1s, out)
	// Each platform's package was downloaded, with progress drawn.
	for _, p := range toolPlatforms {
		if !strings.Contains(out, "- Downloading example.test/acme/tool 1.3.0 ("+p+")...") {
			t.Errorf("output lacks the download of %s:\n%s", p, out)
		}
	}
}

// TestRealDirReadOnly: -lockfile=readonly on a real directory refuses a
// change of selection and leaves the lock file as it was.
func TestRealDirReadOnly(t *testing.T) {
	mirrorDir, _ := packedMirror(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "main.tf"), strings.Replace(toolConfig, "~> 1.0", "1.2.0", 1))
	plat := source.CurrentPlatform.String()
	for _, v := range []string{"1.2.0", "1.3.0"} {
		writeZip(t, filepath.Join(mirrorDir, "example.test", "acme", "tool", "terraform-provider-tool_"+v+"_"+plat+".zip"),
			map[string]string{"terraform-provider-tool_v" + v: "tool " + v})
	}
	t.Setenv("TF_CLI_CONFIG_FILE", filepath.Join(dir, "none.tfrc"))
	common := []string{"-cache-dir", t.TempDir(), "-plugin-dir", mirrorDir}
	out, code := runLock(t, append(common, dir)...)
	if code != 0 {
		t.Fatalf("first init: exit %d\n%s", code, out)
	}
	lockPath := filepath.Join(dir, ".terraform.lock.hcl")
	before, err := os.ReadFile(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "main.tf"), toolConfig)
	out, code = runLock(t, append(common, "-lockfile=readonly", "-upgrade", dir)...)
	if code != 1 || !strings.Contains(out, "the lock file is read-only") || !strings.Contains(out, "example.test/acme/tool: upgraded 1.2.0 to 1.3.0") {
		t.Errorf("read-only upgrade: exit %d, want 1 naming the refused upgrade:\n%s", code, out)
	}
	after, err := os.ReadFile(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Errorf("read-only run changed the lock file:\n%s", after)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
