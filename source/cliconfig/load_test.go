package cliconfig_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/tflock/tflock/source/cliconfig"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// machine is a fake home directory and environment.
func machine(t *testing.T, env map[string]string) (string, cliconfig.LoadOptions) {
	home := t.TempDir()
	return home, cliconfig.LoadOptions{
		Getenv:  func(k string) string { return env[k] },
		HomeDir: func() (string, error) { return home, nil },
		GOOS:    "linux",
	}
}

func TestLocations(t *testing.T) {
	env := map[string]string{}
	home, opts := machine(t, env)

	files, override, err := cliconfig.Locations(opts)
	if err != nil || override || len(files) != 0 {
		t.Fatalf("empty home: %v %v %v", files, override, err)
	}

	writeFile(t, filepath.Join(home, ".terraformrc"), "")
	files, _, _ = cliconfig.Locations(opts)
	if !slices.Equal(files, []string{filepath.Join(home, ".terraformrc")}) {
		t.Errorf("with .terraformrc: %v", files)
	}

	writeFile(t, filepath.Join(home, ".tofurc"), "")
	writeFile(t, filepath.Join(home, ".terraform.d", "b.tfrc"), "")
	writeFile(t, filepath.Join(home, ".terraform.d", "a.tfrc.json"), "{}")
	writeFile(t, filepath.Join(home, ".terraform.d", "ignored.txt"), "")
	files, _, _ = cliconfig.Locations(opts)
	want := []string{filepath.Join(home, ".tofurc"), filepath.Join(home, ".terraform.d", "a.tfrc.json"), filepath.Join(home, ".terraform.d", "b.tfrc")}
	if !slices.Equal(files, want) {
		t.Errorf("got %v, want %v (.tofurc wins over .terraformrc)", files, want)
	}

	// XDG_CONFIG_HOME counts only when the classic locations are absent.
	env["XDG_CONFIG_HOME"] = filepath.Join(home, "xdg")
	writeFile(t, filepath.Join(home, "xdg", "opentofu", "tofurc"), "")
	writeFile(t, filepath.Join(home, "xdg", "opentofu", "x.tfrc"), "")
	if files, _, _ = cliconfig.Locations(opts); !slices.Equal(files, want) {
		t.Errorf("with XDG_CONFIG_HOME and classic files: %v", files)
	}
	home2, opts2 := machine(t, env)
	files, _, _ = cliconfig.Locations(opts2)
	if want := []string{filepath.Join(home, "xdg", "opentofu", "tofurc"), filepath.Join(home, "xdg", "opentofu", "x.tfrc")}; !slices.Equal(files, want) {
		t.Errorf("fresh home %s with XDG_CONFIG_HOME: %v, want %v", home2, files, want)
	}
	delete(env, "XDG_CONFIG_HOME")

	env["TERRAFORM_CONFIG"] = "/legacy.rc"
	files, override, _ = cliconfig.Locations(opts)
	if !override || !slices.Equal(files, []string{"/legacy.rc"}) {
		t.Errorf("TERRAFORM_CONFIG: %v", files)
	}
	env["TF_CLI_CONFIG_FILE"] = "/x.rc"
	files, _, _ = cliconfig.Locations(opts)
	if !slices.Equal(files, []string{"/x.rc"}) {
		t.Errorf("TF_CLI_CONFIG_FILE: %v", files)
	}

	win := cliconfig.LoadOptions{GOOS: "windows", Getenv: func(k string) string {
		if k == "APPDATA" {
			return home
		}
		return ""
	}, HomeDir: func() (string, error) { return "", errors.New("unused") }}
	writeFile(t, filepath.Join(home, "tofu.rc"), "")
	files, _, _ = cliconfig.Locations(win)
	if len(files) == 0 || files[0] != filepath.Join(home, "tofu.rc") {
		t.Errorf("windows, only tofu.rc: %v", files)
	}
	writeFile(t, filepath.Join(home, "terraform.rc"), "")
	files, _, _ = cliconfig.Locations(win)
	if len(files) == 0 || files[0] != filepath.Join(home, "terraform.rc") {
		t.Errorf("windows, both: %v", files)
	}
}

func TestLoadMergesAndEnvironment(t *testing.T) {
	env := map[string]string{"CACHE_ROOT": "/var/cache"}
	home, opts := machine(t, env)
	writeFile(t, filepath.Join(home, ".tofurc"), `
plugin_cache_dir = "${CACHE_ROOT}/tofu"
credentials "a.example.com" {
  token = "from-main"
}
provider_installation {
  direct {}
}
`)
	writeFile(t, filepath.Join(home, ".terraform.d", "extra.tfrc"), `
plugin_cache_dir = "ignored-cache"
credentials "a.example.com" {
  token = "from-dir"
}
credentials "b.example.com" {
  token = "b"
}
`)
	cfg, diags := cliconfig.Load(opts)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if cfg.PluginCacheDir != "/var/cache/tofu" {
		t.Errorf("plugin_cache_dir = %q; the first file's wins, with variables expanded", cfg.PluginCacheDir)
	}
	if cfg.Token("a.example.com") != "from-dir" || cfg.Token("b.example.com") != "b" {
		t.Errorf("later credentials blocks replace earlier ones: %q %q", cfg.Token("a.example.com"), cfg.Token("b.example.com"))
	}
	if cfg.ProviderInstallation == nil || len(cfg.Files) != 2 {
		t.Errorf("files %v installation %v", cfg.Files, cfg.ProviderInstallation)
	}

	env["TF_PLUGIN_CACHE_DIR"] = "/env/cache"
	env["TF_PLUGIN_CACHE_MAY_BREAK_DEPENDENCY_LOCK_FILE"] = "1"
	cfg, _ = cliconfig.Load(opts)
	if cfg.PluginCacheDir != "/env/cache" || !cfg.PluginCacheMayBreakDependencyLockFile {
		t.Errorf("environment overrides: %q %v", cfg.PluginCacheDir, cfg.PluginCacheMayBreakDependencyLockFile)
	}

	// A second provider_installation block in another file is an error.
	writeFile(t, filepath.Join(home, ".terraform.d", "more.tfrc"), "provider_installation {\n}\n")
	_, diags = cliconfig.Load(opts)
	if !diags.HasErrors() || firstError(diags) != "Duplicate provider_installation block" {
		t.Errorf("diagnostics %v", diags)
	}
}

func TestLoadOverrideMissing(t *testing.T) {
	_, opts := machine(t, map[string]string{"TF_CLI_CONFIG_FILE": filepath.Join(t.TempDir(), "nope.rc")})
	cfg, diags := cliconfig.Load(opts)
	if len(diags) != 1 || diags.HasErrors() || diags[0].Summary != "Unable to open CLI configuration file" {
		t.Errorf("diagnostics %v", diags)
	}
	if cfg == nil || cfg.ProviderInstallation != nil {
		t.Errorf("config %+v", cfg)
	}
}

func firstError(diags hcl.Diagnostics) string {
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			return d.Summary
		}
	}
	return ""
}

func TestDownloadRetries(t *testing.T) {
	env := map[string]string{}
	home, opts := machine(t, env)
	writeFile(t, filepath.Join(home, ".tofurc"), `
provider_installation {
  network_mirror {
    url                  = "https://mirror.example.com/"
    download_retry_count = 5
  }
  direct {}
}
`)
	cfg, diags := cliconfig.Load(opts)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	mirrorM, directM := cfg.ProviderInstallation.Methods[0], cfg.ProviderInstallation.Methods[1]
	// tofu: the block's download_retry_count, else TF_PROVIDER_DOWNLOAD_RETRY
	// when it is a positive number, else 2.
	if got := cfg.DownloadRetries(mirrorM); got != 5 {
		t.Errorf("download_retry_count = 5: DownloadRetries = %d", got)
	}
	if cliconfig.DefaultDownloadRetries != 2 { // OpenTofu's providerDownloadDefaultRetry
		t.Errorf("DefaultDownloadRetries = %d, want 2", cliconfig.DefaultDownloadRetries)
	}
	if got := cfg.DownloadRetries(directM); got != 2 {
		t.Errorf("no setting: DownloadRetries = %d, want 2", got)
	}
	for value, want := range map[string]int{"7": 7, "0": 2, "-1": 2, "x": 2} {
		env["TF_PROVIDER_DOWNLOAD_RETRY"] = value
		cfg, _ := cliconfig.Load(opts)
		if got := cfg.DownloadRetries(cfg.ProviderInstallation.Methods[1]); got != want {
			t.Errorf("TF_PROVIDER_DOWNLOAD_RETRY=%s: DownloadRetries = %d, want %d", value, got, want)
		}
		if got := cfg.DownloadRetries(cfg.ProviderInstallation.Methods[0]); got != 5 {
			t.Errorf("TF_PROVIDER_DOWNLOAD_RETRY=%s: the block's own count must win, got %d", value, got)
		}
	}
}

func TestLoadEnvTokens(t *testing.T) {
	home, opts := machine(t, map[string]string{})
	opts.Environ = func() []string {
		return []string{"TF_TOKEN_a_example_com=from-env", "TF_TOKEN_registry_example__corp_com=corp", "PATH=/bin"}
	}
	writeFile(t, filepath.Join(home, ".tofurc"), `
credentials "a.example.com" {
  token = "from-block"
}
credentials "b.example.com" {
  token = "b-block"
}
`)
	cfg, diags := cliconfig.Load(opts)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	// tofu's order: the TF_TOKEN_ variable, then the credentials block.
	for host, want := range map[string]string{
		"a.example.com":             "from-env",
		"A.Example.COM":             "from-env",
		"b.example.com":             "b-block",
		"registry.example-corp.com": "corp",
		"c.example.com":             "",
	} {
		if got := cfg.Token(host); got != want {
			t.Errorf("Token(%q) = %q, want %q", host, got, want)
		}
	}
	for _, format := range []string{"%v", "%+v", "%#v"} {
		if out := fmt.Sprintf(format, cfg); strings.Contains(out, "from-env") || strings.Contains(out, "corp\"") {
			t.Errorf("printing the Config with %s shows a token: %s", format, out)
		}
	}
	// With a fake Getenv and no Environ, the real environment is not read.
	_, opts = machine(t, map[string]string{})
	cfg, _ = cliconfig.Load(opts)
	if len(cfg.EnvTokens) != 0 {
		t.Errorf("EnvTokens %d entries from the real environment", len(cfg.EnvTokens))
	}
}

// TestLoadFiles: the files given are read, merged in order, instead of
// those tofu finds (a ~/.tofurc here), the environment still applies, and
// a missing one is a warning, as for TF_CLI_CONFIG_FILE.
func TestLoadFiles(t *testing.T) {
	cache := t.TempDir()
	home, opts := machine(t, map[string]string{"TF_PLUGIN_CACHE_DIR": cache})
	writeFile(t, filepath.Join(home, ".tofurc"), `plugin_cache_dir = "ignored-cache"`+"\n"+`credentials "found.example.test" { token = "x" }`+"\n")
	dir := t.TempDir()
	a, b, missing := filepath.Join(dir, "a.tfrc"), filepath.Join(dir, "b.tfrc"), filepath.Join(dir, "missing.tfrc")
	writeFile(t, a, `credentials "a.example.test" { token = "ta" }`+"\n")
	writeFile(t, b, `credentials "b.example.test" { token = "tb" }`+"\n")
	opts.Files = []string{a, missing, b}
	cfg, diags := cliconfig.Load(opts)
	if len(diags) != 1 || diags.HasErrors() || diags[0].Summary != "Unable to open CLI configuration file" || !strings.Contains(diags[0].Detail, "missing.tfrc") {
		t.Errorf("diagnostics %v, want one warning naming the missing file", diags)
	}
	if !slices.Equal(cfg.Files, []string{a, b}) {
		t.Errorf("Files %v, want %v", cfg.Files, []string{a, b})
	}
	if cfg.Token("a.example.test") != "ta" || cfg.Token("b.example.test") != "tb" || cfg.Token("found.example.test") != "" {
		t.Error("the tokens are not those of the files given")
	}
	if cfg.PluginCacheDir != cache {
		t.Errorf("PluginCacheDir %q, want TF_PLUGIN_CACHE_DIR %q", cfg.PluginCacheDir, cache)
	}
}
