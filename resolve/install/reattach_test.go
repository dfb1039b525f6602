package install_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
)

const cloudAndDNSAny = `terraform {
  required_providers {
    cloud = { source = "registry.example.test/acme/cloud" }
    dns   = { source = "registry.example.test/acme/dns" }
  }
}
`

// reattachDNS is a TF_REATTACH_PROVIDERS value for acme/dns, as a
// provider's debug mode prints it.
const reattachDNS = `{"registry.example.test/acme/dns": {"Protocol": "grpc", "ProtocolVersion": 6, "Pid": 4242, "Test": true, "Addr": {"Network": "unix", "String": "/tmp/plugin42"}}}`

// A provider named in TF_REATTACH_PROVIDERS is running already: as tofu,
// Init neither looks it up nor installs it, and leaves its lock entry as
// it is (none, or the one an earlier run wrote).
func TestInitReattach(t *testing.T) {
	w := startWorld(t)
	cloud := tfaddr.MustParseProviderSource(installtest.RegistryHost + "/acme/cloud")
	dns := tfaddr.MustParseProviderSource(installtest.RegistryHost + "/acme/dns")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": cloudAndDNSAny})
	dnsDir := filepath.Join(dir, ".terraform", "providers", installtest.RegistryHost, "acme", "dns")
	c := openCache(t)

	res := initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: c, Resolve: resolve.Options{Reattach: reattachDNS}})
	if res.Lock.Provider(dns) != nil || res.Lock.Provider(cloud) == nil {
		t.Errorf("lock with dns reattached:\n%s", res.Lock.Bytes())
	}
	if pick := res.Selection.Provider(dns); pick == nil || pick.Reason != resolve.Unmanaged {
		t.Errorf("dns pick = %+v, want unmanaged", pick)
	}
	for _, p := range res.Providers {
		if p.Package.Addr == dns {
			t.Errorf("dns was fetched: %+v", p)
		}
	}
	if _, err := os.Stat(dnsDir); !os.IsNotExist(err) {
		t.Errorf("dns was installed: %v", err)
	}

	// Without it: dns is locked and installed as any provider.
	res = initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: c})
	locked := res.Lock.Provider(dns)
	if locked == nil || locked.Version.String() != "2.1.0" {
		t.Fatalf("dns lock = %+v, want 2.1.0", locked)
	}

	// Reattached again, with a constraint the locked version breaks: the
	// entry is left as it is and nothing is asked of the registry.
	writeFiles(t, dir, map[string]string{"main.tf": `terraform {
  required_providers {
    cloud = { source = "registry.example.test/acme/cloud" }
    dns   = { source = "registry.example.test/acme/dns", version = "2.0.0" }
  }
}
`})
	lockBefore := string(res.Lock.Bytes())
	before := w.Requests()
	res = initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: c, Resolve: resolve.Options{Reattach: reattachDNS}})
	if string(res.Lock.Bytes()) != lockBefore || len(res.Changes) != 0 {
		t.Errorf("the lock changed with dns reattached: %v\n%s", res.Changes, res.Lock.Bytes())
	}
	if n := w.Requests() - before; n != 0 {
		t.Errorf("%d requests with dns reattached and cloud locked, want 0", n)
	}

	// An invalid value fails before anything is read or written.
	snap := snapshot(t, dir)
	_, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: c, Resolve: resolve.Options{Reattach: `{"acme/dns": 1}`}})
	var re *resolve.ReattachError
	if !errors.As(err, &re) {
		t.Errorf("invalid reattach value: %v, want a *resolve.ReattachError", err)
	}
	if snapshot(t, dir) != snap {
		t.Error("a failed run changed the configuration directory")
	}
}
