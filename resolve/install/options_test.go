package install_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"
	svchost "github.com/hashicorp/terraform-svchost"

	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/config"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
)

// sharedSettingsConfig requires the world's cloud and dns providers, and
// calls its vpc module from two local modules, under constraints that
// only 1.0.0 meets together (app alone would take 1.1.0).
func sharedSettingsConfig() map[string]string {
	files := twoCallers(">= 1.0.0", "< 1.1.0")
	files["providers.tf"] = cloudAndDNSAny
	return files
}

// checkNotSelected runs Check and returns the providers it reports as
// required but not selected by the lock file.
func checkNotSelected(t *testing.T, opts install.CheckOptions) []tfaddr.Provider {
	t.Helper()
	res, err := install.Check(context.Background(), opts)
	if res == nil {
		t.Fatalf("Check: %v", err)
	}
	var out []tfaddr.Provider
	for _, p := range res.Problems {
		pp, ok := p.Package.(source.ProviderPackage)
		if !ok || p.Kind != install.ProblemNotSelected {
			t.Errorf("Check: unexpected problem %v", p)
			continue
		}
		out = append(out, pp.Addr)
	}
	var ie *install.InconsistentLockError
	if (len(out) > 0) != errors.As(err, &ie) || (len(out) == 0 && err != nil) {
		t.Errorf("Check = %v with problems %v", err, res.Problems)
	}
	return out
}

// Init and Check read the solver's settings from one place,
// Options.Resolve: one Options value, changed between runs as a CLI's
// flags would change it, drives both. The lock file given in
// Resolve.Lock is the one kept (the directory holds none at first),
// UnifyModules and Upgrade change what Init picks, and a provider that
// DevOverrides or Reattach serve is neither locked by Init nor wanted in
// the lock file by Check, which reports it when the setting is dropped.
func TestOptionsResolveSharedByInitAndCheck(t *testing.T) {
	w := startWorld(t)
	cloud := tfaddr.MustParseProviderSource(installtest.RegistryHost + "/acme/cloud")
	dns := tfaddr.MustParseProviderSource(installtest.RegistryHost + "/acme/dns")
	dir := t.TempDir()
	writeFiles(t, dir, sharedSettingsConfig())

	// A lock file that exists only in memory: cloud at its older version.
	given := lockfile.New()
	given.SetProvider(&lockfile.ProviderLock{Addr: cloud, Version: versions.MustParse("1.0.0")})
	opts := install.Options{Dir: dir, Source: w.Source, Cache: openCache(t), Resolve: resolve.Options{
		Lock:         given,
		UnifyModules: true,
		DevOverrides: []tfaddr.Provider{dns},
	}}
	res := initAndWrite(t, opts)
	if v := res.Lock.Provider(cloud).Version.String(); v != "1.0.0" {
		t.Errorf("cloud %s, want the 1.0.0 of Resolve.Lock", v)
	}
	if res.Lock.Provider(dns) != nil {
		t.Errorf("dns, a dev override, was locked:\n%s", res.Lock.Bytes())
	}
	for _, call := range []string{"app.vpc", "utils.vpc"} {
		if v := res.Lock.Module(call).Version.String(); v != "1.0.0" {
			t.Errorf("%s %s, want 1.0.0 with UnifyModules", call, v)
		}
	}
	if given.Provider(cloud).Hashes != nil {
		t.Error("Init changed the lock file of Resolve.Lock")
	}

	// Check, on the same settings and the new lock file: nothing missing.
	opts.Resolve.Lock = res.Lock
	if got := checkNotSelected(t, opts.ForCheck()); len(got) != 0 {
		t.Errorf("Check with dns a dev override: %v not selected, want none", got)
	}
	// Without the dev override, Check wants dns in the lock file.
	noDev := opts
	noDev.Resolve.DevOverrides = nil
	if got := checkNotSelected(t, noDev.ForCheck()); len(got) != 1 || got[0] != dns {
		t.Errorf("Check without the dev override: %v not selected, want [%s]", got, dns)
	}

	// Upgrade moves cloud on; the unified calls stay where both allow.
	opts.Resolve.Upgrade = true
	res = initAndWrite(t, opts)
	if v := res.Lock.Provider(cloud).Version.String(); v != "1.1.0" {
		t.Errorf("cloud %s after Upgrade, want 1.1.0", v)
	}
	for _, call := range []string{"app.vpc", "utils.vpc"} {
		if v := res.Lock.Module(call).Version.String(); v != "1.0.0" {
			t.Errorf("%s %s after Upgrade, want 1.0.0 with UnifyModules", call, v)
		}
	}
	// Without UnifyModules, each call takes the newest it allows.
	opts.Resolve.UnifyModules = false
	res = initAndWrite(t, opts)
	if a, u := res.Lock.Module("app.vpc").Version.String(), res.Lock.Module("utils.vpc").Version.String(); a != "1.1.0" || u != "1.0.0" {
		t.Errorf("without UnifyModules: app.vpc %s, utils.vpc %s; want 1.1.0 and 1.0.0", a, u)
	}

	// Reattach in the place of the dev override: the same for Init and
	// for Check, as in tofu (a reattached provider is "overridden": its
	// lock entry is neither required nor checked).
	opts.Resolve.Upgrade, opts.Resolve.DevOverrides, opts.Resolve.Reattach = false, nil, reattachDNS
	opts.Resolve.Lock = nil // DIR/.terraform.lock.hcl, as written above
	res = initAndWrite(t, opts)
	if res.Lock.Provider(dns) != nil || len(res.Changes) != 0 {
		t.Errorf("dns reattached: changes %v\n%s", res.Changes, res.Lock.Bytes())
	}
	if got := checkNotSelected(t, opts.ForCheck()); len(got) != 0 {
		t.Errorf("Check with dns reattached: %v not selected, want none", got)
	}
	opts.Resolve.Reattach = ""
	if got := checkNotSelected(t, opts.ForCheck()); len(got) != 1 || got[0] != dns {
		t.Errorf("Check without the reattached dns: %v not selected, want [%s]", got, dns)
	}
}

// Init decides TranslatePredecessor from the flavour: asked for with
// Terraform's flavour, which never translates, it is refused by Init
// before anything is read or written (Check, which resolves nothing, has
// no such option); with OpenTofu's it is what Init does anyway.
func TestOptionsTranslatePredecessorFollowsFlavor(t *testing.T) {
	w := startWorld(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": cloudAndDNSAny})
	before := snapshot(t, dir)
	opts := install.Options{Dir: dir, Source: w.Source, Cache: openCache(t), Flavor: install.FlavorTerraform,
		Resolve: resolve.Options{TranslatePredecessor: true}}
	_, err := install.Init(context.Background(), opts)
	var oe *install.OptionsError
	if !errors.As(err, &oe) || oe.Field != "Resolve.TranslatePredecessor" {
		t.Errorf("Init = %v, want an *install.OptionsError on Resolve.TranslatePredecessor", err)
	}
	if snapshot(t, dir) != before {
		t.Error("a refused run changed the directory")
	}
	opts.Flavor = install.FlavorOpenTofu
	res := initAndWrite(t, opts)
	if res.Flavor != install.FlavorOpenTofu || len(res.Selection.Providers) != 2 {
		t.Errorf("OpenTofu's flavour with TranslatePredecessor: %v, %d providers", res.Flavor, len(res.Selection.Providers))
	}
}

// Outside providers-lock mode, where Init has no use of its own for the
// hook, a caller's ProviderPicked is called with each listed provider's
// pick as Resolve calls it: not for a dev override, and with the pick the
// Selection holds.
func TestInitCallerProviderPicked(t *testing.T) {
	w := startWorld(t)
	dns := tfaddr.MustParseProviderSource(installtest.RegistryHost + "/acme/dns")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": cloudAndDNSAny})
	var mu sync.Mutex
	var picks []resolve.ProviderPick
	res := initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: openCache(t), Resolve: resolve.Options{
		DevOverrides: []tfaddr.Provider{dns},
		ProviderPicked: func(_ context.Context, p resolve.ProviderPick) {
			mu.Lock()
			defer mu.Unlock()
			picks = append(picks, p)
		},
	}})
	want := res.Selection.Provider(tfaddr.MustParseProviderSource(installtest.RegistryHost + "/acme/cloud"))
	if len(picks) != 1 || want == nil || picks[0].Addr != want.Addr || picks[0].Version != want.Version || picks[0].Reason != want.Reason {
		t.Errorf("picks reported %+v, want only the Selection's cloud pick %+v", picks, want)
	}
}

// TestReadOptionsAsInit: the options ReadOptions gives are those Init
// reads the root module with, the default registry host above all (the
// one a provider without a source gets): OpenTofu's, Terraform's when
// its flavour is asked for, or Resolve.DefaultHost.
func TestReadOptionsAsInit(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": "terraform {\n  required_providers {\n    null = {}\n  }\n}\n"})
	for _, c := range []struct {
		name string
		opts install.Options
		host string
	}{
		{"default", install.Options{}, "registry.opentofu.org"},
		{"auto", install.Options{Flavor: install.FlavorAuto}, "registry.opentofu.org"},
		{"terraform", install.Options{Flavor: install.FlavorTerraform}, install.TerraformRegistryHost},
		{"asked", install.Options{Flavor: install.FlavorTerraform, Resolve: resolve.Options{DefaultHost: "registry.example.test"}}, "registry.example.test"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, diags := config.ReadTree(dir, "", c.opts.ReadOptions())
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			reqs := cfg.Requirements()
			if len(reqs) != 1 {
				t.Fatalf("requirements %v", reqs)
			}
			want := source.ProviderPackage{Addr: tfaddr.NewProvider(svchost.Hostname(c.host), "hashicorp", "null")}
			if reqs[0].Package != want {
				t.Fatalf("read with %+v: requires %v, want %v", c.opts.ReadOptions(), reqs[0].Package, want)
			}
		})
	}
}
