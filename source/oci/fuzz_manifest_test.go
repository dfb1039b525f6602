package oci_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/oci"
	"github.com/tflock/tflock/source/oci/ocitest"
)

// FuzzManifest pushes a fuzzed document to the in-process registry as the
// image manifest (index false) a module version's tag refers to, or as the
// image index (index true) a provider version's tag refers to, beside the
// real blobs and per-platform manifests of a published module and
// provider, and runs Fetch (and Checksums for the provider). It checks
// that nothing panics or hangs, that every error is a *source.Error, that
// a failed Fetch leaves nothing behind, and that a fetched module is
// pinned to the fuzzed manifest's digest and has a valid h1: hash.
// Documents the registry itself refuses are skipped.
func FuzzManifest(f *testing.F) {
	ctx := context.Background()
	s := ocitest.NewServer(ocitest.ServerOptions{})
	f.Cleanup(s.Close)
	modRepo, err := s.Repository("mods/net")
	if err != nil {
		f.Fatal(err)
	}
	provRepo, err := s.Repository("mirror/hashicorp-random")
	if err != nil {
		f.Fatal(err)
	}
	modZip, err := ocitest.Zip(map[string]string{"main.tf": "# net\n", "sub/x.tf": "# x\n"})
	if err != nil {
		f.Fatal(err)
	}
	modDesc, err := ocitest.PushModule(ctx, modRepo, modZip, "1.0.0")
	if err != nil {
		f.Fatal(err)
	}
	zips := map[source.Platform][]byte{}
	for _, p := range []source.Platform{{OS: "linux", Arch: "amd64"}, {OS: "darwin", Arch: "arm64"}} {
		if zips[p], err = ocitest.Zip(map[string]string{"terraform-provider-random_v1.0.0": "binary " + p.String()}); err != nil {
			f.Fatal(err)
		}
	}
	provDesc, err := ocitest.PushProvider(ctx, provRepo, "1.0.0", zips)
	if err != nil {
		f.Fatal(err)
	}
	fetchBytes := func(repo oci.Repository, d ocispec.Descriptor) []byte {
		rc, err := repo.Fetch(ctx, d)
		if err != nil {
			f.Fatal(err)
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	f.Add(false, fetchBytes(modRepo, modDesc))
	f.Add(true, fetchBytes(provRepo, provDesc))
	f.Add(false, []byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","artifactType":"application/vnd.opentofu.modulepkg","config":{"mediaType":"application/vnd.oci.empty.v1+json","digest":"sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a","size":2},"layers":[]}`))
	f.Add(true, []byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.index.v1+json","digest":"sha256:0000000000000000000000000000000000000000000000000000000000000000","size":-1,"platform":{"os":"linux","architecture":"amd64"}}]}`))

	modSrc := "oci://" + s.Host() + "/mods/net"
	linux := source.Platform{OS: "linux", Arch: "amd64"}
	prov := source.ProviderPackage{Addr: randomAddr, Version: versions.MustParse("1.0.0"), Platform: linux}
	f.Fuzz(func(t *testing.T, index bool, doc []byte) {
		repo, tag, mediaType := modRepo, "1.0.0", ocispec.MediaTypeImageManifest
		if index {
			repo, mediaType = provRepo, ocispec.MediaTypeImageIndex
		}
		desc := ocispec.Descriptor{MediaType: mediaType, Digest: digest.FromBytes(doc), Size: int64(len(doc))}
		if err := repo.PushReference(ctx, desc, bytes.NewReader(doc), tag); err != nil {
			t.Logf("the registry refuses the document: %v", err)
			return // no client ever sees it
		}
		ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		src := oci.NewSource(s.SourceOptions(mirrorRepo))
		check := func(what string, err error) bool {
			t.Helper()
			if err == nil {
				return true
			}
			t.Logf("%s: %v", what, err)
			if ctx.Err() != nil {
				t.Fatalf("%s: still running after 20s: %v", what, err)
			}
			var se *source.Error
			if !errors.As(err, &se) {
				t.Errorf("%s: error %v (%T) is not a *source.Error", what, err, err)
			}
			return false
		}
		fetch := func(what string, pkg source.Package) *source.Fetched {
			t.Helper()
			base := t.TempDir()
			got, err := src.Fetch(ctx, pkg, filepath.Join(base, "pkg"))
			if !check(what, err) {
				if entries, _ := os.ReadDir(base); len(entries) != 0 {
					t.Errorf("%s failed and left %v", what, entries)
				}
				return nil
			}
			if len(got.Hashes) == 0 || got.Hashes[0].Scheme() != hash.SchemeH1 {
				t.Errorf("%s: hashes %v do not start with an h1:", what, got.Hashes)
			}
			return got
		}
		if !index {
			for _, pkg := range []source.ModulePackage{
				{Source: modSrc, Version: versions.MustParse("1.0.0")},
				{Source: modSrc, Ref: desc.Digest.String(), Pin: desc.Digest.String()},
			} {
				if got := fetch("module fetch", pkg); got != nil && got.Pin != desc.Digest.String() {
					t.Errorf("module fetch: pin %s, want the manifest's digest %s", got.Pin, desc.Digest)
				}
			}
			return
		}
		recs, err := src.Checksums(ctx, prov)
		if check("checksums", err) {
			for _, r := range recs {
				if r.Hash.Scheme() != hash.SchemeZH {
					t.Errorf("checksums: %v is not a zh: hash", r.Hash)
				}
			}
		}
		fetch("provider fetch", prov)
	})
}
