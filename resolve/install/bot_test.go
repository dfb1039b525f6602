package install_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/address"
)

func worldPlatforms(t *testing.T) []source.Platform {
	var out []source.Platform
	for _, s := range installtest.Platforms() {
		p, err := source.ParsePlatform(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// lockFor runs Init on a configuration and returns the lock it makes:
// the expected output of the bot APIs, by definition.
// With a previous lock, upgrade names the providers or module calls
// bumped (as a bot's user would run "tofu init -upgrade").
func lockFor(t *testing.T, w *installtest.World, files map[string]string, prev *lockfile.File, providersLock bool, upgrade ...string) *lockfile.File {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, files)
	opts := install.Options{Dir: dir, Source: w.Source, Cache: openCache(t), Resolve: resolve.Options{Lock: prev, DefaultHost: installtest.RegistryHost}}
	for _, u := range upgrade {
		if strings.Contains(u, "/") {
			opts.Resolve.UpgradeProviders = append(opts.Resolve.UpgradeProviders, mustAddr(t, u).Addr)
		} else {
			opts.Resolve.UpgradeModules = append(opts.Resolve.UpgradeModules, u)
		}
	}
	if providersLock {
		opts.ProvidersLock, opts.Platforms = true, worldPlatforms(t)
	}
	res, err := install.Init(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return res.Lock
}

func providersConfig(cloud, dns string) map[string]string {
	return map[string]string{"main.tf": fmt.Sprintf(`terraform {
  required_providers {
    cloud = { source = "registry.example.test/acme/cloud", version = %q }
    dns   = { source = "registry.example.test/acme/dns", version = %q }
  }
}
`, cloud, dns)}
}

func sameLock(t *testing.T, what string, got, want *lockfile.File) {
	t.Helper()
	if diff := cmp.Diff(string(want.Bytes()), string(got.Bytes())); diff != "" {
		t.Errorf("%s: lock differs from Init's (-init +bot):\n%s", what, diff)
	}
}

// TestLockProviderMatchesInit bumps one provider as a bot does: the lock
// LockProvider returns is the one Init (providers lock, same platforms)
// makes for the configuration requiring the new version, the other
// provider's entry untouched; from an empty lock, a cold and a warm cache.
func TestLockProviderMatchesInit(t *testing.T) {
	w := startWorld(t)
	plats := worldPlatforms(t)
	prev := lockFor(t, w, providersConfig("1.0.0", "2.0.0"), nil, true)
	want := lockFor(t, w, providersConfig("1.1.0", "2.0.0"), prev, true, "registry.example.test/acme/cloud")
	cloud := mustAddr(t, "registry.example.test/acme/cloud").Addr
	c := openCache(t)
	for _, round := range []string{"cold cache", "warm cache"} {
		res, err := install.LockProvider(context.Background(), install.LockProviderOptions{
			Lock: prev, Addr: cloud, Version: versions.MustParse("1.1.0"), Constraints: "1.1.0",
			Platforms: plats, Source: w.Source, Cache: c,
		})
		if err != nil {
			t.Fatalf("%s: %v", round, err)
		}
		sameLock(t, round, res.Lock, want)
		if len(res.Changes) == 0 {
			t.Errorf("%s: no changes reported", round)
		}
		if round == "warm cache" && res.Downloads != 0 {
			t.Errorf("%s: %d downloads, want 0", round, res.Downloads)
		}
	}
	if p := prev.Provider(cloud); p == nil || p.Version.String() != "1.0.0" {
		t.Errorf("the previous lock was changed: %+v", p)
	}

	// From nothing: the entry Init makes for a configuration requiring
	// only this provider.
	onlyCloud := map[string]string{"main.tf": "terraform {\n  required_providers {\n    cloud = { source = \"registry.example.test/acme/cloud\", version = \"1.1.0\" }\n  }\n}\n"}
	res, err := install.LockProvider(context.Background(), install.LockProviderOptions{
		Addr: cloud, Version: versions.MustParse("1.1.0"), Constraints: "1.1.0", Platforms: plats, Source: w.Source,
	})
	if err != nil {
		t.Fatal(err)
	}
	sameLock(t, "empty lock", res.Lock, lockFor(t, w, onlyCloud, nil, true))
}

func mustAddr(t *testing.T, s string) source.ProviderPackage {
	t.Helper()
	a, err := address.ParseProviderSource(s)
	if err != nil {
		t.Fatal(err)
	}
	return source.ProviderPackage{Addr: a.Addr}
}

func TestLockProviderErrors(t *testing.T) {
	w := startWorld(t)
	cloud := mustAddr(t, "registry.example.test/acme/cloud").Addr
	prev := lockFor(t, w, providersConfig("~> 1.0.0", "2.0.0"), nil, true)
	ctx := context.Background()

	// A version the registry does not have: the solver's error, with the
	// versions it has.
	_, err := install.LockProvider(ctx, install.LockProviderOptions{Lock: prev, Addr: cloud, Version: versions.MustParse("1.0.9"), Constraints: ">= 1.0", Source: w.Source})
	var nm *resolve.NoMatchError
	if !errors.As(err, &nm) || !strings.Contains(err.Error(), "1.1.0") {
		t.Errorf("unknown version: err = %v, want a NoMatchError listing 1.1.0", err)
	}
	// The lock's constraints (~> 1.0.0) do not allow 1.1.0: the bot must
	// say what the configuration now requires.
	_, err = install.LockProvider(ctx, install.LockProviderOptions{Lock: prev, Addr: cloud, Version: versions.MustParse("1.1.0"), Source: w.Source})
	var oe *install.OptionError
	if !errors.As(err, &oe) || !errors.Is(err, install.ErrVersionNotAllowed) || !strings.Contains(err.Error(), `"~> 1.0.0"`) || !strings.Contains(err.Error(), "LockProviderOptions.Constraints") {
		t.Errorf("constraints not allowing the version: err = %v, want an *OptionError matching ErrVersionNotAllowed", err)
	}
	// A malformed constraint: typed, in OpenTofu's words, naming the string.
	_, err = install.LockProvider(ctx, install.LockProviderOptions{Lock: prev, Addr: cloud, Version: versions.MustParse("1.1.0"), Constraints: "~> 1.0 2.0", Source: w.Source})
	var ce *versions.ConstraintError
	if !errors.As(err, &oe) || oe.Option != "LockProviderOptions.Constraints" || !errors.As(err, &ce) ||
		!strings.Contains(err.Error(), `This string does not use correct version constraint syntax: "~> 1.0 2.0"`) {
		t.Errorf("malformed constraint: err = %v, want an *OptionError wrapping a *versions.ConstraintError", err)
	}
	if _, err := install.LockProvider(ctx, install.LockProviderOptions{Version: versions.MustParse("1.1.0"), Source: w.Source}); !errors.As(err, &oe) || oe.Option != "LockProviderOptions.Addr" {
		t.Errorf("no address: err = %v, want an *OptionError", err)
	}
	if _, err := install.LockProvider(ctx, install.LockProviderOptions{Addr: cloud, Source: w.Source}); !errors.As(err, &oe) || oe.Option != "LockProviderOptions.Version" {
		t.Errorf("no version: err = %v, want an *OptionError", err)
	}
}

func modulesConfig(vpc, netRef, storage string) map[string]string {
	return map[string]string{"main.tf": fmt.Sprintf(`module "vpc" {
  source  = "registry.example.test/acme/vpc/cloud"
  version = %q
}
module "net" {
  source = "%s?ref=%s"
}
module "storage" {
  source  = %q
  version = %q
}
`, vpc, installtest.Network, netRef, installtest.Storage, storage)}
}

// TestLockModuleMatchesInit re-locks a registry, a git and an OCI module
// call one after the other, as a bot bumping each would: the final lock
// is the one Init makes for the configuration with the new versions.
func TestLockModuleMatchesInit(t *testing.T) {
	w := startWorld(t)
	prev := lockFor(t, w, modulesConfig("1.0.0", "v1.0.0", "1.0.0"), nil, false)
	want := lockFor(t, w, modulesConfig("1.1.0", "v1.1.0", "1.1.0"), prev, false, "vpc", "net", "storage")
	c := openCache(t)
	got := prev
	for _, call := range []install.LockModuleOptions{
		{Call: "vpc", Address: "registry.example.test/acme/vpc/cloud", Version: "1.1.0"},
		{Call: "net", Address: installtest.Network + "?ref=v1.1.0"},
		{Call: "storage", Address: installtest.Storage, Version: "1.1.0"},
	} {
		call.Lock, call.Source, call.Cache, call.DefaultHost = got, w.Source, c, installtest.RegistryHost
		res, err := install.LockModule(context.Background(), call)
		if err != nil {
			t.Fatalf("%s: %v", call.Call, err)
		}
		if len(res.Changes) == 0 {
			t.Errorf("%s: no change reported", call.Call)
		}
		got = res.Lock
	}
	sameLock(t, "three bumps", got, want)
	if m := want.Module("net"); m == nil || m.Commit == "" {
		t.Errorf("Init's lock has no commit for the git module: %+v", m)
	}
	if m := want.Module("storage"); m == nil || m.Digest == "" {
		t.Errorf("Init's lock has no digest for the OCI module: %+v", m)
	}

	// Re-locking what is locked changes nothing and downloads nothing on
	// a warm cache.
	res, err := install.LockModule(context.Background(), install.LockModuleOptions{Lock: got, Call: "vpc", Address: "registry.example.test/acme/vpc/cloud", Version: "1.1.0", Source: w.Source, Cache: c, DefaultHost: installtest.RegistryHost})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changes) != 0 || res.Downloads != 0 {
		t.Errorf("re-lock: changes %v, %d downloads; want none", res.Changes, res.Downloads)
	}
}

func TestLockModuleErrors(t *testing.T) {
	w := startWorld(t)
	ctx := context.Background()
	var ce *install.ConfigError
	_, err := install.LockModule(ctx, install.LockModuleOptions{Call: "vpc", Address: "registry.example.test/acme/vpc/cloud", Version: "not a version", Source: w.Source})
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "LockModuleOptions") || !strings.Contains(err.Error(), "not a version") {
		t.Errorf("bad version: err = %v, want a ConfigError naming LockModuleOptions", err)
	}
	var oe *install.OptionError
	_, err = install.LockModule(ctx, install.LockModuleOptions{Call: "vpc", Address: "./modules/vpc", Source: w.Source})
	if !errors.As(err, &oe) || !strings.Contains(err.Error(), "local module") {
		t.Errorf("local source: err = %v, want an *OptionError", err)
	}
	_, err = install.LockModule(ctx, install.LockModuleOptions{Call: "a..b", Address: "registry.example.test/acme/vpc/cloud", Source: w.Source})
	if !errors.As(err, &oe) || !strings.Contains(err.Error(), `"a..b"`) {
		t.Errorf("bad call path: err = %v, want an *OptionError", err)
	}
	_, err = install.LockModule(ctx, install.LockModuleOptions{Call: "vpc", Address: "registry.example.test/acme/vpc/cloud", Version: "~> 1.0 2.0", Source: w.Source})
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "This string does not use correct version constraint syntax") {
		t.Errorf("malformed constraint: err = %v, want a *ConfigError in OpenTofu's words", err)
	}
	_, err = install.LockModule(ctx, install.LockModuleOptions{Call: "vpc", Address: "registry.example.test/acme/vpc/cloud", Version: "9.0.0", Source: w.Source, DefaultHost: installtest.RegistryHost})
	var nm *resolve.NoMatchError
	if !errors.As(err, &nm) {
		t.Errorf("unknown version: err = %v, want a NoMatchError", err)
	}
}

// TestLockModuleNestedCall: a call inside a local module ("app.net") is
// locked under its call path, as Init locks it.
func TestLockModuleNestedCall(t *testing.T) {
	w := startWorld(t)
	want := lockFor(t, w, map[string]string{
		"main.tf":     "module \"app\" {\n  source = \"./app\"\n}\n",
		"app/main.tf": "module \"net\" {\n  source = \"" + installtest.Network + "?ref=v1.1.0\"\n}\n",
	}, nil, false)
	res, err := install.LockModule(context.Background(), install.LockModuleOptions{Call: "app.net", Address: installtest.Network + "?ref=v1.1.0", Source: w.Source})
	if err != nil {
		t.Fatal(err)
	}
	if want.Module("app.net") == nil {
		t.Fatal("Init locked no app.net")
	}
	sameLock(t, "nested call", res.Lock, want)
}
