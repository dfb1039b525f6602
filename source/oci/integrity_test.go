package oci_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	ocilayout "oras.land/oras-go/v2/content/oci"

	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/oci"
	"github.com/tflock/tflock/source/oci/ocitest"
)

// rawZip builds a zip whose entries are given verbatim (names and modes
// unchecked), to make hostile archives.
func rawZip(t *testing.T, entries ...zipEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		if e.mode != 0 {
			h.SetMode(e.mode)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(e.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type zipEntry struct {
	name string
	data []byte
	mode os.FileMode
}

func TestUnsafeArchives(t *testing.T) {
	s := newServer(t, ocitest.ServerOptions{})
	ctx := context.Background()
	r := repoOf(t, s, "mods/hostile")
	ok := []byte("ok\n")
	tests := map[string]struct {
		zip  []byte
		opts func(*oci.Options)
		want error
	}{
		"parent traversal":   {zip: rawZip(t, zipEntry{name: "main.tf", data: ok}, zipEntry{name: "../evil.tf", data: ok}), want: oci.ErrUnsafeArchive},
		"nested traversal":   {zip: rawZip(t, zipEntry{name: "a/../../evil.tf", data: ok}), want: oci.ErrUnsafeArchive},
		"absolute path":      {zip: rawZip(t, zipEntry{name: "/etc/evil", data: ok}), want: oci.ErrUnsafeArchive},
		"windows path":       {zip: rawZip(t, zipEntry{name: `..\evil.tf`, data: ok}), want: oci.ErrUnsafeArchive},
		"drive letter":       {zip: rawZip(t, zipEntry{name: "C:/evil.tf", data: ok}), want: oci.ErrUnsafeArchive},
		"duplicate entry":    {zip: rawZip(t, zipEntry{name: "a.tf", data: ok}, zipEntry{name: "./a.tf", data: ok}), want: oci.ErrUnsafeArchive},
		"not a zip":          {zip: []byte("this is not a zip archive"), want: oci.ErrUnsafeArchive},
		"expands too much":   {zip: rawZip(t, zipEntry{name: "big", data: bytes.Repeat([]byte{0}, 1<<20)}), opts: func(o *oci.Options) { o.Limits.MaxBytes = 1 << 16 }, want: oci.ErrArchiveTooLarge},
		"too many files":     {zip: rawZip(t, zipEntry{name: "a", data: ok}, zipEntry{name: "b", data: ok}, zipEntry{name: "c", data: ok}), opts: func(o *oci.Options) { o.Limits.MaxEntries = 2 }, want: oci.ErrArchiveTooLarge},
		"archive too large":  {zip: mustZip(t, map[string]string{"main.tf": strings.Repeat("x", 4096)}), opts: func(o *oci.Options) { o.Limits.MaxBytes = 100 }, want: oci.ErrArchiveTooLarge},
		"limit across files": {zip: rawZip(t, zipEntry{name: "a", data: bytes.Repeat([]byte{1}, 40000)}, zipEntry{name: "b", data: bytes.Repeat([]byte{1}, 40000)}), opts: func(o *oci.Options) { o.Limits.MaxBytes = 65536 }, want: oci.ErrArchiveTooLarge},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tag := strings.ReplaceAll(name, " ", "-")
			if _, err := ocitest.PushModule(ctx, r, tc.zip, tag); err != nil {
				t.Fatal(err)
			}
			opts := s.SourceOptions(nil)
			if tc.opts != nil {
				tc.opts(&opts)
			}
			root := t.TempDir()
			dir := filepath.Join(root, "pkg")
			_, err := oci.NewSource(opts).Fetch(ctx, source.ModulePackage{Source: "oci://" + s.Host() + "/mods/hostile", Ref: tag}, dir)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Fetch error = %v, want %v", err, tc.want)
			}
			// Nothing is left behind: not in dir, not next to it.
			left, _ := os.ReadDir(root)
			if len(left) != 0 {
				t.Errorf("left behind after a failed fetch: %v", left)
			}
		})
	}
}

func TestDigestsVerifiedWhileReading(t *testing.T) {
	s := newServer(t, ocitest.ServerOptions{})
	ctx := context.Background()
	r := repoOf(t, s, "mods/net")
	z := mustZip(t, moduleFiles)
	m, err := ocitest.PushModule(ctx, r, z, "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	_, mdata, err := oras.FetchBytes(ctx, r, m.Digest.String(), oras.DefaultFetchBytesOptions)
	if err != nil {
		t.Fatal(err)
	}
	var manifest ocispec.Manifest
	if err := json.Unmarshal(mdata, &manifest); err != nil {
		t.Fatal(err)
	}
	for name, dgst := range map[string]string{"layer": manifest.Layers[0].Digest.String(), "manifest": m.Digest.String()} {
		t.Run(name, func(t *testing.T) {
			opts := s.SourceOptions(nil)
			opts.Repository = func(ctx context.Context, repo string) (oci.Repository, error) {
				rr, err := s.Repository(strings.TrimPrefix(repo, s.Host()+"/"))
				return tamperRepo{oci: rr, digest: dgst}, err
			}
			root := t.TempDir()
			_, err := oci.NewSource(opts).Fetch(ctx, source.ModulePackage{Source: "oci://" + s.Host() + "/mods/net", Version: versions.MustParse("1.0.0")}, filepath.Join(root, "pkg"))
			if err == nil || !strings.Contains(err.Error(), dgst) {
				t.Fatalf("Fetch of a tampered %s: %v, want an error naming %s", name, err, dgst)
			}
			if name == "layer" && !errors.Is(err, source.ErrChecksumMismatch) {
				t.Errorf("error %v does not wrap ErrChecksumMismatch", err)
			}
			if left, _ := os.ReadDir(root); len(left) != 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
}

func TestManifestSizeLimit(t *testing.T) {
	s := newServer(t, ocitest.ServerOptions{})
	ctx := context.Background()
	r := repoOf(t, s, "mods/huge")
	layer, err := pushBlob(ctx, r, oci.MediaTypeZip, mustZip(t, moduleFiles))
	if err != nil {
		t.Fatal(err)
	}
	big := ocispec.Manifest{
		Versioned: versioned2, MediaType: ocispec.MediaTypeImageManifest, ArtifactType: oci.ArtifactTypeModule,
		Config:      ocispec.DescriptorEmptyJSON,
		Layers:      []ocispec.Descriptor{layer},
		Annotations: map[string]string{"padding": strings.Repeat("p", oci.MaxManifestSize)},
	}
	if _, err := pushBlob(ctx, r, ocispec.MediaTypeEmptyJSON, ocispec.DescriptorEmptyJSON.Data); err != nil {
		t.Fatal(err)
	}
	// oras refuses to push so large a manifest; a registry may hold one.
	data, err := json.Marshal(big)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPut, "http://"+s.Host()+"/v2/mods/huge/manifests/1.0.0", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", ocispec.MediaTypeImageManifest)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("PUT manifest: %s", resp.Status)
	}
	_, err = oci.NewSource(s.SourceOptions(nil)).Fetch(ctx, source.ModulePackage{Source: "oci://" + s.Host() + "/mods/huge", Version: versions.MustParse("1.0.0")}, t.TempDir())
	if !errors.Is(err, oci.ErrManifestTooLarge) {
		t.Errorf("Fetch error = %v, want ErrManifestTooLarge", err)
	}
}

// TestOCILayout reads modules and providers from an OCI image layout on
// disk (oras content/oci.Store) instead of a registry.
func TestOCILayout(t *testing.T) {
	ctx := context.Background()
	store, err := ocilayout.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	z := mustZip(t, moduleFiles)
	m, err := ocitest.PushModule(ctx, store, z, "1.1.0", "latest")
	if err != nil {
		t.Fatal(err)
	}
	pz := providerZip(t, "1.0.0", linuxAMD64)
	if _, err := ocitest.PushProvider(ctx, store, "1.0.0", map[source.Platform][]byte{linuxAMD64: pz}); err != nil {
		t.Fatal(err)
	}
	src := oci.NewSource(oci.Options{
		Repository: func(context.Context, string) (oci.Repository, error) { return store, nil },
		ProviderRepository: func(context.Context, tfaddr.Provider) (string, error) {
			return "layout.local/all", nil
		},
	})
	mod := source.ModulePackage{Source: "oci://layout.local/mods/net"}
	av, err := src.Versions(ctx, mod)
	if err != nil || len(av) != 2 || av[0].Version.String() != "1.0.0" || av[1].Version.String() != "1.1.0" {
		t.Fatalf("Versions = %v, %v; want 1.0.0 (the provider's tag, same layout) and 1.1.0", av, err)
	}
	mod.Version = versions.MustParse("1.1.0")
	f, err := src.Fetch(ctx, mod, filepath.Join(t.TempDir(), "m"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Pin != m.Digest.String() || f.Hashes[0] != h1OfZip(t, z) {
		t.Errorf("Fetched = %+v", f)
	}
	pf, err := src.Fetch(ctx, source.ProviderPackage{Addr: randomAddr, Version: versions.MustParse("1.0.0"), Platform: linuxAMD64}, filepath.Join(t.TempDir(), "p"))
	if err != nil {
		t.Fatal(err)
	}
	if pf.Hashes[1] != zhOf(pz) {
		t.Errorf("zh = %s, want %s", pf.Hashes[1], zhOf(pz))
	}
}
