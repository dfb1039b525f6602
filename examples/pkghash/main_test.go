package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// conformance returns the shared conformance data beside the repository root.
func conformance(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared", "conformance")
		}
		if filepath.Dir(dir) == dir {
			t.Fatal("no go.mod above the package directory")
		}
		dir = filepath.Dir(dir)
	}
}

// The expected hashes are those of HASH-VECTORS.tsv (computed with x/mod
// dirhash, and asserted by OpenTofu's tests).
const (
	nullH1 = "h1:qjsREM4DqEWECD43FcPqddZ9oxCG+IaMTxvWPciS05g="
	nullZH = "zh:299dd806df78cb0537e5c111019eaca6e6b7797e1b63cb37cc6a76f91c6c0782"
	beepH1 = "h1:2y06Ykj0FRneZfGCTxI9wRTori8iB7ZL5kQ6YyEnh84="
)

func TestPrint(t *testing.T) {
	td := filepath.Join(conformance(t), "opentofu", "internal", "providercache", "testdata")
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
	td := filepath.Join(conformance(t), "opentofu", "internal", "providercache", "testdata")
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
