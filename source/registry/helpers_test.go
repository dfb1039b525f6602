package registry_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/registry"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// fixtures is the registry content most tests use.
var fixtures = registrytest.Fixtures{
	Providers: []registrytest.Provider{
		{Addr: "hashicorp/aws", Versions: []registrytest.ProviderVersion{
			{Version: "5.1.0", Platforms: []string{"linux_amd64", "darwin_arm64", "windows_amd64"}},
			{Version: "4.67.0", Protocols: []string{"5.0"}},
			{Version: "5.0.0-beta1"},
		}},
		{Addr: "acme/random", Versions: []registrytest.ProviderVersion{{Version: "3.6.0"}}},
	},
	Modules: []registrytest.Module{
		{Addr: "terraform-aws-modules/vpc/aws", Versions: []registrytest.ModuleVersion{
			{Version: "3.19.0", Files: map[string]string{"main.tf": "# vpc\n", "modules/nat/main.tf": "# nat\n"}},
			{Version: "3.18.1", Delivery: registrytest.DeliverHeader, Subdir: "modules/nat"},
			{Version: "2.0.0", Delivery: registrytest.DeliverDirect},
			{Version: "1.0.0", Location: "git::https://git.example.test/vpc.git//sub?ref=v1.0.0"},
		}},
	},
}

// warnings collects what a Source reports through Options.Warn.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) add(m string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, m)
}

func (w *warnings) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.msgs)
}

// newSource returns a Source talking to srv, with fast retries.
func newSource(srv *registrytest.Server, mod func(*registry.Options)) (*registry.Source, *warnings) {
	w := &warnings{}
	o := registry.Options{
		HTTPClient:  srv.Client(),
		Credentials: registry.Tokens{},
		MinBackoff:  time.Millisecond,
		MaxBackoff:  5 * time.Millisecond,
		Warn:        w.add,
		LookupEnv:   noEnv,
	}
	if mod != nil {
		mod(&o)
	}
	return registry.NewSource(o), w
}

func providerPkg(t testing.TB, addr, version, platform string) source.ProviderPackage {
	t.Helper()
	p := source.ProviderPackage{Addr: tfaddr.MustParseProviderSource(addr)}
	if version != "" {
		p.Version = versions.MustParse(version)
	}
	if platform != "" {
		pl, err := source.ParsePlatform(platform)
		if err != nil {
			t.Fatal(err)
		}
		p.Platform = pl
	}
	return p
}

// nothingLeft fails if dir exists or its parent holds staging leftovers.
func nothingLeft(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("%s exists after a failed fetch", dir)
	}
	entries, _ := os.ReadDir(filepath.Dir(dir))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".tflock-") {
			t.Errorf("staging leftover %s", e.Name())
		}
	}
}

// noEnv is an empty environment, so that no test reads the real one.
func noEnv(string) (string, bool) { return "", false }
