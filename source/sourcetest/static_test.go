package sourcetest_test

import (
	"context"
	"errors"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"
	"golang.org/x/mod/sumdb/dirhash"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/sourcetest"
)

var (
	nullAddr   = tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/null")
	linuxAMD64 = source.Platform{OS: "linux", Arch: "amd64"}
	darwinARM  = source.Platform{OS: "darwin", Arch: "arm64"}
)

func testStatic() *sourcetest.Static {
	return &sourcetest.Static{
		Name: "fixture",
		Providers: []sourcetest.StaticProvider{
			{Addr: nullAddr, Version: versions.MustParse("3.2.0"), Platform: linuxAMD64, Files: map[string]string{"terraform-provider-null_v3.2.0_x5": "null 3.2.0 linux"}},
			{Addr: nullAddr, Version: versions.MustParse("3.10.0"), Platform: linuxAMD64, Files: map[string]string{"terraform-provider-null_v3.10.0_x5": "null 3.10.0 linux"}},
			{Addr: nullAddr, Version: versions.MustParse("3.2.0"), Platform: darwinARM, Files: map[string]string{"terraform-provider-null_v3.2.0_x5": "null 3.2.0 darwin"}},
		},
		Modules: []sourcetest.StaticModule{
			{Source: "registry.opentofu.org/acme/vpc/aws", Version: versions.MustParse("1.0.0"), Files: map[string]string{"main.tf": "# v1\n", "modules/sub/main.tf": "# sub\n"}},
			{Source: "registry.opentofu.org/acme/vpc/aws", Version: versions.MustParse("0.9.0"), Files: map[string]string{"main.tf": "# v0.9\n"}},
			{Source: "git::https://git.example.com/acme/net.git", Ref: "main", Pin: "0123456789abcdef0123456789abcdef01234567", Files: map[string]string{"main.tf": "# main\n"}},
		},
	}
}

// h1Of computes the expected h1 from the definition: dirhash.Hash1 over the
// files' names and contents.
func h1Of(t *testing.T, files map[string]string) hash.Hash {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := writeFile(dir, name, content); err != nil {
			t.Fatal(err)
		}
	}
	h, err := dirhash.HashDir(dir, "", dirhash.Hash1)
	if err != nil {
		t.Fatal(err)
	}
	return hash.Hash(h)
}

func TestStaticConformance(t *testing.T) {
	s := testStatic()
	p320 := source.ProviderPackage{Addr: nullAddr, Version: versions.MustParse("3.2.0"), Platform: linuxAMD64}
	sourcetest.Run(t, s, sourcetest.Cases{
		Known: []source.Package{
			p320,
			source.ProviderPackage{Addr: nullAddr, Version: versions.MustParse("3.10.0"), Platform: linuxAMD64},
			source.ModulePackage{Source: "registry.opentofu.org/acme/vpc/aws", Version: versions.MustParse("1.0.0")},
			source.ModulePackage{Source: "git::https://git.example.com/acme/net.git", Ref: "main"},
		},
		WantH1: map[string]hash.Hash{
			p320.String(): h1Of(t, s.Providers[0].Files),
		},
		MissingVersion:  source.ProviderPackage{Addr: nullAddr, Version: versions.MustParse("9.9.9"), Platform: linuxAMD64},
		MissingPlatform: source.ProviderPackage{Addr: nullAddr, Version: versions.MustParse("3.10.0"), Platform: darwinARM},
	})
}

func TestStaticVersionsOrderAndPlatforms(t *testing.T) {
	list, err := testStatic().Versions(context.Background(), source.ProviderPackage{Addr: nullAddr})
	if err != nil {
		t.Fatal(err)
	}
	// 3.10.0 sorts after 3.2.0 by semver precedence, not by string.
	if len(list) != 2 || list[0].Version.String() != "3.2.0" || list[1].Version.String() != "3.10.0" {
		t.Fatalf("Versions = %+v", list)
	}
	if got := list[0].Platforms; len(got) != 2 || got[0] != darwinARM || got[1] != linuxAMD64 {
		t.Errorf("platforms of 3.2.0 = %v, want [darwin_arm64 linux_amd64]", got)
	}
}

func TestStaticChecksumsAllPlatforms(t *testing.T) {
	s := testStatic()
	recs, err := s.Checksums(context.Background(), source.ProviderPackage{Addr: nullAddr, Version: versions.MustParse("3.2.0"), Platform: linuxAMD64})
	if err != nil {
		t.Fatal(err)
	}
	want := map[hash.Hash]string{
		h1Of(t, s.Providers[0].Files): "linux_amd64",
		h1Of(t, s.Providers[2].Files): "darwin_arm64",
	}
	if len(recs) != len(want) {
		t.Fatalf("got %d records, want %d: %+v", len(recs), len(want), recs)
	}
	for _, r := range recs {
		if plat, ok := want[r.Hash]; !ok || len(r.Provenance.Platforms) != 1 || r.Provenance.Platforms[0] != plat || r.Provenance.Registries[0] != "fixture" {
			t.Errorf("unexpected record %+v", r)
		}
	}
}

func TestStaticPinMismatch(t *testing.T) {
	_, err := testStatic().Fetch(context.Background(), source.ModulePackage{Source: "git::https://git.example.com/acme/net.git", Ref: "main", Pin: "ffffffffffffffffffffffffffffffffffffffff"}, t.TempDir())
	if !errors.Is(err, source.ErrChecksumMismatch) {
		t.Fatalf("got %v, want ErrChecksumMismatch", err)
	}
}

func TestStaticRejectsUnsafeNames(t *testing.T) {
	s := &sourcetest.Static{Modules: []sourcetest.StaticModule{{Source: "x/y/z", Version: versions.MustParse("1.0.0"), Files: map[string]string{"../escape": "x"}}}}
	dir := t.TempDir()
	if _, err := s.Fetch(context.Background(), source.ModulePackage{Source: "x/y/z", Version: versions.MustParse("1.0.0")}, dir); err == nil {
		t.Fatal("Fetch wrote a file named ../escape")
	}
}
