package source_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/sourcetest"
)

var (
	nullAddr   = tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/null")
	randAddr   = tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/random")
	linuxAMD64 = source.Platform{OS: "linux", Arch: "amd64"}
	darwinARM  = source.Platform{OS: "darwin", Arch: "arm64"}
)

func prov(addr tfaddr.Provider, v string, plat source.Platform, content string) sourcetest.StaticProvider {
	return sourcetest.StaticProvider{Addr: addr, Version: versions.MustParse(v), Platform: plat, Files: map[string]string{"terraform-provider-" + addr.Type: content}}
}

func pkg(addr tfaddr.Provider, v string, plat source.Platform) source.ProviderPackage {
	return source.ProviderPackage{Addr: addr, Version: versions.MustParse(v), Platform: plat}
}

// local and remote model a filesystem mirror in front of a registry.
func localRemote() (*sourcetest.Static, *sourcetest.Static) {
	local := &sourcetest.Static{Name: "local", Providers: []sourcetest.StaticProvider{
		prov(nullAddr, "3.2.0", linuxAMD64, "local null 3.2.0"),
	}}
	remote := &sourcetest.Static{Name: "remote", Providers: []sourcetest.StaticProvider{
		prov(nullAddr, "3.1.0", linuxAMD64, "remote null 3.1.0"),
		prov(nullAddr, "3.2.0", linuxAMD64, "remote null 3.2.0"),
		prov(nullAddr, "3.2.0", darwinARM, "remote null 3.2.0 darwin"),
		prov(randAddr, "3.6.0", linuxAMD64, "remote random"),
	}, Modules: []sourcetest.StaticModule{
		{Source: "registry.opentofu.org/acme/vpc/aws", Version: versions.MustParse("1.0.0"), Files: map[string]string{"main.tf": "#"}},
	}}
	return local, remote
}

func TestMultiConformance(t *testing.T) {
	local, remote := localRemote()
	m := source.Multi(local, remote)
	sourcetest.Run(t, m, remoteCases(pkg(nullAddr, "3.1.0", linuxAMD64)))
}

// remoteCases are the conformance cases of a source holding what
// localRemote's remote holds: its packages, with another known one.
func remoteCases(other source.Package) sourcetest.Cases {
	return sourcetest.Cases{
		Known: []source.Package{
			pkg(nullAddr, "3.2.0", linuxAMD64),
			other,
			pkg(randAddr, "3.6.0", linuxAMD64),
			source.ModulePackage{Source: "registry.opentofu.org/acme/vpc/aws", Version: versions.MustParse("1.0.0")},
		},
		MissingVersion:  pkg(nullAddr, "9.0.0", linuxAMD64),
		MissingPlatform: pkg(randAddr, "3.6.0", darwinARM),
	}
}

func TestMultiUnionAndPriority(t *testing.T) {
	ctx := context.Background()
	local, remote := localRemote()
	m := source.Multi(local, remote)
	list, err := m.Versions(ctx, source.ProviderPackage{Addr: nullAddr})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range list {
		got = append(got, a.Version.String())
	}
	if strings.Join(got, " ") != "3.1.0 3.2.0" {
		t.Errorf("versions = %v, want the union [3.1.0 3.2.0]", got)
	}
	if p := list[1].Platforms; len(p) != 2 {
		t.Errorf("platforms of 3.2.0 = %v, want the union of both sources", p)
	}

	// The first source that has the package wins.
	f, err := m.Fetch(ctx, pkg(nullAddr, "3.2.0", linuxAMD64), filepath.Join(t.TempDir(), "a"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(f.Location, "local:") {
		t.Errorf("3.2.0 fetched from %q, want the local source", f.Location)
	}
	// A platform the first source lacks comes from the next.
	f, err = m.Fetch(ctx, pkg(nullAddr, "3.2.0", darwinARM), filepath.Join(t.TempDir(), "b"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(f.Location, "remote:") {
		t.Errorf("darwin package fetched from %q, want the remote source", f.Location)
	}
}

func TestMultiSelectors(t *testing.T) {
	ctx := context.Background()
	local, remote := localRemote()
	// As in a provider_installation block: the local mirror only for
	// hashicorp/null; the registry for everything except hashicorp/null.
	m := source.Multi(
		source.Selector{Source: local, Include: []source.Pattern{source.MustParseProviderPattern("hashicorp/null")}},
		source.Selector{Source: remote, Exclude: []source.Pattern{source.MustParseProviderPattern("hashicorp/null")}},
	)
	list, err := m.Versions(ctx, source.ProviderPackage{Addr: nullAddr})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Version.String() != "3.2.0" {
		t.Errorf("null versions = %+v, want only the local mirror's 3.2.0", list)
	}
	if _, err := m.Fetch(ctx, pkg(nullAddr, "3.1.0", linuxAMD64), filepath.Join(t.TempDir(), "x")); !errors.Is(err, source.ErrVersionNotFound) {
		t.Errorf("3.1.0 exists only in the excluded source: got %v, want ErrVersionNotFound", err)
	}
	if _, err := m.Versions(ctx, source.ProviderPackage{Addr: randAddr}); err != nil {
		t.Errorf("random is included by the second selector: %v", err)
	}
	// Provider patterns do not restrict modules.
	if _, err := m.Versions(ctx, source.ModulePackage{Source: "registry.opentofu.org/acme/vpc/aws"}); err != nil {
		t.Errorf("module through provider-pattern selectors: %v", err)
	}
	// Nothing handles it: the error names the searched sources.
	none := source.Multi(source.Selector{Source: remote, Name: "the registry", Include: []source.Pattern{source.MustParseProviderPattern("hashicorp/null")}})
	_, err = none.Versions(ctx, source.ProviderPackage{Addr: randAddr})
	if !errors.Is(err, source.ErrNotFound) || !strings.Contains(err.Error(), "no source is configured") {
		t.Errorf("got %v", err)
	}
	_, err = source.Multi(source.Selector{Source: remote, Name: "the registry"}).Versions(ctx, source.ProviderPackage{Addr: tfaddr.MustParseProviderSource("example.com/x/y")})
	if !errors.Is(err, source.ErrNotFound) || !strings.Contains(err.Error(), "the registry") {
		t.Errorf("got %v, want a not-found error naming the registry", err)
	}
}

func TestMultiStopsOnOtherErrors(t *testing.T) {
	boom := errors.New("connection refused")
	broken := source.Join(
		source.ListerFunc(func(context.Context, source.Package) ([]source.Available, error) { return nil, boom }),
		source.FetcherFunc(func(context.Context, source.Package, string) (*source.Fetched, error) { return nil, boom }),
	)
	_, remote := localRemote()
	m := source.Multi(broken, remote)
	if _, err := m.Versions(context.Background(), source.ProviderPackage{Addr: nullAddr}); !errors.Is(err, boom) {
		t.Errorf("Versions: got %v, want the broken source's error", err)
	}
	if _, err := m.Fetch(context.Background(), pkg(nullAddr, "3.2.0", linuxAMD64), t.TempDir()); !errors.Is(err, boom) {
		t.Errorf("Fetch: got %v, want the broken source's error", err)
	}
}

func TestMultiChecksums(t *testing.T) {
	local, remote := localRemote()
	plain := source.Join(local, local) // not a ChecksumReporter
	m := source.Multi(plain, remote)
	recs, err := m.Checksums(context.Background(), pkg(nullAddr, "3.2.0", linuxAMD64))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Provenance.Registries[0] != "remote" {
		t.Errorf("got %+v, want remote's two platforms", recs)
	}
	for _, r := range recs {
		if _, err := hash.ParseHash(string(r.Hash)); err != nil {
			t.Error(err)
		}
	}
}

func TestMultiModulePatterns(t *testing.T) {
	ctx := context.Background()
	internal := &sourcetest.Static{Name: "internal", Modules: []sourcetest.StaticModule{
		{Source: "git::https://git.example.com/acme/net.git", Version: versions.MustParse("2.0.0"), Files: map[string]string{"main.tf": "#"}},
	}}
	_, remote := localRemote()
	m := source.Multi(
		source.Selector{Source: internal, Include: []source.Pattern{must(source.ParseModulePattern("git::https://git.example.com/*"))}},
		source.Selector{Source: remote, Exclude: []source.Pattern{must(source.ParseModulePattern("git::https://git.example.com/*"))}},
	)
	if _, err := m.Versions(ctx, source.ModulePackage{Source: "git::https://git.example.com/acme/net.git"}); err != nil {
		t.Error(err)
	}
	if _, err := m.Versions(ctx, source.ModulePackage{Source: "registry.opentofu.org/acme/vpc/aws"}); err != nil {
		t.Errorf("registry module through the second selector: %v", err)
	}
	// The module include of the first selector does not restrict providers.
	if _, err := m.Versions(ctx, source.ProviderPackage{Addr: nullAddr}); err != nil {
		t.Error(err)
	}
}

// TestMultiNoSources checks that a search with no source at all (a
// provider installation with no method, as one holding only dev_overrides)
// says so, as OpenTofu's installation source then lists no versions
// instead of "not found", and that a search whose sources all exclude the
// package does not.
func TestMultiNoSources(t *testing.T) {
	ctx := context.Background()
	var nf *source.NotFoundError
	_, err := source.Multi().Versions(ctx, source.ProviderPackage{Addr: nullAddr})
	if !errors.As(err, &nf) || !nf.NoSources || len(nf.Sources) != 0 {
		t.Errorf("no sources: got %v (%+v), want a NotFoundError with NoSources", err, nf)
	}
	_, remote := localRemote()
	excluding := source.Multi(source.Selector{Source: remote, Exclude: []source.Pattern{source.MustParseProviderPattern("hashicorp/null")}})
	nf = nil
	_, err = excluding.Versions(ctx, source.ProviderPackage{Addr: nullAddr})
	if !errors.As(err, &nf) || nf.NoSources {
		t.Errorf("every source excludes it: got %v (%+v), want a NotFoundError without NoSources", err, nf)
	}
}
