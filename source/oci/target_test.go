package oci_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/oci"
	"github.com/tflock/tflock/source/oci/ocitest"
)

// TestFetchTargetArchive: the zip of a provider-target manifest, by tag
// or digest, checked as an index's platform manifest is; an index, a
// module package or a missing tag is refused.
func TestFetchTargetArchive(t *testing.T) {
	s := newServer(t, ocitest.ServerOptions{})
	ctx := context.Background()
	repo := repoOf(t, s, "mirror/hashicorp-random")
	z := providerZip(t, "3.7.2", linuxAMD64)
	m, err := ocitest.PushManifest(ctx, repo, oci.ArtifactTypeProviderTarget, []ocitest.Layer{{MediaType: oci.MediaTypeZip, Data: z}}, "own-linux")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ocitest.PushModule(ctx, repo, mustZip(t, map[string]string{"main.tf": "# m\n"}), "a-module"); err != nil {
		t.Fatal(err)
	}
	publishProvider(t, s, "3.7.2", linuxAMD64)
	src := oci.NewSource(s.SourceOptions(mirrorRepo))
	pkg := source.ProviderPackage{Addr: randomAddr, Platform: linuxAMD64}
	for _, ref := range []string{"own-linux", m.Digest.String()} {
		out := filepath.Join(t.TempDir(), "p.zip")
		a, err := src.FetchTargetArchive(ctx, pkg, ref, out)
		if err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		got, err := os.ReadFile(out)
		if err != nil || string(got) != string(z) || a.ZH != zhOf(z) || a.Pin != m.Digest.String() {
			t.Fatalf("%s: %+v %v", ref, a, err)
		}
	}
	for ref, want := range map[string]error{"3.7.2": oci.ErrInvalidArtifact, "a-module": oci.ErrInvalidArtifact, "absent": source.ErrVersionNotFound} {
		out := filepath.Join(t.TempDir(), "p.zip")
		if _, err := src.FetchTargetArchive(ctx, pkg, ref, out); !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", ref, err, want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%s: a file was left: %v", ref, err)
		}
	}
}
