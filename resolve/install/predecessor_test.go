package install_test

import (
	"context"
	"strings"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/address"
	"github.com/tflock/tflock/source/registry"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// twoRegistries serves hashicorp/aws 1.0.0 and 1.1.0 under both
// OpenTofu's and Terraform's default registry hosts, as the two public
// registries do (with packages that differ byte for byte).
func twoRegistries(t *testing.T) (*registrytest.Server, source.Source) {
	t.Helper()
	plats := installtest.Platforms()
	var fx registrytest.Fixtures
	for _, h := range []string{address.DefaultRegistryHost, install.TerraformRegistryHost} {
		fx.Providers = append(fx.Providers, registrytest.Provider{Addr: h + "/hashicorp/aws", Versions: []registrytest.ProviderVersion{
			{Version: "1.0.0", Platforms: plats}, {Version: "1.1.0", Platforms: plats},
		}})
	}
	srv := registrytest.New(t, fx, registrytest.Options{Hosts: []string{address.DefaultRegistryHost, install.TerraformRegistryHost}})
	return srv, registry.NewSource(registry.Options{HTTPClient: srv.Client()})
}

const hostlessAWS = `terraform {
  required_providers {
    aws = { source = "hashicorp/aws", version = ">= 1.0.0" }
  }
}
`

// A configuration first locked by Terraform (its header, its registry),
// then by tflock as OpenTofu: the locked version is kept under OpenTofu's
// address, as tofu 1.12 does, not upgraded to the newest.
func TestInitPredecessorTranslation(t *testing.T) {
	srv, src := twoRegistries(t)
	tofuAWS := tfaddr.MustParseProviderSource(address.DefaultRegistryHost + "/hashicorp/aws")
	tfAWS := tfaddr.MustParseProviderSource(install.TerraformRegistryHost + "/hashicorp/aws")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": strings.Replace(hostlessAWS, ">= 1.0.0", "1.0.0", 1)})
	c := openCache(t)
	// "terraform init" when only 1.0.0 was allowed.
	initAndWrite(t, install.Options{Dir: dir, Source: src, Cache: c, Flavor: install.FlavorTerraform})
	writeFiles(t, dir, map[string]string{"main.tf": hostlessAWS})

	// Terraform's flavour, asked for: no translation, the entry stays.
	res, err := install.Init(context.Background(), install.Options{Dir: dir, Source: src, Cache: openCache(t), Flavor: install.FlavorTerraform, ProvidersLock: true})
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Lock.Provider(tfAWS); p == nil || p.Version.String() != "1.0.0" || res.Lock.Provider(tofuAWS) != nil {
		t.Fatalf("terraform flavour: lock\n%s", res.Lock.Bytes())
	}

	// tflock with the lock file as Terraform wrote it (flavour auto).
	var warned []string
	res = initAndWrite(t, install.Options{Dir: dir, Source: src, Cache: c, Events: source.EventsFunc(func(e source.Event) {
		if e.Kind == source.EventWarning {
			warned = append(warned, e.Detail)
		}
	})})
	p := res.Lock.Provider(tofuAWS)
	if p == nil || p.Version.String() != "1.0.0" {
		t.Fatalf("aws = %+v, want the locked 1.0.0 carried over\n%s", p, res.Lock.Bytes())
	}
	if res.Lock.Provider(tfAWS) != nil {
		t.Errorf("the predecessor's entry was kept:\n%s", res.Lock.Bytes())
	}
	if pick := res.Selection.Provider(tofuAWS); pick == nil || pick.Reason != resolve.Translated {
		t.Errorf("pick = %+v, want reason translated", pick)
	}
	// The hashes are those of OpenTofu's package, none of Terraform's.
	tofuPkg, _ := srv.ProviderPackage(tofuAWS.String(), "1.0.0", source.CurrentPlatform.String())
	tfPkg, _ := srv.ProviderPackage(tfAWS.String(), "1.0.0", source.CurrentPlatform.String())
	if !containsHash(p.Hashes, tofuPkg.H1) || !containsHash(p.Hashes, tofuPkg.ZH) || containsHash(p.Hashes, tfPkg.H1) || containsHash(p.Hashes, tfPkg.ZH) {
		t.Errorf("aws hashes %v: want OpenTofu's %s and %s, not Terraform's", p.Hashes, tofuPkg.H1, tofuPkg.ZH)
	}
	want := install.TerraformRegistryHost + "/hashicorp/aws => " + address.DefaultRegistryHost + "/hashicorp/aws (1.0.0)"
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], want) || len(warned) != 1 || warned[0] != res.Warnings[0] {
		t.Errorf("warnings %q (events %q), want one naming %q", res.Warnings, warned, want)
	}
	if res.Lock.Header() != lockfile.HeaderTerraform {
		t.Errorf("the file's flavour changed: header %v", res.Lock.Header())
	}

	// Again: the entry is now OpenTofu's own, kept with no warning and no
	// registry contacted.
	before := srv.Requests()
	res = initAndWrite(t, install.Options{Dir: dir, Source: src, Cache: c})
	if len(res.Changes) != 0 || len(res.Warnings) != 0 || srv.Requests() != before {
		t.Errorf("second run: changes %v, warnings %q, %d requests", res.Changes, res.Warnings, srv.Requests()-before)
	}
	if pick := res.Selection.Provider(tofuAWS); pick == nil || pick.Reason != resolve.Locked {
		t.Errorf("second run pick = %+v, want locked", pick)
	}

	// -upgrade ignores it, as any lock entry.
	res = initAndWrite(t, install.Options{Dir: dir, Source: src, Cache: c, Resolve: resolve.Options{Upgrade: true}})
	if v := res.Lock.Provider(tofuAWS).Version.String(); v != "1.1.0" {
		t.Errorf("upgrade: aws %s, want 1.1.0", v)
	}
}
