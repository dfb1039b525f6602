package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source"
)

func runLock(t *testing.T, args ...string) (string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, &out, &errOut)
	return out.String() + errOut.String(), code
}

func TestSampleDemo(t *testing.T) {
	if err := installtest.HaveGit(); err != nil {
		t.Skip(err)
	}
	tmp := t.TempDir()
	work, cacheDir := filepath.Join(tmp, "work"), filepath.Join(tmp, "cache")
	common := []string{"-work", work, "-cache-dir", cacheDir}

	out, code := runLock(t, common...)
	if code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, out)
	}
	for _, want := range []string{
		"Copying the sample configuration to " + work,
		`module "storage": added`,
		`module "network": repinned at 1.0.0`,
		"Review those changes",
		// Progress: Init's events and the sources' bytes done/total.
		"- Finding versions of registry.example.test/acme/cloud...",
		"- Selected registry.example.test/acme/cloud 1.0.0 (locked)",
		// The OCI call's source says "?tag=1.0.0", and so does its line.
		"- Selected oci://oci.example.test/modules/storage?tag=1.0.0 (pinned)",
		"- Downloading registry.example.test/acme/cloud 1.0.0 (" + source.CurrentPlatform.String() + ")...",
		"bytes (100%)",
		"- Verified registry.example.test/acme/cloud 1.0.0 (" + source.CurrentPlatform.String() + "): checksum signed by key ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("first run output lacks %q:\n%s", want, out)
		}
	}
	// Init and the registry source both report the download: drawn once.
	if n := strings.Count(out, "- Downloading registry.example.test/acme/cloud 1.0.0 ("); n != 1 {
		t.Errorf("the download of acme/cloud is drawn %d times, want once:\n%s", n, out)
	}
	lf, err := lockfile.ParseFile(filepath.Join(work, ".terraform.lock.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	if m := lf.Module("storage"); m == nil || !strings.HasPrefix(m.Digest, "sha256:") {
		t.Errorf("storage lock = %+v", m)
	}
	first, _ := os.ReadFile(filepath.Join(work, ".terraform.lock.hcl"))

	out, code = runLock(t, common...)
	if code != 0 {
		t.Fatalf("second run: exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "0 version lists fetched, 0 packages downloaded.") || !strings.Contains(out, "No changes to ") {
		t.Errorf("second run should change nothing and contact nothing:\n%s", out)
	}
	second, _ := os.ReadFile(filepath.Join(work, ".terraform.lock.hcl"))
	if !bytes.Equal(first, second) {
		t.Error("second run changed the lock file")
	}

	// Read-only with an added provider: refused.
	if err := os.WriteFile(filepath.Join(work, "extra.tf"), []byte(`module "vpc2" {
  source  = "registry.example.test/acme/vpc/cloud"
  version = "~> 1.0"
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code = runLock(t, append(common, "-lockfile=readonly", "-upgrade")...)
	if code != 1 || !strings.Contains(out, "lock file is read-only") {
		t.Errorf("read-only run: exit %d, want 1 with a read-only error:\n%s", code, out)
	}
	os.Remove(filepath.Join(work, "extra.tf"))

	out, code = runLock(t, append(common, "-upgrade")...)
	if code != 0 {
		t.Fatalf("upgrade run: exit %d\n%s", code, out)
	}
	for _, want := range []string{
		"registry.example.test/acme/cloud: upgraded 1.0.0 to 1.1.0",
		"registry.example.test/acme/dns: upgraded 2.0.0 to 2.1.0",
		`module "network": upgraded 1.0.0 to 1.1.0`,
		`module "vpc": upgraded 1.0.0 to 1.1.0`,
		"- Selected registry.example.test/acme/cloud 1.1.0 (upgraded from 1.0.0)",
		"- Selected registry.example.test/acme/vpc/cloud 1.1.0 (upgraded from 1.0.0)",
		"4 version lists fetched,",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("upgrade output lacks %q:\n%s", want, out)
		}
	}
	// Upgrading again finds nothing newer, and says so: it said
	// "(upgraded)" of the versions it kept.
	out, code = runLock(t, append(common, "-upgrade")...)
	if code != 0 {
		t.Fatalf("second upgrade run: exit %d\n%s", code, out)
	}
	for _, want := range []string{
		"- Selected registry.example.test/acme/cloud 1.1.0 (already the newest)",
		"- Selected registry.example.test/acme/vpc/cloud 1.1.0 (already the newest)",
		"No changes to ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("second upgrade output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "(upgraded") {
		t.Errorf("second upgrade output says upgraded:\n%s", out)
	}

	// providers-lock for two more platforms adds their h1: hashes.
	plats := installtest.Platforms()
	args := []string{"providers-lock"}
	for _, p := range plats {
		args = append(args, "-platform", p)
	}
	out, code = runLock(t, append(args, common...)...)
	if code != 0 {
		t.Fatalf("providers-lock: exit %d\n%s", code, out)
	}
	lf, err = lockfile.ParseFile(filepath.Join(work, ".terraform.lock.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	h1 := 0
	for _, h := range lf.ProviderHashes(mustProvider("registry.example.test/acme/cloud")) {
		if h.Scheme() == "h1:" {
			h1++
		}
	}
	if h1 != len(plats) {
		t.Errorf("after providers-lock for %v, cloud has %d h1: hashes:\n%s", plats, h1, out)
	}
}

func TestRealDirPluginDir(t *testing.T) {
	// A filesystem mirror in the packed layout, as -plugin-dir takes it.
	plugins := t.TempDir()
	plat := source.CurrentPlatform.String()
	writeZip(t, filepath.Join(plugins, "example.test", "acme", "tool", "terraform-provider-tool_1.2.0_"+plat+".zip"),
		map[string]string{"terraform-provider-tool_v1.2.0": "binary"})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(`terraform {
  required_providers {
    tool = { source = "example.test/acme/tool", version = "~> 1.0" }
  }
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TF_CLI_CONFIG_FILE", filepath.Join(dir, "none.tfrc"))
	out, code := runLock(t, "-cache-dir", t.TempDir(), "-plugin-dir", plugins, dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "OpenTofu has created a lock file .terraform.lock.hcl") {
		t.Errorf("output lacks the created note:\n%s", out)
	}
	// The plugin directory vouches for no checksum: tofu's warning
	// (OpenTofu v1.12.6 internal/command/init.go:973 and :1332).
	if want := "Warning: Incomplete lock file information for providers: Due to your customized provider installation methods, OpenTofu was forced to calculate lock file checksums locally for the following providers:\n  - example.test/acme/tool\n\nThe current .terraform.lock.hcl file only includes checksums for " + plat + ", so OpenTofu"; !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
	exe := filepath.Join(dir, ".terraform", "providers", "example.test", "acme", "tool", "1.2.0", plat, "terraform-provider-tool_v1.2.0")
	if _, err := os.Stat(exe); err != nil {
		t.Errorf("provider not installed: %v", err)
	}
	lf, err := lockfile.ParseFile(filepath.Join(dir, ".terraform.lock.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	if p := lf.Provider(mustProvider("example.test/acme/tool")); p == nil || p.Version.String() != "1.2.0" || len(p.Hashes) == 0 {
		t.Errorf("tool lock = %+v", p)
	}
}

func TestCLIConfigFilesystemMirror(t *testing.T) {
	mirrorDir := t.TempDir()
	plat := source.CurrentPlatform.String()
	writeZip(t, filepath.Join(mirrorDir, "example.test", "acme", "tool", "terraform-provider-tool_1.3.0_"+plat+".zip"),
		map[string]string{"terraform-provider-tool_v1.3.0": "binary"})
	dir := t.TempDir()
	cfgFile := filepath.Join(t.TempDir(), "cli.tfrc")
	if err := os.WriteFile(cfgFile, []byte(`provider_installation {
  filesystem_mirror {
    path = "`+filepath.ToSlash(mirrorDir)+`"
  }
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TF_CLI_CONFIG_FILE", cfgFile)
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(`terraform {
  required_providers {
    tool = { source = "example.test/acme/tool" }
  }
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := runLock(t, "-cache-dir", t.TempDir(), dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	lf, err := lockfile.ParseFile(filepath.Join(dir, ".terraform.lock.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	if p := lf.Provider(mustProvider("example.test/acme/tool")); p == nil || p.Version.String() != "1.3.0" {
		t.Errorf("tool lock = %+v\n%s", p, out)
	}
}

func TestUsage(t *testing.T) {
	if _, code := runLock(t, "-lockfile=bogus"); code != 2 {
		t.Errorf("-lockfile=bogus: exit %d, want 2", code)
	}
	if _, code := runLock(t, "a", "b"); code != 2 {
		t.Errorf("two directories: exit %d, want 2", code)
	}
	if _, code := runLock(t, "providers-lock", "-platform", "nonsense"); code != 2 {
		t.Errorf("bad platform: exit %d, want 2", code)
	}
}

// TestOutputStable: the same run prints the same lines in the same order,
// although packages are listed and downloaded concurrently (scripts read
// this output): two cold runs of the sample from scratch, then two warm
// re-runs.
func TestOutputStable(t *testing.T) {
	if err := installtest.HaveGit(); err != nil {
		t.Skip(err)
	}
	tmp := t.TempDir()
	work := filepath.Join(tmp, "work")
	var cold []string
	for i := range 2 {
		out, code := runLock(t, "-work", work, "-reset", "-cache-dir", filepath.Join(tmp, "cache", strconv.Itoa(i)))
		if code != 0 {
			t.Fatalf("cold run %d: exit %d\n%s", i, code, out)
		}
		cold = append(cold, out)
	}
	if cold[0] != cold[1] {
		t.Errorf("two cold runs print different output\n--- first\n%s\n--- second\n%s", cold[0], cold[1])
	}
	var warm []string
	for i := range 2 {
		out, code := runLock(t, "-work", work, "-cache-dir", filepath.Join(tmp, "cache", "1"))
		if code != 0 {
			t.Fatalf("warm run %d: exit %d\n%s", i, code, out)
		}
		warm = append(warm, out)
	}
	if warm[0] != warm[1] {
		t.Errorf("two warm runs print different output\n--- first\n%s\n--- second\n%s", warm[0], warm[1])
	}
}
