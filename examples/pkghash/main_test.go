package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tflock/tflock/internal/testdir"
)

// The expected hashes are those of HASH-VECTORS.tsv (computed with x/mod
// dirhash, and asserted by OpenTofu's tests).
const (
	nullH1 = "h1:qjsREM4DqEWECD43FcPqddZ9oxCG+IaMTxvWPciS05g="
	nullZH = "zh:299dd806df78cb0537e5c111019eaca6e6b7797e1b63cb37cc6a76f91c6c0782"
	beepH1 = "h1:2y06Ykj0FRneZfGCTxI9wRTori8iB7ZL5kQ6YyEnh84="
)

func TestPrint(t *testing.T) {
	td := testdir.OpenTofu(t, "internal", "providercache", "testdata")
	zip := filepath.Join(td, "provider-null_2.1.0_linux_amd64.zip")
	dir := filepath.Join(td, "beep-provider")
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{zip, dir}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	want := nullH1 + " " + zip + "\n" + nullZH + " " + zip + "\n" + beepH1 + " " + dir + "\n"
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestVerify(t *testing.T) {
	td := testdir.OpenTofu(t, "internal", "providercache", "testdata")
	zip := filepath.Join(td, "provider-null_2.1.0_linux_amd64.zip")
	dir := filepath.Join(td, "beep-provider")
	lock := filepath.Join(t.TempDir(), ".terraform.lock.hcl")
	src := `# This file is maintained automatically by "tofu init".
# Manual edits may be lost in future updates.

provider "registry.opentofu.org/hashicorp/null" {
  version = "2.1.0"
  hashes = [
    "` + nullZH + `",
  ]
}
`
	if err := os.WriteFile(lock, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-verify", lock, "-provider", "registry.opentofu.org/hashicorp/null"}
	var out, errb bytes.Buffer
	if code := run(context.Background(), append(args, zip), &out, &errb); code != 0 || out.String() != "ok "+zip+"\n" {
		t.Errorf("verify matching zip: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	code := run(context.Background(), append(args, dir), &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), dir) || !strings.Contains(errb.String(), "registry.opentofu.org/hashicorp/null") {
		t.Errorf("verify a directory against a zh-only lock: exit %d, stderr %q; want exit 1 naming the package", code, errb.String())
	}
	lockH1 := strings.Replace(src, nullZH, "h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", 1)
	if err := os.WriteFile(lock, []byte(lockH1), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errb.Reset()
	code = run(context.Background(), append(args, zip), &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "does not match provider registry.opentofu.org/hashicorp/null") || !strings.Contains(errb.String(), nullH1) {
		t.Errorf("verify mismatching zip: exit %d, stderr %q", code, errb.String())
	}
	out.Reset()
	errb.Reset()
	if code := run(context.Background(), []string{"-verify", lock, "-provider", "hashicorp/null", zip}, &out, &errb); code != 2 {
		t.Errorf("short provider address: exit %d; want 2", code)
	}
}

// TestVerifyErrors checks the command-line mistakes that -verify reports:
// a lock file that does not exist (which lockfile.ParseFile would read as
// empty) and a provider the lock file does not record.
func TestVerifyErrors(t *testing.T) {
	td := testdir.OpenTofu(t, "internal", "providercache", "testdata")
	zip := filepath.Join(td, "provider-null_2.1.0_linux_amd64.zip")
	missing := filepath.Join(t.TempDir(), "missing.lock.hcl")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"-verify", missing, "-provider", "registry.opentofu.org/hashicorp/null", zip}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), missing) || !strings.Contains(errb.String(), "no such file") {
		t.Errorf("missing lock file: exit %d, stderr %q; want exit 1 naming the file", code, errb.String())
	}
	lock := filepath.Join(t.TempDir(), ".terraform.lock.hcl")
	src := "provider \"registry.opentofu.org/hashicorp/null\" {\n  version = \"2.1.0\"\n  hashes = [\n    \"" + nullH1 + "\",\n  ]\n}\n"
	if err := os.WriteFile(lock, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errb.Reset()
	code = run(context.Background(), []string{"-verify", lock, "-provider", "registry.opentofu.org/hashicorp/other", zip}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "registry.opentofu.org/hashicorp/other") {
		t.Errorf("provider not in the lock file: exit %d, stderr %q; want exit 1 naming the provider", code, errb.String())
	}
	out.Reset()
	errb.Reset()
	if code := run(context.Background(), []string{"-provider", "registry.opentofu.org/hashicorp/null", zip}, &out, &errb); code != 2 {
		t.Errorf("-provider without -verify: exit %d; want 2", code)
	}
}

// TestModule checks -module: a directory's VCS metadata is left out, so
// that the package with a .git directory prints the same h1 as without.
func TestModule(t *testing.T) {
	td := testdir.OpenTofu(t, "internal", "providercache", "testdata")
	src := filepath.Join(td, "beep-provider")
	dir := filepath.Join(t.TempDir(), "module")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"-module", dir}, &out, &errb); code != 0 || out.String() != beepH1+" "+dir+"\n" {
		t.Errorf("-module: exit %d, stdout %q, stderr %q; want %s (the tree without .git)", code, out.String(), errb.String(), beepH1)
	}
	out.Reset()
	errb.Reset()
	if code := run(context.Background(), []string{dir}, &out, &errb); code != 0 || strings.Contains(out.String(), beepH1) {
		t.Errorf("without -module: exit %d, stdout %q; want .git/HEAD counted", code, out.String())
	}
}
