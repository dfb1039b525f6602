package resolve_test

import (
	"context"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
)

// Brief is the word of a progress line ("- Selected X (word)"). An upgrade
// that kept the locked version said "upgraded"; a dev override said
// "unmanaged", the word OpenTofu keeps for reattached providers
// (OpenTofu v1.12.6 internal/command/meta_providers.go: "unmanaged"
// providers are the TF_REATTACH_PROVIDERS ones and "take precedence over
// overridden providers"; dev overrides are "provider development
// overrides").
func TestPickBrief(t *testing.T) {
	aws := tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/aws")
	null := tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/null")
	tool := tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/tool")
	const vpc = "registry.opentofu.org/acme/vpc/aws"
	lister := &mapLister{versions: map[string][]versions.Version{
		aws.String():  {versions.MustParse("1.0.0"), versions.MustParse("1.1.0")},
		null.String(): {versions.MustParse("3.2.0")},
		vpc:           {versions.MustParse("2.0.0"), versions.MustParse("2.1.0")},
	}}
	reqs := []resolve.Requirement{
		{Package: source.ProviderPackage{Addr: aws}},
		{Package: source.ProviderPackage{Addr: null}},
		{Package: source.ProviderPackage{Addr: tool}},
		{Package: source.ProviderPackage{Addr: tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/dev")}},
		{Package: source.ModulePackage{Source: vpc}, Call: "vpc", Constraints: mustConstraints(t, ">= 2.0")},
	}
	lf := lockfile.New()
	lf.SetProvider(&lockfile.ProviderLock{Addr: aws, Version: versions.MustParse("1.0.0")})
	lf.SetProvider(&lockfile.ProviderLock{Addr: null, Version: versions.MustParse("3.2.0")})
	lf.SetModule(&lockfile.ModuleLock{Path: "vpc", Source: vpc, Version: versions.MustParse("2.1.0")})
	dev := tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/dev")
	opts := resolve.Options{
		Lock:         lf,
		DevOverrides: []tfaddr.Provider{tool, dev},
		// tool is overridden and reattached: reattached wins.
		Reattach: `{"hashicorp/tool": {"Protocol": "grpc", "ProtocolVersion": 5, "Pid": 1, "Test": true, "Addr": {"Network": "unix", "String": "/tmp/plugin1"}}}`,
	}
	briefs := func(opts resolve.Options) map[string]string {
		t.Helper()
		sel, err := resolve.Resolve(context.Background(), reqs, lister, opts)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, p := range sel.Providers {
			out[p.Addr.Type] = p.Brief()
		}
		for _, m := range sel.Modules {
			out["module "+m.Call] = m.Brief()
		}
		return out
	}
	check := func(name string, got, want map[string]string) {
		t.Helper()
		for k, w := range want {
			if got[k] != w {
				t.Errorf("%s: %s: Brief = %q, want %q", name, k, got[k], w)
			}
		}
	}
	check("locked", briefs(opts), map[string]string{
		"aws": "locked", "null": "locked", "tool": "unmanaged", "dev": "dev override", "module vpc": "locked",
	})
	opts.Upgrade = true
	check("upgrade", briefs(opts), map[string]string{
		"aws": "upgraded from 1.0.0", "null": "already the newest", "tool": "unmanaged", "dev": "dev override", "module vpc": "already the newest",
	})
	// Nothing locked: an upgrade picks the newest, and says so.
	opts.Lock = nil
	check("upgrade without a lock", briefs(opts), map[string]string{
		"aws": "newest", "null": "newest", "module vpc": "newest",
	})
	// The constraint now excludes the locked version: -upgrade goes down.
	opts.Lock = lf
	reqs[0].Constraints = mustConstraints(t, "< 1.1")
	lf.SetProvider(&lockfile.ProviderLock{Addr: aws, Version: versions.MustParse("1.1.0")})
	check("downgrade", briefs(opts), map[string]string{"aws": "downgraded from 1.1.0"})
}

func mustConstraints(t *testing.T, s string) versions.Constraints {
	t.Helper()
	c, err := versions.ParseConstraints(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Explain tells a dev override from a reattached provider too.
func TestExplainDevOverride(t *testing.T) {
	tool := tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/tool")
	dev := tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/dev")
	reqs := []resolve.Requirement{{Package: source.ProviderPackage{Addr: tool}}, {Package: source.ProviderPackage{Addr: dev}}}
	sel, err := resolve.Resolve(context.Background(), reqs, &mapLister{}, resolve.Options{
		DevOverrides: []tfaddr.Provider{dev},
		Reattach:     `{"hashicorp/tool": {"Protocol": "grpc", "ProtocolVersion": 5, "Pid": 1, "Test": true, "Addr": {"Network": "unix", "String": "/tmp/plugin1"}}}`,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"dev":  "provider registry.opentofu.org/hashicorp/dev: dev override in the CLI configuration; not looked up, lock entry left as it is\n",
		"tool": "provider registry.opentofu.org/hashicorp/tool: unmanaged provider (TF_REATTACH_PROVIDERS); not looked up, lock entry left as it is\n",
	}
	for _, p := range sel.Providers {
		got := p.Explain()
		if w := want[p.Addr.Type]; len(got) < len(w) || got[:len(w)] != w {
			t.Errorf("Explain:\n%s\nwant it to start with:\n%s", got, w)
		}
	}
}
