package mirror_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/internal/testdir"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/mirror"
	"github.com/tflock/tflock/source/sourcetest"
)

const fsMirror = "internal/getproviders/testdata/filesystem-mirror"

func plat(s string) source.Platform {
	p, err := source.ParsePlatform(s)
	if err != nil {
		panic(err)
	}
	return p
}

func ppkg(addr, v, p string) source.ProviderPackage {
	return source.ProviderPackage{Addr: tfaddr.MustParseProviderSource(addr), Version: versions.MustParse(v), Platform: plat(p)}
}

func TestFilesystemEntries(t *testing.T) {
	m := mirror.NewFilesystem(testdir.OpenTofu(t, fsMirror))
	entries, err := m.Entries(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		s := e.Package.String()
		if e.Packed {
			s += " (packed)"
		}
		got = append(got, s)
	}
	// What OpenTofu's TestFilesystemMirrorSourceAllAvailablePackages finds
	// in this directory; the "invalid" file and the zips with malformed
	// names are ignored.
	want := []string{
		"registry.opentofu.org/-/legacy 1.0.0 linux_amd64",
		"registry.opentofu.org/hashicorp/null 2.0.0 darwin_amd64",
		"registry.opentofu.org/hashicorp/null 2.0.0 linux_amd64",
		"registry.opentofu.org/hashicorp/null 2.0.0 windows_amd64",
		"registry.opentofu.org/hashicorp/null 2.1.0 linux_amd64 (packed)",
		"registry.opentofu.org/hashicorp/random 1.2.0 linux_amd64",
		"registry.opentofu.org/hashicorp/random-beta 1.2.0 linux_amd64",
		"tfe.example.com/awesomecorp/happycloud 0.1.0-alpha.2 darwin_amd64",
	}
	if !slices.Equal(got, want) {
		t.Errorf("entries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	provs, err := m.Providers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(provs) != 5 {
		t.Errorf("providers = %v, want 5", provs)
	}
}

func TestFilesystemConformance(t *testing.T) {
	vec := testdir.HashVectors(t)
	m := mirror.NewFilesystem(testdir.OpenTofu(t, fsMirror))
	null := ppkg("registry.opentofu.org/hashicorp/null", "2.0.0", "linux_amd64")
	happy := ppkg("tfe.example.com/AwesomeCorp/happycloud", "0.1.0-alpha.2", "darwin_amd64")
	win := ppkg("registry.opentofu.org/hashicorp/null", "2.0.0", "windows_amd64")
	sourcetest.Run(t, m, sourcetest.Cases{
		Known: []source.Package{null, happy, win, ppkg("registry.opentofu.org/hashicorp/random", "1.2.0", "linux_amd64")},
		WantH1: map[string]hash.Hash{
			null.String():  hash.Hash(vec[fsMirror+"/registry.opentofu.org/hashicorp/null/2.0.0/linux_amd64"].H1),
			happy.String(): hash.Hash(vec[fsMirror+"/tfe.example.com/AwesomeCorp/happycloud/0.1.0-alpha.2/darwin_amd64"].H1),
			win.String():   hash.Hash(vec[fsMirror+"/registry.opentofu.org/hashicorp/null/2.0.0/windows_amd64"].H1),
		},
		MissingVersion:  ppkg("registry.opentofu.org/hashicorp/null", "9.9.9", "linux_amd64"),
		MissingPlatform: ppkg("registry.opentofu.org/hashicorp/null", "2.0.0", "linux_arm64"),
	})
}

func TestFilesystemChecksums(t *testing.T) {
	vec := testdir.HashVectors(t)
	dir := testdir.OpenTofu(t, fsMirror)
	m := mirror.NewFilesystem(dir)
	recs, err := m.Checksums(context.Background(), ppkg("registry.opentofu.org/hashicorp/null", "2.0.0", "linux_amd64"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, p := range []string{"darwin_amd64", "linux_amd64", "windows_amd64"} {
		want[p] = vec[fsMirror+"/registry.opentofu.org/hashicorp/null/2.0.0/"+p].H1
	}
	if len(recs) != 3 {
		t.Fatalf("got %d records, want 3: %+v", len(recs), recs)
	}
	for _, r := range recs {
		p := r.Provenance.Platforms[0]
		if string(r.Hash) != want[p] || r.Provenance.Mirrors[0] != dir {
			t.Errorf("%s: got %s from %v, want %s", p, r.Hash, r.Provenance.Mirrors, want[p])
		}
	}
	// The packed 2.1.0 is a placeholder, not a zip: only its zh: is known.
	recs, err = m.Checksums(context.Background(), ppkg("registry.opentofu.org/hashicorp/null", "2.1.0", "linux_amd64"))
	if err != nil {
		t.Fatal(err)
	}
	wantZH := vec[fsMirror+"/registry.opentofu.org/hashicorp/null/terraform-provider-null_2.1.0_linux_amd64.zip"].ZH
	if len(recs) != 1 || string(recs[0].Hash) != wantZH {
		t.Errorf("got %+v, want only %s", recs, wantZH)
	}
}

func TestFilesystemInvalidZipLeavesNothing(t *testing.T) {
	m := mirror.NewFilesystem(testdir.OpenTofu(t, fsMirror))
	dir := filepath.Join(t.TempDir(), "out")
	_, err := m.Fetch(context.Background(), ppkg("registry.opentofu.org/hashicorp/null", "2.1.0", "linux_amd64"), dir)
	if err == nil || !strings.Contains(err.Error(), "terraform-provider-null_2.1.0_linux_amd64.zip") {
		t.Fatalf("got %v, want an error naming the zip", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("failed fetch left %s behind", dir)
	}
}

func TestFilesystemPackedZip(t *testing.T) {
	vec := testdir.HashVectors(t)
	const zipRel = "internal/providercache/testdata/provider-null_2.1.0_linux_amd64.zip"
	root := t.TempDir()
	typeDir := filepath.Join(root, "registry.opentofu.org", "hashicorp", "null")
	if err := os.MkdirAll(typeDir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(testdir.OpenTofu(t, zipRel))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(typeDir, "terraform-provider-null_2.1.0_linux_amd64.zip"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	m := mirror.NewFilesystem(root)
	pkg := ppkg("registry.opentofu.org/hashicorp/null", "2.1.0", "linux_amd64")
	sourcetest.Run(t, m, sourcetest.Cases{
		Known:  []source.Package{pkg},
		WantH1: map[string]hash.Hash{pkg.String(): hash.Hash(vec[zipRel].H1)},
	})
	got, err := m.Fetch(context.Background(), pkg, filepath.Join(t.TempDir(), "p"))
	if err != nil {
		t.Fatal(err)
	}
	want := []hash.Hash{hash.Hash(vec[zipRel].H1), hash.Hash(vec[zipRel].ZH)}
	if !slices.Equal(got.Hashes, want) || got.Size != int64(len(b)) {
		t.Errorf("hashes %v size %d, want %v size %d", got.Hashes, got.Size, want, len(b))
	}
	recs, err := m.Checksums(context.Background(), pkg)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Hash != want[1] || recs[1].Hash != want[0] {
		t.Errorf("checksums = %+v, want zh and h1 of the zip", recs)
	}
}

func TestFilesystemModulesNotFound(t *testing.T) {
	m := mirror.NewFilesystem(testdir.OpenTofu(t, fsMirror))
	if _, err := m.Versions(context.Background(), source.ModulePackage{Source: "registry.opentofu.org/hashicorp/null/x"}); !errors.Is(err, source.ErrNotFound) {
		t.Errorf("got %v", err)
	}
	if _, err := mirror.NewFilesystem(filepath.Join(t.TempDir(), "missing")).Versions(context.Background(), ppkg("registry.opentofu.org/hashicorp/null", "2.0.0", "linux_amd64")); !errors.Is(err, source.ErrNotFound) {
		t.Errorf("missing mirror dir: got %v", err)
	}
}

func TestFilesystemInvalidLayoutIgnored(t *testing.T) {
	// The host level is missing; OpenTofu ignores such directories
	// without an error.
	m := mirror.NewFilesystem(testdir.OpenTofu(t, "internal/getproviders/testdata/filesystem-mirror-invalid"))
	entries, err := m.Entries(context.Background())
	if err != nil || len(entries) != 0 {
		t.Errorf("entries %v, err %v; want none and no error", entries, err)
	}
}

func TestFilesystemUnspecifiedVersion(t *testing.T) {
	// OpenTofu lists a provider built without a version as 0.0.0.
	const rel = "internal/getproviders/testdata/filesystem-mirror-unspecified"
	vec := testdir.HashVectors(t)
	m := mirror.NewFilesystem(testdir.OpenTofu(t, rel))
	pkg := ppkg("registry.opentofu.org/testnamespace/unspecified", "0.0.0", "linux_amd64")
	list, err := m.Versions(context.Background(), source.ProviderPackage{Addr: pkg.Addr})
	if err != nil || len(list) != 1 || list[0].Version.String() != "0.0.0" {
		t.Fatalf("versions %v, %v", list, err)
	}
	got, err := m.Fetch(context.Background(), pkg, filepath.Join(t.TempDir(), "u"))
	if err != nil {
		t.Fatal(err)
	}
	if want := vec[rel+"/registry.opentofu.org/testnamespace/unspecified/0.0.0/linux_amd64"].H1; string(got.Hashes[0]) != want {
		t.Errorf("h1 %s, want %s", got.Hashes[0], want)
	}
}
