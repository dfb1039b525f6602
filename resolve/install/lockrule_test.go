package install_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/mirror"
	"github.com/tflock/tflock/source/registry"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// lockRulePlatforms are the platforms of the provider of the lock-rule
// tests; the first is the one Init installs.
var lockRulePlatforms = []string{"linux_amd64", "darwin_arm64", "windows_amd64"}

// lockRuleRun runs Init (or providers-lock mode for the platforms asked)
// for one provider of src and returns the hashes recorded for it, sorted.
func lockRuleRun(t *testing.T, src source.Source, addr string, asked []string) ([]hash.Hash, error) {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": `terraform {
  required_providers {
    tool = { source = "` + addr + `" }
  }
}
`})
	install0, _ := source.ParsePlatform(lockRulePlatforms[0])
	opts := install.Options{Dir: dir, Source: src, Cache: openCache(t), Resolve: resolve.Options{Lock: lockfile.New()}, Platform: install0}
	if asked != nil {
		opts.ProvidersLock = true
		for _, p := range asked {
			pl, _ := source.ParsePlatform(p)
			opts.Platforms = append(opts.Platforms, pl)
		}
	}
	res, err := install.Init(context.Background(), opts)
	if err != nil {
		return nil, err
	}
	got := slices.Clone(res.Lock.ProviderHashes(tfaddr.MustParseProviderSource(addr)))
	slices.Sort(got)
	return got, nil
}

// TestLockRuleRegistry: issue 21 item 1. OpenTofu's rule for the hashes a
// registry reports: for its default registry (registry.opentofu.org),
// every hash reported, the packages field's h1: and zh: of every platform,
// signed or not, in init and in providers lock alike; with
// OPENTOFU_ENFORCE_GPG_VALIDATION=true, and for any other host, the
// signed zh: of every platform and the h1: of the packages hashed here.
func TestLockRuleRegistry(t *testing.T) {
	for _, tc := range []struct {
		name     string
		host     string
		unsigned bool
		enforce  bool
		allH1    bool // every platform's h1:, else the hashed ones'
	}{
		{"default registry, signed", "registry.opentofu.org", false, false, true},
		{"default registry, no key", "registry.opentofu.org", true, false, true},
		{"default registry, signed, enforced", "registry.opentofu.org", false, true, false},
		{"other registry", "registry.example.test", false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := tc.host + "/acme/tool"
			fx := registrytest.Fixtures{Providers: []registrytest.Provider{{Addr: addr, Unsigned: tc.unsigned,
				Versions: []registrytest.ProviderVersion{{Version: "1.0.0", Platforms: lockRulePlatforms}}}}}
			srv := registrytest.New(t, fx, registrytest.Options{Hosts: []string{tc.host}, Packages: true})
			src := registry.NewSource(registry.Options{HTTPClient: srv.Client(), LookupEnv: func(k string) (string, bool) {
				if k == registry.EnforceSignaturesEnv && tc.enforce {
					return "true", true
				}
				return "", false
			}})
			for _, asked := range [][]string{nil, {"darwin_arm64"}, lockRulePlatforms} {
				hashed := asked
				if hashed == nil {
					hashed = lockRulePlatforms[:1] // init: the installed one
				}
				var want []hash.Hash
				for _, p := range lockRulePlatforms {
					info, _ := srv.ProviderPackage(addr, "1.0.0", p)
					want = append(want, info.ZH)
					if tc.allH1 || slices.Contains(hashed, p) {
						want = append(want, info.H1)
					}
				}
				slices.Sort(want)
				got, err := lockRuleRun(t, src, addr, asked)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want) {
					t.Errorf("platforms asked %v: hashes\n got %v\nwant %v", asked, got, want)
				}
			}
		})
	}
}

// TestLockRuleEnforcedUnsigned: with OPENTOFU_ENFORCE_GPG_VALIDATION=true,
// a provider of the default registry that lists no signing key is refused,
// as OpenTofu refuses it.
func TestLockRuleEnforcedUnsigned(t *testing.T) {
	addr := "registry.opentofu.org/acme/tool"
	fx := registrytest.Fixtures{Providers: []registrytest.Provider{{Addr: addr, Unsigned: true,
		Versions: []registrytest.ProviderVersion{{Version: "1.0.0", Platforms: lockRulePlatforms}}}}}
	srv := registrytest.New(t, fx, registrytest.Options{Hosts: []string{"registry.opentofu.org"}, Packages: true})
	src := registry.NewSource(registry.Options{HTTPClient: srv.Client(), LookupEnv: func(k string) (string, bool) {
		return "true", k == registry.EnforceSignaturesEnv
	}})
	if got, err := lockRuleRun(t, src, addr, nil); err == nil {
		t.Fatalf("an unsigned provider was accepted with %s=true: %v", registry.EnforceSignaturesEnv, got)
	}
}

// TestLockRuleFilesystemMirror: issue 21 item 2. An init from a filesystem
// mirror, packed or unpacked, records the h1: of every platform the mirror
// holds (and a packed mirror's zh:), more than tofu, which records the
// installed one's: a lock made on one platform verifies the others'
// packages from the same mirror. Providers-lock mode records the
// platforms asked for.
func TestLockRuleFilesystemMirror(t *testing.T) {
	const addr = "registry.example.test/acme/tool"
	for _, packed := range []bool{false, true} {
		dir := t.TempDir()
		h1 := map[string]hash.Hash{}
		zh := map[string]hash.Hash{}
		for _, p := range lockRulePlatforms {
			files := map[string]string{"terraform-provider-tool_v1.0.0": "binary for " + p + "\n"}
			if !packed {
				writeFiles(t, filepath.Join(dir, addr, "1.0.0", p), files)
				h, err := hash.H1Dir(filepath.Join(dir, addr, "1.0.0", p))
				if err != nil {
					t.Fatal(err)
				}
				h1[p] = h
				continue
			}
			zp := filepath.Join(dir, addr, "terraform-provider-tool_1.0.0_"+p+".zip")
			writeProviderZip(t, zp, "terraform-provider-tool_v1.0.0", files["terraform-provider-tool_v1.0.0"])
			sum, err := hash.HashZip(zp)
			if err != nil {
				t.Fatal(err)
			}
			h1[p], zh[p] = sum.H1, sum.ZH
		}
		for _, asked := range [][]string{nil, {"darwin_arm64"}} {
			plats := asked
			if plats == nil {
				plats = lockRulePlatforms // init: every platform the mirror holds
			}
			var want []hash.Hash
			for _, p := range plats {
				want = append(want, h1[p])
				if packed {
					want = append(want, zh[p])
				}
			}
			slices.Sort(want)
			got, err := lockRuleRun(t, mirror.NewFilesystem(dir), addr, asked)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("packed %v, platforms asked %v: hashes\n got %v\nwant %v", packed, asked, got, want)
			}
		}
	}
}
