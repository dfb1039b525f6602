package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDevOverridesWarnAndStayUnlocked: a provider under dev_overrides in the
// CLI configuration is used from its directory as it is: a warning lists
// it, nothing asks a registry for it, and the lock file does not record it.
func TestDevOverridesWarnAndStayUnlocked(t *testing.T) {
	dir := t.TempDir()
	devDir := t.TempDir()
	cfgFile := filepath.Join(t.TempDir(), "cli.tfrc")
	writeFile(t, cfgFile, `provider_installation {
  dev_overrides {
    "example.test/acme/tool" = "`+filepath.ToSlash(devDir)+`"
  }
  direct {}
}
`)
	t.Setenv("TF_CLI_CONFIG_FILE", cfgFile)
	writeFile(t, filepath.Join(dir, "main.tf"), `terraform {
  required_providers {
    tool = { source = "example.test/acme/tool" }
  }
}
`)
	out, code := runLock(t, "-cache-dir", t.TempDir(), dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "Provider development overrides are in effect") || !strings.Contains(out, devDir) {
		t.Errorf("no dev-override warning naming the directory:\n%s", out)
	}
	// Its progress line calls it what the CLI configuration made it; it
	// said "(unmanaged)", tofu's word for a reattached provider.
	if want := "- Selected example.test/acme/tool (dev override)\n"; !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
	b, err := os.ReadFile(filepath.Join(dir, ".terraform.lock.hcl"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "acme/tool") {
		t.Errorf("the overridden provider was locked:\n%s", b)
	}
}
