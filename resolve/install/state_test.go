package install_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/config"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
)

const cloudAndDNS = `terraform {
  required_providers {
    cloud = { source = "registry.example.test/acme/cloud" }
    dns   = { source = "registry.example.test/acme/dns", version = "2.0.0" }
  }
}
`

const cloudOnly = `terraform {
  required_providers {
    cloud = { source = "registry.example.test/acme/cloud" }
  }
}
`

// stateUsing is a state (format 4) whose resources use the providers
// addrs.
func stateUsing(addrs ...string) string {
	var rs []string
	for i, a := range addrs {
		rs = append(rs, `{"mode": "managed", "type": "x", "name": "r`+string(rune('a'+i))+`", "provider": "provider[\"`+a+`\"]", "instances": []}`)
	}
	return `{"version": 4, "terraform_version": "1.12.6", "serial": 1, "lineage": "l", "outputs": {}, "resources": [` + strings.Join(rs, ",") + `]}`
}

// A provider the configuration no longer names but the state still uses
// stays locked at its version, as tofu keeps it; once the state no longer
// uses it either, it goes.
func TestInitStateKeepsProvider(t *testing.T) {
	w := startWorld(t)
	dns := tfaddr.MustParseProviderSource(installtest.RegistryHost + "/acme/dns")
	dir := t.TempDir()
	state := filepath.Join(dir, "terraform.tfstate")
	writeFiles(t, dir, map[string]string{"main.tf": cloudAndDNS})
	c := openCache(t)
	// No state yet: a missing state file is no state.
	initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: c, StateFile: state})

	// The resource moves out of the configuration, the state still has it.
	writeFiles(t, dir, map[string]string{"main.tf": cloudOnly, "terraform.tfstate": stateUsing(dns.String())})
	res := initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: c, StateFile: state})
	p := res.Lock.Provider(dns)
	if p == nil || p.Version.String() != "2.0.0" || p.Constraints != "" {
		t.Fatalf("dns = %+v, want the locked 2.0.0 kept, without constraints\n%s", p, res.Lock.Bytes())
	}
	pick := res.Selection.Provider(dns)
	if pick == nil || pick.Reason != resolve.Locked || len(pick.Requirements) != 1 || pick.Requirements[0].Origin.String() != "state ("+state+")" {
		t.Errorf("dns pick = %+v, want locked, required by the state", pick)
	}

	// A broken state file fails the run, naming the file, and changes
	// nothing.
	writeFiles(t, dir, map[string]string{"terraform.tfstate": `{"version": 4, "resources": [{"provider": "aws"}]}`})
	before := snapshot(t, dir)
	_, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: c, StateFile: state})
	var se *config.StateError
	if !errors.As(err, &se) || se.Filename != state || !strings.Contains(err.Error(), state+": resources[0]") {
		t.Errorf("broken state: %v, want a *config.StateError naming %s", err, state)
	}
	if snapshot(t, dir) != before {
		t.Error("a failed run changed the configuration directory")
	}

	// The state no longer uses it: it leaves the lock file.
	if err := os.Remove(state); err != nil {
		t.Fatal(err)
	}
	res = initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: c, StateFile: state})
	if res.Lock.Provider(dns) != nil {
		t.Errorf("dns still locked without state:\n%s", res.Lock.Bytes())
	}
}

// Init and Check take one settings struct and read it the same way: the
// state's providers are requirements for both. Before they shared it,
// Check ignored the state, so a state provider whose lock entry was
// removed by hand passed Check and failed the plan that followed.
func TestCheckReadsTheStateAsInitDoes(t *testing.T) {
	w := startWorld(t)
	dns := tfaddr.MustParseProviderSource(installtest.RegistryHost + "/acme/dns")
	dir := t.TempDir()
	state := filepath.Join(dir, "terraform.tfstate")
	writeFiles(t, dir, map[string]string{"main.tf": cloudOnly, "terraform.tfstate": stateUsing(dns.String())})
	opts := install.Options{Dir: dir, Source: w.Source, Cache: openCache(t), StateFile: state}
	initAndWrite(t, opts)
	res, err := install.Check(context.Background(), opts.ForCheck())
	if err != nil || len(res.Problems) != 0 || len(res.Providers) != 2 {
		t.Fatalf("Check after Init = %+v, %v; want both providers usable", res, err)
	}
	// The dns entry removed from the lock file: Check now names it.
	lf, err := lockfile.ParseFile(filepath.Join(dir, install.LockFileName))
	if err != nil {
		t.Fatal(err)
	}
	lf.RemoveProvider(dns)
	if err := os.WriteFile(filepath.Join(dir, install.LockFileName), lf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = install.Check(context.Background(), opts.ForCheck())
	if err == nil || !strings.Contains(err.Error(), dns.String()) {
		t.Fatalf("Check with the state's provider unlocked = %v, want an error naming %s", err, dns)
	}
	found := false
	for _, p := range res.Problems {
		found = found || (p.Package != nil && strings.Contains(p.Package.String(), "acme/dns"))
	}
	if !found {
		t.Errorf("problems %+v do not name the state's provider", res.Problems)
	}
}
