package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// lock mirror writes a mirror directory from the lock file, each archive
// the origin's (here a filesystem mirror) and checked against the lock
// file; a lock file the packages do not match writes nothing.
func TestMirrorCommand(t *testing.T) {
	src, h1s := packedMirror(t)
	conf := t.TempDir()
	cli := filepath.Join(conf, "cli.tfrc")
	if err := os.WriteFile(cli, []byte(fmt.Sprintf("provider_installation {\n  filesystem_mirror {\n    path = %q\n  }\n}\n", src)), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TF_CLI_CONFIG_FILE", cli)
	var hs string
	for _, p := range toolPlatforms {
		hs += fmt.Sprintf("    %q,\n", h1s[p])
	}
	lock := fmt.Sprintf("provider \"example.test/acme/tool\" {\n  version = \"1.3.0\"\n  hashes = [\n%s  ]\n}\n", hs)
	if err := os.WriteFile(filepath.Join(conf, ".terraform.lock.hcl"), []byte(lock), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(conf, "main.tf"), []byte(toolConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "mirror")
	var out, errb bytes.Buffer
	args := []string{"mirror", "-cache-dir", t.TempDir(), "-platform", "linux_amd64", "-platform", "darwin_arm64", dst, conf}
	if code := run(context.Background(), args, &out, &errb); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "2 archives written, 0 kept, 2 downloaded") {
		t.Errorf("output:\n%s", out.String())
	}
	for _, p := range []string{"linux_amd64", "darwin_arm64"} {
		name := "example.test/acme/tool/terraform-provider-tool_1.3.0_" + p + ".zip"
		want, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(filepath.Join(dst, name)); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: not the origin's archive (%v)", name, err)
		}
	}
	for _, name := range []string{"index.json", "1.3.0.json"} {
		if _, err := os.Stat(filepath.Join(dst, "example.test/acme/tool", name)); err != nil {
			t.Error(err)
		}
	}

	// A lock file that records other hashes: refused, nothing written.
	wrong := strings.ReplaceAll(lock, string(h1s["windows_amd64"]), "h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
	if err := os.WriteFile(filepath.Join(conf, ".terraform.lock.hcl"), []byte(wrong), 0o644); err != nil {
		t.Fatal(err)
	}
	dst2 := filepath.Join(t.TempDir(), "mirror")
	out.Reset()
	errb.Reset()
	args = []string{"mirror", "-cache-dir", t.TempDir(), "-platform", "windows_amd64", dst2, conf}
	if code := run(context.Background(), args, &out, &errb); code != 1 || !strings.Contains(errb.String(), "checksum") {
		t.Errorf("a lock the package does not match: exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	if _, err := os.Stat(filepath.Join(dst2, "example.test/acme/tool/terraform-provider-tool_1.3.0_windows_amd64.zip")); err == nil {
		t.Error("an archive the lock file does not vouch for was written")
	}
}

func TestMirrorCommandUsage(t *testing.T) {
	for _, args := range [][]string{{"mirror"}, {"mirror", "a", "b", "c"}, {"serve", "-nope"}} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb); code != 2 {
			t.Errorf("%q: exit %d, want 2\n%s", args, code, errb.String())
		}
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"mirror", "-platform", "linux", "d"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "-platform") {
		t.Errorf("bad platform: exit %d\n%s", code, errb.String())
	}
}

// lock serve -- COMMAND runs the command pointed at the mirror: the CLI
// configuration it gets has one provider_installation block, the mirror,
// and the command's exit code is the program's.
func TestServeCommandRunsACommand(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses sh")
	}
	dir := t.TempDir()
	cli := filepath.Join(dir, "cli.tfrc")
	if err := os.WriteFile(cli, []byte("provider_installation {\n  direct {}\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TF_CLI_CONFIG_FILE", cli)
	t.Setenv("TF_TOKEN_example_test", "s3cr3t")
	var out, errb bytes.Buffer
	args := []string{"serve", "-cache-dir", t.TempDir(), "-tool-config", filepath.Join(dir, "tool"), "--",
		"sh", "-c", `cat "$TF_CLI_CONFIG_FILE"; env | grep -c TF_TOKEN_; exit 3`}
	if code := run(context.Background(), args, &out, &errb); code != 3 {
		t.Fatalf("exit %d, want the command's 3\n%s\n%s", code, out.String(), errb.String())
	}
	o := out.String()
	if strings.Count(o, "provider_installation") != 1 || !strings.Contains(o, "network_mirror") || strings.Contains(o, "direct") || strings.Contains(o, "s3cr3t") {
		t.Errorf("output:\n%s", o)
	}
	if !strings.Contains(o, "\n0\n") {
		t.Errorf("a TF_TOKEN_ variable reached the command:\n%s", o)
	}
}

// Without a lock file, lock mirror locks the configuration first (for the
// platforms asked for, as providers-lock) and mirrors what it locked; it
// writes no lock file.
func TestMirrorCommandFromAConfiguration(t *testing.T) {
	src, _ := packedMirror(t)
	conf := t.TempDir()
	cli := filepath.Join(conf, "cli.tfrc")
	if err := os.WriteFile(cli, []byte(fmt.Sprintf("provider_installation {\n  filesystem_mirror {\n    path = %q\n  }\n}\n", src)), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TF_CLI_CONFIG_FILE", cli)
	if err := os.WriteFile(filepath.Join(conf, "main.tf"), []byte(toolConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "mirror")
	var out, errb bytes.Buffer
	args := []string{"mirror", "-cache-dir", t.TempDir(), "-platform", "windows_amd64", dst, conf}
	if code := run(context.Background(), args, &out, &errb); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "No lock file: locking") || !strings.Contains(out.String(), "1 archives written") {
		t.Errorf("output:\n%s", out.String())
	}
	if _, err := os.Stat(filepath.Join(dst, "example.test/acme/tool/terraform-provider-tool_1.3.0_windows_amd64.zip")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(conf, ".terraform.lock.hcl")); !os.IsNotExist(err) {
		t.Errorf("a lock file was written: %v", err)
	}
}
