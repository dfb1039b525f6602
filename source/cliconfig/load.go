package cliconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/tflock/tflock/source/internal/envtoken"
)

// LoadOptions tells [Load] about the machine. Tests set every field so
// that nothing is read from the real environment or home directory.
type LoadOptions struct {
	// Getenv reads an environment variable. Default: os.Getenv.
	Getenv func(string) string
	// HomeDir returns the user's home directory. Default: os.UserHomeDir.
	HomeDir func() (string, error)
	// GOOS selects the platform's file names. Default: runtime.GOOS.
	GOOS string
	// Environ lists the environment ("NAME=VALUE"), where [Load] finds the
	// TF_TOKEN_ variables. Default: os.Environ when Getenv is unset too,
	// else no variables.
	Environ func() []string
	// Files, when set, are the configuration files [Load] reads, in
	// order, instead of those [Locations] finds; as for a file named by
	// TF_CLI_CONFIG_FILE, one that does not exist is a warning. The
	// environment variables that override settings still apply. Default:
	// the files of [Locations].
	Files []string
}

func (o LoadOptions) withDefaults() LoadOptions {
	if o.Environ == nil {
		o.Environ = func() []string { return nil }
		if o.Getenv == nil {
			o.Environ = os.Environ
		}
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.HomeDir == nil {
		o.HomeDir = os.UserHomeDir
	}
	if o.GOOS == "" {
		o.GOOS = runtime.GOOS
	}
	return o
}

// Locations returns the CLI configuration files OpenTofu would read, in
// order, and whether the main file was named by an environment variable:
//
//   - TF_CLI_CONFIG_FILE (or the older TERRAFORM_CONFIG) names the only
//     file, which must exist;
//   - otherwise the main file, when it exists: ~/.tofurc, or ~/.terraformrc
//     when only that one exists, or $XDG_CONFIG_HOME/opentofu/tofurc when
//     XDG_CONFIG_HOME is set and neither exists; on Windows
//     %APPDATA%\terraform.rc, or %APPDATA%\tofu.rc when only that one
//     exists (the preference OpenTofu's Windows build has);
//   - then the *.tfrc and *.tfrc.json files of the configuration
//     directory, sorted by name: ~/.terraform.d, or $XDG_CONFIG_HOME/opentofu
//     when XDG_CONFIG_HOME is set and ~/.terraform.d does not exist
//     (%APPDATA%\terraform.d on Windows).
func Locations(opts LoadOptions) (files []string, override bool, err error) {
	opts = opts.withDefaults()
	if f := opts.Getenv("TF_CLI_CONFIG_FILE"); f != "" {
		return []string{f}, true, nil
	}
	if f := opts.Getenv("TERRAFORM_CONFIG"); f != "" {
		return []string{f}, true, nil
	}
	var main, dir string
	if opts.GOOS == "windows" {
		base := opts.Getenv("APPDATA")
		if base == "" {
			return nil, false, errors.New("cannot locate the CLI configuration: APPDATA is not set")
		}
		main = newOrLegacy(filepath.Join(base, "terraform.rc"), filepath.Join(base, "tofu.rc"))
		dir = filepath.Join(base, "terraform.d")
	} else {
		home, err := opts.HomeDir()
		if err != nil || home == "" {
			return nil, false, fmt.Errorf("cannot locate the CLI configuration: no home directory (%v)", err)
		}
		newFile, legacyFile := filepath.Join(home, ".tofurc"), filepath.Join(home, ".terraformrc")
		xdg := opts.Getenv("XDG_CONFIG_HOME")
		if xdg != "" && !pathExists(newFile) && !pathExists(legacyFile) {
			main = filepath.Join(xdg, "opentofu", "tofurc")
		} else {
			main = newOrLegacy(newFile, legacyFile)
		}
		dir = filepath.Join(home, ".terraform.d")
		if xdg != "" && !pathExists(dir) {
			dir = filepath.Join(xdg, "opentofu")
		}
	}
	if exists(main) {
		files = append(files, main)
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return files, false, err
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && (strings.HasSuffix(e.Name(), ".tfrc") || strings.HasSuffix(e.Name(), ".tfrc.json")) {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for _, n := range names {
		files = append(files, filepath.Join(dir, n))
	}
	return files, false, nil
}

// newOrLegacy returns legacy when only it exists, else newPath.
func newOrLegacy(newPath, legacy string) string {
	if pathExists(legacy) && !pathExists(newPath) {
		return legacy
	}
	return newPath
}

func pathExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func exists(path string) bool {
	info, err := os.Stat(path)
	return err == nil && !info.IsDir()
}

// Load reads the CLI configuration as OpenTofu does: the files of
// [Locations], merged in order (see [Config.Merge]), then the environment:
// TF_PLUGIN_CACHE_DIR replaces plugin_cache_dir, and
// TF_PLUGIN_CACHE_MAY_BREAK_DEPENDENCY_LOCK_FILE (any value but "" and "0")
// turns that setting on, and TF_PROVIDER_DOWNLOAD_RETRY (a positive whole
// number) sets [Config.ProviderDownloadRetries], and the TF_TOKEN_
// variables fill [Config.EnvTokens]. Environment variables in
// plugin_cache_dir are expanded ($VAR and ${VAR}).
//
// A file named by TF_CLI_CONFIG_FILE that does not exist is a warning, as
// in tofu. The result is never nil.
func Load(opts LoadOptions) (*Config, hcl.Diagnostics) {
	opts = opts.withDefaults()
	cfg := &Config{}
	var diags hcl.Diagnostics
	files, override := opts.Files, true
	var err error
	if files == nil {
		files, override, err = Locations(opts)
	}
	if err != nil {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Unable to locate CLI configuration", Detail: err.Error() + "."})
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			if override && errors.Is(err, fs.ErrNotExist) {
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Unable to open CLI configuration file",
					Detail: fmt.Sprintf("The CLI configuration file at %q does not exist.", f)})
				continue
			}
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unable to read CLI configuration file",
				Detail: fmt.Sprintf("Error reading %s: %v.", f, err)})
			continue
		}
		one, d := Parse(src, f)
		for _, diag := range d {
			if diag.Summary != "Duplicate provider_installation block" && diag.Summary != "Duplicate credentials_helper block" {
				diags = append(diags, diag)
			}
		}
		if one.PluginCacheDir != "" {
			one.PluginCacheDir = os.Expand(one.PluginCacheDir, opts.Getenv)
		}
		if cfg.Files == nil {
			cfg = one
		} else {
			cfg = cfg.Merge(one)
		}
	}
	if dir := opts.Getenv("TF_PLUGIN_CACHE_DIR"); dir != "" {
		cfg.PluginCacheDir = dir
	}
	if v := opts.Getenv("TF_PLUGIN_CACHE_MAY_BREAK_DEPENDENCY_LOCK_FILE"); v != "" && v != "0" {
		cfg.PluginCacheMayBreakDependencyLockFile = true
	}
	if env := envtoken.Collect(opts.Environ()); len(env) > 0 {
		cfg.EnvTokens = Tokens(env)
	}
	// As tofu, a value that is not a positive whole number is ignored.
	if n, err := strconv.Atoi(opts.Getenv("TF_PROVIDER_DOWNLOAD_RETRY")); err == nil && n > 0 {
		cfg.ProviderDownloadRetries = n
	}
	diags = append(diags, cfg.Validate()...)
	return cfg, diags
}
