package install_test

// The three embedders of issue 25, as programs using the public API only:
// an OpenTofu-core-like program (init, then a read-only check), a
// Terragrunt-like wrapper (20 units on one cache and one set of sources)
// and a bot that bumps a provider for three platforms.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/assemble"
	"github.com/tflock/tflock/source/cache"
)

// embedderConfig is a unit's configuration: the providers acme/cloud and
// acme/dns and the registry module acme/vpc/cloud (which requires
// acme/cloud too), all of the installtest registry.
const embedderConfig = `terraform {
  required_providers {
    cloud = {
      source  = "` + installtest.RegistryHost + `/acme/cloud"
      version = "~> 1.0"
    }
    dns = {
      source  = "` + installtest.RegistryHost + `/acme/dns"
      version = ">= 2.0.0"
    }
  }
}

module "vpc" {
  source  = "` + installtest.RegistryHost + `/acme/vpc/cloud"
  version = "~> 1.0"
}
`

// The OpenTofu-core-like program: "init" installs the configuration's
// dependencies and writes the lock file; "plan" then checks, read-only,
// that the lock file and the install directory are what the configuration
// needs, and gets the provider executables to start. Check writes
// nothing; a constraint changed after init is reported, typed, with the
// file and line of the requirement.
func TestEmbedderOpenTofuCore(t *testing.T) {
	w := startWorldWith(t, installtest.Options{NoGit: true})
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(embedderConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	initOpts := install.Options{Dir: dir, Source: w.Source, Cache: c}

	// init
	res, err := install.Init(ctx, initOpts)
	if err != nil {
		t.Fatal(err)
	}
	lockPath := filepath.Join(dir, install.LockFileName)
	if _, err := install.WriteLock(lockPath, res); err != nil {
		t.Fatal(err)
	}

	// plan: the read-only check, with the same settings as init.
	before := snapshot(t, dir)
	chk, err := install.Check(ctx, initOpts.ForCheck())
	if err != nil {
		t.Fatalf("Check after Init: %v", err)
	}
	if len(chk.Problems) != 0 || len(chk.Warnings) != 0 {
		t.Errorf("Check after Init: problems %v, warnings %v; want none", chk.Problems, chk.Warnings)
	}
	var got []string
	for _, p := range chk.Providers {
		if _, err := os.Stat(p.Executable); err != nil {
			t.Errorf("%s: executable: %v", p.Package, err)
		}
		got = append(got, p.Package.Addr.Type+" "+p.Package.Version.String())
	}
	if want := []string{"cloud 1.1.0", "dns 2.1.0"}; !slices.Equal(got, want) {
		t.Errorf("Check's providers %v, want %v", got, want)
	}
	// A second init in read-only mode (tofu init -lockfile=readonly)
	// changes nothing.
	ro := initOpts
	ro.ReadOnly = true
	if res, err := install.Init(ctx, ro); err != nil || len(res.Changes) != 0 {
		t.Errorf("read-only Init after Init: changes %v, %v; want none", res, err)
	}
	if after := snapshot(t, dir); after != before {
		t.Errorf("Check or the read-only Init changed the directory:\n%s\nwas\n%s", after, before)
	}

	// The configuration moves on without an init: Check says what and
	// where, typed.
	moved := bytes.Replace([]byte(embedderConfig), []byte(`"~> 1.0"
    }`), []byte(`"~> 2.0"
    }`), 1)
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), moved, 0o644); err != nil {
		t.Fatal(err)
	}
	chk, err = install.Check(ctx, install.CheckOptions{Dir: dir})
	var ie *install.InconsistentLockError
	if !errors.As(err, &ie) {
		t.Fatalf("Check after a constraint change = %v, want an *install.InconsistentLockError", err)
	}
	if len(chk.Problems) != 1 || chk.Problems[0].Kind != install.ProblemConstraintsChanged ||
		chk.Problems[0].Range.Filename != filepath.Join(dir, "main.tf") || chk.Problems[0].Range.Start.Line != 5 {
		t.Errorf("Check's problems %+v, want cloud's constraints changed at main.tf:5", chk.Problems)
	}
}

// The Terragrunt-like wrapper: 20 units, run at once, on one package
// cache and one set of sources (NewSources, as the wrapper builds them
// once), with one event handler. Without a wrapper of its own around the
// source, the units share version lists: each package is listed once for
// all 20 units. Every event names its unit. A second round, on machines
// that have the lock files and the shared cache, downloads nothing.
func TestEmbedderWrapper(t *testing.T) {
	w := startWorldWith(t, installtest.Options{NoGit: true})
	ctx := context.Background()
	srcs, diags := assemble.NewSources(ctx, assemble.SourcesOptions{
		Env: []string{}, Home: t.TempDir(), ConfigFiles: []string{},
		HTTPClient: w.Registry.Client(),
	})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	c, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const units = 20
	root := t.TempDir()
	var mu sync.Mutex
	events := map[string]int{} // events by unit
	handler := source.EventsFunc(func(e source.Event) {
		mu.Lock()
		events[e.Unit]++
		mu.Unlock()
	})
	runAll := func() (downloads int) {
		t.Helper()
		var wg sync.WaitGroup
		results := make([]*install.Result, units)
		errs := make([]error, units)
		for i := range units {
			unit := fmt.Sprintf("unit-%02d", i)
			dir := filepath.Join(root, unit)
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i], errs[i] = install.Init(source.WithUnit(ctx, unit), install.Options{
					Dir: dir, Source: srcs.Source, Cache: c, Events: handler,
				})
				if errs[i] == nil {
					_, errs[i] = install.WriteLock(filepath.Join(dir, install.LockFileName), results[i])
				}
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		for _, r := range results {
			downloads += r.Downloads
		}
		return downloads
	}
	for i := range units {
		writeFiles(t, filepath.Join(root, fmt.Sprintf("unit-%02d", i)), map[string]string{"main.tf": embedderConfig})
	}

	downloads := runAll()
	for _, path := range []string{"/v1/providers/acme/cloud/versions", "/v1/providers/acme/dns/versions", "/v1/modules/acme/vpc/cloud/versions"} {
		if n := w.Registry.RequestsTo(path); n != 1 {
			t.Errorf("%s asked %d times for %d units, want once (shared)", path, n, units)
		}
	}
	first := w.Registry.Requests()
	// One unit alone, on sources of its own, asks the registry this
	// much; 20 units sharing ask no more: each version list, checksum
	// list and package once (the registry reports the packages' h1:, so
	// the shared cache serves every unit after the first).
	alone := singleUnitRequests(t)
	if first > alone {
		t.Errorf("%d registry requests for %d units, one unit alone %d: the units do not share", first, units, alone)
	}
	t.Logf("%d registry requests and %d downloads for %d units (one unit alone: %d requests)", first, downloads, units, alone)
	mu.Lock()
	if n := events[""]; n != 0 {
		t.Errorf("%d events without their unit", n)
	}
	if len(events) != units {
		t.Errorf("events from %d units, want %d", len(events), units)
	}
	mu.Unlock()

	// Round two: each unit on a fresh machine (its lock file, no
	// .terraform), the same cache: nothing is downloaded.
	for i := range units {
		if err := os.RemoveAll(filepath.Join(root, fmt.Sprintf("unit-%02d", i), ".terraform")); err != nil {
			t.Fatal(err)
		}
	}
	if n := runAll(); n != 0 {
		t.Errorf("round two downloaded %d packages, want none (all in the shared cache)", n)
	}
}

// singleUnitRequests is how many registry requests one unit's Init asks
// of a registry of its own.
func singleUnitRequests(t *testing.T) int {
	t.Helper()
	w := startWorldWith(t, installtest.Options{NoGit: true})
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": embedderConfig})
	if _, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: openCache(t)}); err != nil {
		t.Fatal(err)
	}
	return w.Registry.Requests()
}

// The bot: it bumps acme/cloud to 1.1.0 in a lock file it read from a
// repository it has not checked out, for the three platforms the team
// uses, and writes the file back. The other entries stay as they are,
// and the lock file is the one Init would accept: a read-only Init with
// it installs without a change.
func TestEmbedderBot(t *testing.T) {
	w := startWorldWith(t, installtest.Options{NoGit: true})
	ctx := context.Background()
	cloud := tfaddr.MustParseProviderSource(installtest.RegistryHost + "/acme/cloud")
	dns := tfaddr.MustParseProviderSource(installtest.RegistryHost + "/acme/dns")
	old := `provider "` + cloud.String() + `" {
  version     = "1.0.0"
  constraints = "~> 1.0.0"
}

provider "` + dns.String() + `" {
  version = "2.0.0"
}
`
	prev, err := lockfile.Parse([]byte(old), install.LockFileName)
	if err != nil {
		t.Fatal(err)
	}
	var plats []source.Platform
	for _, p := range installtest.Platforms() {
		pl, err := source.ParsePlatform(p)
		if err != nil {
			t.Fatal(err)
		}
		plats = append(plats, pl)
	}
	res, err := install.LockProvider(ctx, install.LockProviderOptions{
		Lock:        prev,
		Addr:        cloud,
		Version:     versions.MustParse("1.1.0"),
		Constraints: "~> 1.1.0",
		Platforms:   plats,
		Source:      w.Source,
	})
	if err != nil {
		t.Fatal(err)
	}
	pl := res.Lock.Provider(cloud)
	if pl.Version.String() != "1.1.0" || pl.Constraints != "~> 1.1.0" || len(pl.Hashes) != 2*len(plats) {
		t.Errorf("cloud locked %s %q with %d hashes, want 1.1.0 \"~> 1.1.0\" with an h1: and a zh: for each of %d platforms", pl.Version, pl.Constraints, len(pl.Hashes), len(plats))
	}
	if d := res.Lock.Provider(dns); d == nil || d.Version.String() != "2.0.0" {
		t.Errorf("dns %v, want 2.0.0 kept", d)
	}
	if len(res.Changes) != 1 {
		t.Errorf("changes %v, want cloud's upgrade only", res.Changes)
	}
	// The bump for a version outside the constraints it writes is
	// refused, typed.
	_, err = install.LockProvider(ctx, install.LockProviderOptions{
		Lock: prev, Addr: cloud, Version: versions.MustParse("1.1.0"), Constraints: "~> 1.0.0",
		Platforms: plats, Source: w.Source,
	})
	if !errors.Is(err, install.ErrVersionNotAllowed) {
		t.Errorf("LockProvider outside the constraints = %v, want install.ErrVersionNotAllowed", err)
	}

	// The file the bot commits: a checkout with the configuration the bot
	// edited installs it read-only, without a change.
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"main.tf": `terraform {
  required_providers {
    cloud = {
      source  = "` + cloud.String() + `"
      version = "~> 1.1.0"
    }
    dns = {
      source = "` + dns.String() + `"
    }
  }
}
`,
		install.LockFileName: string(res.Lock.Bytes()),
	})
	ir, err := install.Init(ctx, install.Options{Dir: dir, Source: w.Source, Cache: openCache(t), ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only Init with the bot's lock file: %v", err)
	}
	if len(ir.Changes) != 0 {
		t.Errorf("read-only Init with the bot's lock file: changes %v", ir.Changes)
	}
}
