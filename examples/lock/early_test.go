package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/source"
)

// TestVarFlags: -var and -var-file give the root module's variables, a
// later flag winning, for a module source built from a variable; without
// a value the run fails naming the call and the variable, and writes no
// lock file.
func TestVarFlags(t *testing.T) {
	plugins := t.TempDir()
	plat := source.CurrentPlatform.String()
	for _, v := range []string{"1.2.0", "2.0.0"} {
		writeZip(t, filepath.Join(plugins, "example.test", "acme", "tool", "terraform-provider-tool_"+v+"_"+plat+".zip"),
			map[string]string{"terraform-provider-tool_v" + v: "binary"})
	}
	dir := t.TempDir()
	tool := func(c string) string {
		return `terraform {
  required_providers {
    tool = { source = "example.test/acme/tool", version = "` + c + `" }
  }
}
`
	}
	files := map[string]string{
		"main.tf": `variable "flavour" {}
module "app" {
  source = "./mods/${var.flavour}"
}
`,
		"mods/one/main.tf": tool("~> 1.0"),
		"mods/two/main.tf": tool("~> 2.0"),
	}
	for _, d := range []string{"mods/one", "mods/two"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, src := range files {
		writeFile(t, filepath.Join(dir, name), src)
	}
	t.Setenv("TF_CLI_CONFIG_FILE", filepath.Join(dir, "none.tfrc"))
	t.Setenv("TF_VAR_flavour", "") // restored after the test
	os.Unsetenv("TF_VAR_flavour")
	lockPath := filepath.Join(dir, ".terraform.lock.hcl")
	cacheDir := t.TempDir()

	out, code := runLock(t, "-cache-dir", cacheDir, "-plugin-dir", plugins, dir)
	if code == 0 {
		t.Fatalf("no value: exit 0\n%s", out)
	}
	for _, s := range []string{`module "app"`, "var.flavour", "main.tf:3"} {
		if !strings.Contains(out, s) {
			t.Errorf("output does not name %q:\n%s", s, out)
		}
	}
	if _, err := os.Stat(lockPath); !os.IsNotExist(err) {
		t.Errorf("a failed run wrote a lock file: %v", err)
	}

	varFile := filepath.Join(t.TempDir(), "two.tfvars")
	writeFile(t, varFile, "flavour = \"two\"\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-var", "flavour=one"}, "1.2.0"},
		{[]string{"-var", "flavour=one", "-var-file", varFile, "-upgrade"}, "2.0.0"},
		{[]string{"-var-file", varFile, "-var", "flavour=one", "-upgrade"}, "1.2.0"},
	} {
		args := append([]string{"-cache-dir", cacheDir, "-plugin-dir", plugins}, tc.args...)
		out, code := runLock(t, append(args, dir)...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s", tc.args, code, out)
		}
		lf, err := lockfile.ParseFile(lockPath)
		if err != nil {
			t.Fatal(err)
		}
		if p := lf.Provider(mustProvider("example.test/acme/tool")); p == nil || p.Version.String() != tc.want {
			t.Errorf("%v: tool lock = %+v, want %s\n%s", tc.args, p, tc.want, out)
		}
	}
}
