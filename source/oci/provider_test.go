package oci_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	tfaddr "github.com/hashicorp/terraform-registry-address"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/oci"
	"github.com/tflock/tflock/source/oci/ocitest"
)

var (
	linuxAMD64  = source.Platform{OS: "linux", Arch: "amd64"}
	darwinARM64 = source.Platform{OS: "darwin", Arch: "arm64"}
	windows386  = source.Platform{OS: "windows", Arch: "386"}
	randomAddr  = tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/random")
)

// providerZip is a plausible provider package for one platform.
func providerZip(t *testing.T, version string, p source.Platform) []byte {
	return mustZip(t, map[string]string{
		"terraform-provider-random_v" + version: fmt.Sprintf("binary for %s %s", version, p),
	})
}

func zhOf(b []byte) hash.Hash {
	s := sha256.Sum256(b)
	return hash.MustParseHash("zh:" + hex.EncodeToString(s[:]))
}

// mirrorRepo maps "host/ns/type" to "mirror/ns-type", as a
// repository_template "mirror/${namespace}-${type}" would.
func mirrorRepo(addr string) string {
	parts := strings.Split(addr, "/")
	return "mirror/" + parts[1] + "-" + parts[2]
}

func publishProvider(t *testing.T, s *ocitest.Server, version string, plats ...source.Platform) map[source.Platform][]byte {
	t.Helper()
	zips := map[source.Platform][]byte{}
	for _, p := range plats {
		zips[p] = providerZip(t, version, p)
	}
	if _, err := ocitest.PushProvider(context.Background(), repoOf(t, s, "mirror/hashicorp-random"), version, zips); err != nil {
		t.Fatal(err)
	}
	return zips
}

func TestProviderVersionsAndFetch(t *testing.T) {
	s := newServer(t, ocitest.ServerOptions{})
	publishProvider(t, s, "3.6.0", linuxAMD64)
	zips := publishProvider(t, s, "3.7.2", linuxAMD64, darwinARM64, windows386)
	publishProvider(t, s, "3.8.0+ent", linuxAMD64)
	ctx := context.Background()
	src := oci.NewSource(s.SourceOptions(mirrorRepo))

	got, err := src.Versions(ctx, source.ProviderPackage{Addr: randomAddr})
	if err != nil {
		t.Fatal(err)
	}
	var gotV []string
	for _, a := range got {
		gotV = append(gotV, a.Version.String()+"|"+a.Ref)
	}
	if diff := cmp.Diff([]string{"3.6.0|", "3.7.2|", "3.8.0+ent|3.8.0_ent"}, gotV); diff != "" {
		t.Errorf("Versions (-want +got):\n%s", diff)
	}

	dir := filepath.Join(t.TempDir(), "pkg")
	pkg := source.ProviderPackage{Addr: randomAddr, Version: versions.MustParse("3.7.2"), Platform: darwinARM64}
	f, err := src.Fetch(ctx, pkg, dir)
	if err != nil {
		t.Fatal(err)
	}
	wantHashes := []hash.Hash{h1OfZip(t, zips[darwinARM64]), zhOf(zips[darwinARM64])}
	if diff := cmp.Diff(wantHashes, f.Hashes); diff != "" {
		t.Errorf("Hashes (-want +got):\n%s", diff)
	}
	repo := s.Host() + "/mirror/hashicorp-random"
	wantOrigin := []hash.Record{{Hash: zhOf(zips[darwinARM64]), Provenance: hash.Provenance{Mirrors: []string{repo}, Platforms: []string{"darwin_arm64"}}}}
	if diff := cmp.Diff(wantOrigin, f.Origin); diff != "" {
		t.Errorf("Origin (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"terraform-provider-random_v3.7.2": "binary for 3.7.2 darwin_arm64"}, readTree(t, dir)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if f.Size != int64(len(zips[darwinARM64])) {
		t.Errorf("Size = %d, want %d", f.Size, len(zips[darwinARM64]))
	}

	// Build metadata: the tag spells "+" as "_".
	if _, err := src.Fetch(ctx, source.ProviderPackage{Addr: randomAddr, Version: versions.MustParse("3.8.0+ent"), Platform: linuxAMD64}, filepath.Join(t.TempDir(), "ent")); err != nil {
		t.Errorf("Fetch 3.8.0+ent: %v", err)
	}

	// Checksums: only the asked platform by default.
	recs, err := src.Checksums(ctx, pkg)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantOrigin, recs); diff != "" {
		t.Errorf("Checksums (-want +got):\n%s", diff)
	}
	if recs, err := src.Checksums(ctx, source.ProviderPackage{Addr: randomAddr, Version: versions.MustParse("3.7.2")}); err != nil || recs != nil {
		t.Errorf("Checksums without a platform = %v, %v; want none", recs, err)
	}
	if recs, err := src.Checksums(ctx, source.ModulePackage{Source: "oci://" + s.Host() + "/x"}); err != nil || recs != nil {
		t.Errorf("Checksums of a module = %v, %v; want none", recs, err)
	}
}

func TestProviderAllPlatformChecksums(t *testing.T) {
	s := newServer(t, ocitest.ServerOptions{})
	zips := publishProvider(t, s, "3.7.2", linuxAMD64, darwinARM64, windows386)
	opts := s.SourceOptions(mirrorRepo)
	opts.AllPlatformChecksums = true
	// Count blob downloads: none may happen for Checksums.
	var fetched []string
	opts.Repository = func(ctx context.Context, repo string) (oci.Repository, error) {
		r, err := s.Repository(strings.TrimPrefix(repo, s.Host()+"/"))
		return countingRepo{r, &fetched}, err
	}
	src := oci.NewSource(opts)
	repo := s.Host() + "/mirror/hashicorp-random"
	var want []hash.Record
	for _, p := range []source.Platform{darwinARM64, linuxAMD64, windows386} {
		want = append(want, hash.Record{Hash: zhOf(zips[p]), Provenance: hash.Provenance{Mirrors: []string{repo}, Platforms: []string{p.String()}}})
	}
	got, err := src.Checksums(context.Background(), source.ProviderPackage{Addr: randomAddr, Version: versions.MustParse("3.7.2")})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Checksums (-want +got):\n%s", diff)
	}
	for _, mt := range fetched {
		if mt == oci.MediaTypeZip {
			t.Errorf("Checksums downloaded a package archive")
		}
	}
	f, err := src.Fetch(context.Background(), source.ProviderPackage{Addr: randomAddr, Version: versions.MustParse("3.7.2"), Platform: windows386}, filepath.Join(t.TempDir(), "p"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, f.Origin); diff != "" {
		t.Errorf("Fetch Origin (-want +got):\n%s", diff)
	}
}

type countingRepo struct {
	oci.Repository
	fetched *[]string
}

func (r countingRepo) Fetch(ctx context.Context, d ocispec.Descriptor) (io.ReadCloser, error) {
	*r.fetched = append(*r.fetched, d.MediaType)
	return r.Repository.Fetch(ctx, d)
}

func TestProviderInvalidArtifacts(t *testing.T) {
	s := newServer(t, ocitest.ServerOptions{})
	ctx := context.Background()
	r := repoOf(t, s, "mirror/hashicorp-random")
	z := providerZip(t, "4.0.0", linuxAMD64)
	target := func(layers ...ocitest.Layer) ocispec.Descriptor {
		t.Helper()
		d, err := ocitest.PushManifest(ctx, r, oci.ArtifactTypeProviderTarget, layers)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	zipLayer := ocitest.Layer{MediaType: oci.MediaTypeZip, Data: z}
	good := target(zipLayer)
	noZip := target(ocitest.Layer{MediaType: "application/gzip", Data: []byte("gz")})
	index := func(tag, artifactType string, entries ...ocitest.IndexEntry) {
		t.Helper()
		if _, err := ocitest.PushIndex(ctx, r, artifactType, entries, tag); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ocitest.PushManifest(ctx, r, oci.ArtifactTypeProviderTarget, []ocitest.Layer{zipLayer}, "4.0.0"); err != nil {
		t.Fatal(err)
	}
	if _, err := ocitest.PushModule(ctx, r, z, "4.1.0"); err != nil {
		t.Fatal(err)
	}
	entry := ocitest.IndexEntry{Manifest: good, ArtifactType: oci.ArtifactTypeProviderTarget, Platform: linuxAMD64}
	index("4.2.0", oci.ArtifactTypeProvider, entry, ocitest.IndexEntry{Manifest: noZip, ArtifactType: oci.ArtifactTypeProviderTarget, Platform: linuxAMD64})
	index("4.3.0", oci.ArtifactTypeProvider, ocitest.IndexEntry{Manifest: noZip, ArtifactType: oci.ArtifactTypeProviderTarget, Platform: linuxAMD64})
	index("4.4.0", "", ocitest.IndexEntry{Manifest: good, Platform: linuxAMD64})
	index("4.5.0", oci.ArtifactTypeProvider, ocitest.IndexEntry{Manifest: good, ArtifactType: oci.ArtifactTypeProviderTarget})
	index("4.6.0", oci.ArtifactTypeProvider, ocitest.IndexEntry{Manifest: good, ArtifactType: oci.ArtifactTypeProviderTarget, Platform: darwinARM64})
	index("4.7.0", "application/vnd.example.chart", entry)
	index("4.8.0", oci.ArtifactTypeProvider, ocitest.IndexEntry{Manifest: good, ArtifactType: "application/vnd.example.sbom", Platform: linuxAMD64})

	tests := map[string]string{
		"4.0.0": "refers to an image manifest, but an OpenTofu provider version must be an image index",
		"4.1.0": "module package, not a provider package",
		"4.2.0": "ambiguous: it has several manifests for platform linux_amd64",
		"4.3.0": `has no layer of media type "archive/zip"`,
		"4.4.0": "container image",
		"4.5.0": "lacks the required platform",
		"4.7.0": `unsupported artifact type "application/vnd.example.chart"`,
		"4.8.0": `only artifacts of type "application/vnd.example.sbom"`,
	}
	src := oci.NewSource(s.SourceOptions(mirrorRepo))
	for v, want := range tests {
		t.Run(v, func(t *testing.T) {
			pkg := source.ProviderPackage{Addr: randomAddr, Version: versions.MustParse(v), Platform: linuxAMD64}
			dir := filepath.Join(t.TempDir(), "pkg")
			_, err := src.Fetch(ctx, pkg, dir)
			var ae *oci.ArtifactError
			if !errors.As(err, &ae) {
				t.Fatalf("Fetch error = %v, want an *ArtifactError", err)
			}
			if !strings.Contains(err.Error(), want) || ae.Reference != v {
				t.Errorf("error %q does not contain %q or name the tag", err, want)
			}
			if !isEmptyOrMissing(t, dir) {
				t.Error("target directory not empty")
			}
			if _, err := src.Checksums(ctx, pkg); !errors.As(err, &ae) {
				t.Errorf("Checksums error = %v, want an *ArtifactError", err)
			}
		})
	}
	t.Run("platform not supported", func(t *testing.T) {
		_, err := src.Fetch(ctx, source.ProviderPackage{Addr: randomAddr, Version: versions.MustParse("4.6.0"), Platform: linuxAMD64}, t.TempDir())
		if !errors.Is(err, source.ErrPlatformNotSupported) {
			t.Errorf("Fetch error = %v, want ErrPlatformNotSupported", err)
		}
		var pe *source.PlatformNotSupportedError
		if !errors.As(err, &pe) || pe.Package.Platform != linuxAMD64 || pe.Package.Version.String() != "4.6.0" {
			t.Errorf("Fetch error = %v, want a *source.PlatformNotSupportedError for 4.6.0 on %s", err, linuxAMD64)
		}
	})
	t.Run("version not found", func(t *testing.T) {
		_, err := src.Fetch(ctx, source.ProviderPackage{Addr: randomAddr, Version: versions.MustParse("9.0.0"), Platform: linuxAMD64}, t.TempDir())
		if !errors.Is(err, source.ErrVersionNotFound) {
			t.Errorf("Fetch error = %v, want ErrVersionNotFound", err)
		}
	})
	t.Run("no mirror configured", func(t *testing.T) {
		_, err := oci.NewSource(oci.Options{}).Versions(ctx, source.ProviderPackage{Addr: randomAddr})
		if !errors.Is(err, source.ErrNotFound) {
			t.Errorf("Versions error = %v, want ErrNotFound", err)
		}
	})
	t.Run("unknown provider", func(t *testing.T) {
		_, err := src.Versions(ctx, source.ProviderPackage{Addr: tfaddr.MustParseProviderSource("hashicorp/absent")})
		if !errors.Is(err, source.ErrNotFound) {
			t.Errorf("Versions error = %v, want ErrNotFound", err)
		}
	})
}
