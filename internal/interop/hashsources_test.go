package interop

import (
	"bytes"
	"testing"

	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// defaultHost is OpenTofu's default registry host, which its lock rule
// treats apart.
const defaultHost = "registry.opentofu.org"

// defaultHostTF requires the two providers of defaultHostFixtures.
const defaultHostTF = `terraform {
  required_providers {
    cloud = {
      source  = "acme/cloud"
      version = "~> 1.0"
    }
    dns = {
      source  = "acme/dns"
      version = ">= 2.0.0"
    }
  }
}
`

// defaultHostFixtures are installtest's providers served as
// registry.opentofu.org's, signed or not.
func defaultHostFixtures(unsigned bool) registrytest.Fixtures {
	plats := installtest.Platforms()
	return registrytest.Fixtures{Providers: []registrytest.Provider{
		{Addr: defaultHost + "/acme/cloud", Unsigned: unsigned, Versions: []registrytest.ProviderVersion{{Version: "1.0.0", Platforms: plats}, {Version: "1.1.0", Platforms: plats}}},
		{Addr: defaultHost + "/acme/dns", Unsigned: unsigned, Versions: []registrytest.ProviderVersion{{Version: "2.0.0", Platforms: plats}, {Version: "2.1.0", Platforms: plats}}},
	}}
}

func TestInteropReproDefaultHost(t *testing.T) {
	tofu := tool(t, "TFLOCK_TOFU", "tofu")
	for _, unsigned := range []bool{false, true} {
		w := newWorldWith(t, defaultHostFixtures(unsigned), registrytest.Options{Packages: true, Hosts: []string{defaultHost}})
		mine, theirs := w.bothFresh(tofu, defaultHostTF)
		if !bytes.Equal(mine, theirs) {
			t.Errorf("unsigned %v: differ\n--- tflock\n%s\n--- tofu\n%s", unsigned, mine, theirs)
		}
	}
}
