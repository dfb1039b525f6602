package oci_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/oci"
	"github.com/tflock/tflock/source/oci/ocitest"
)

var moduleFiles = map[string]string{
	"main.tf":         "variable \"x\" {}\n",
	"modules/a/a.tf":  "output \"a\" { value = 1 }\n",
	"README.md":       "# demo\n",
	"scripts/run.sh":  "#!/bin/sh\necho hi\n",
	"nested/deep/c.y": "c: 3\n",
}

// publishModule pushes a few versions of a module and returns the
// descriptors by tag.
func publishModule(t *testing.T, s *ocitest.Server, name string) map[string]ocispec.Descriptor {
	t.Helper()
	ctx := context.Background()
	r := repoOf(t, s, name)
	out := map[string]ocispec.Descriptor{}
	for _, tag := range []string{"1.0.0", "1.2.0", "1.2.5_build.7", "1.3.0-beta.1", "v1.4.0", "1.5", "latest", "stable"} {
		files := map[string]string{"version.txt": tag}
		for k, v := range moduleFiles {
			files[k] = v
		}
		d, err := ocitest.PushModule(ctx, r, mustZip(t, files), tag)
		if err != nil {
			t.Fatal(err)
		}
		out[tag] = d
	}
	return out
}

func TestModuleVersions(t *testing.T) {
	s := newServer(t, ocitest.ServerOptions{})
	publishModule(t, s, "mods/net")
	src := oci.NewSource(s.SourceOptions(nil))
	got, err := src.Versions(context.Background(), source.ModulePackage{Source: "oci://" + s.Host() + "/mods/net"})
	if err != nil {
		t.Fatal(err)
	}
	// Strict semver tags only; "_" stands for "+"; "v1.4.0", "1.5",
	// "latest" and "stable" are not versions.
	want := []source.Available{
		{Version: versions.MustParse("1.0.0")},
		{Version: versions.MustParse("1.2.0")},
		{Version: versions.MustParse("1.2.5+build.7"), Ref: "1.2.5_build.7"},
		{Version: versions.MustParse("1.3.0-beta.1")},
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b versions.Version) bool { return a.String() == b.String() })); diff != "" {
		t.Errorf("Versions (-want +got):\n%s", diff)
	}
}

func TestModuleFetch(t *testing.T) {
	s := newServer(t, ocitest.ServerOptions{})
	descs := publishModule(t, s, "mods/net")
	src := oci.NewSource(s.SourceOptions(nil))
	addr := "oci://" + s.Host() + "/mods/net"
	tests := map[string]struct {
		pkg     source.ModulePackage
		wantTag string
	}{
		"by version":               {source.ModulePackage{Source: addr, Version: versions.MustParse("1.2.0")}, "1.2.0"},
		"by version with build":    {source.ModulePackage{Source: addr, Version: versions.MustParse("1.2.5+build.7")}, "1.2.5_build.7"},
		"by tag":                   {source.ModulePackage{Source: addr, Ref: "stable"}, "stable"},
		"by digest":                {source.ModulePackage{Source: addr, Ref: descs["1.0.0"].Digest.String()}, "1.0.0"},
		"default tag latest":       {source.ModulePackage{Source: addr}, "latest"},
		"pinned, tag not moved":    {source.ModulePackage{Source: addr, Version: versions.MustParse("1.0.0"), Pin: descs["1.0.0"].Digest.String()}, "1.0.0"},
		"ref wins over version":    {source.ModulePackage{Source: addr, Version: versions.MustParse("1.0.0"), Ref: "1.2.0"}, "1.2.0"},
		"pinned digest, same pin":  {source.ModulePackage{Source: addr, Ref: descs["1.2.0"].Digest.String(), Pin: descs["1.2.0"].Digest.String()}, "1.2.0"},
		"pre-release version tags": {source.ModulePackage{Source: addr, Version: versions.MustParse("1.3.0-beta.1")}, "1.3.0-beta.1"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "pkg")
			got, err := src.Fetch(context.Background(), tc.pkg, dir)
			if err != nil {
				t.Fatal(err)
			}
			wantFiles := map[string]string{"version.txt": tc.wantTag}
			for k, v := range moduleFiles {
				wantFiles[k] = v
			}
			if diff := cmp.Diff(wantFiles, readTree(t, dir)); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
			if got.Pin != descs[tc.wantTag].Digest.String() {
				t.Errorf("Pin = %s, want %s", got.Pin, descs[tc.wantTag].Digest)
			}
			wantH1 := h1OfZip(t, mustZip(t, wantFiles))
			if diff := cmp.Diff([]hash.Hash{wantH1}, got.Hashes); diff != "" {
				t.Errorf("Hashes (-want +got):\n%s", diff)
			}
			if got.Dir != dir || got.Package != source.Package(tc.pkg) || !strings.Contains(got.Location, got.Pin) {
				t.Errorf("Fetched = %+v", got)
			}
		})
	}
}

func TestModuleMovedTag(t *testing.T) {
	s := newServer(t, ocitest.ServerOptions{})
	ctx := context.Background()
	r := repoOf(t, s, "mods/moving")
	old, err := ocitest.PushModule(ctx, r, mustZip(t, map[string]string{"main.tf": "# v1\n"}), "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	moved, err := ocitest.PushModule(ctx, r, mustZip(t, map[string]string{"main.tf": "# re-pushed\n"}), "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	src := oci.NewSource(s.SourceOptions(nil))
	dir := filepath.Join(t.TempDir(), "pkg")
	pkg := source.ModulePackage{Source: "oci://" + s.Host() + "/mods/moving", Version: versions.MustParse("1.0.0"), Pin: old.Digest.String()}
	_, err = src.Fetch(ctx, pkg, dir)
	var me *oci.MovedTagError
	if !errors.As(err, &me) {
		t.Fatalf("Fetch error = %v, want a *MovedTagError", err)
	}
	want := oci.MovedTagError{Repository: s.Host() + "/mods/moving", Tag: "1.0.0", Locked: old.Digest.String(), Current: moved.Digest.String()}
	if *me != want {
		t.Errorf("MovedTagError = %+v, want %+v", *me, want)
	}
	if !isEmptyOrMissing(t, dir) {
		t.Error("the target directory is not empty after a failed fetch")
	}
	// Selecting the locked digest directly still works.
	pkg.Ref = old.Digest.String()
	if _, err := src.Fetch(ctx, pkg, dir); err != nil {
		t.Fatalf("Fetch by locked digest: %v", err)
	}
	// A digest in the source that differs from the lock is a mismatch.
	pkg.Ref = moved.Digest.String()
	if _, err := src.Fetch(ctx, pkg, filepath.Join(t.TempDir(), "other")); !errors.Is(err, source.ErrChecksumMismatch) {
		t.Errorf("Fetch of another digest than the locked one: %v, want ErrChecksumMismatch", err)
	}
	// An explicit tag that moved is a moved tag too.
	pkg = source.ModulePackage{Source: pkg.Source, Ref: "1.0.0", Pin: old.Digest.String()}
	if _, err := src.Fetch(ctx, pkg, filepath.Join(t.TempDir(), "tag")); !errors.As(err, &me) {
		t.Errorf("Fetch of a moved ?tag=: %v, want a *MovedTagError", err)
	}
	// The implied "latest" moves on by design: pinned, the locked digest
	// is fetched, without a complaint; unpinned, the new one.
	first, err := ocitest.PushModule(ctx, r, mustZip(t, map[string]string{"main.tf": "# latest at first\n"}), "latest")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ocitest.PushModule(ctx, r, mustZip(t, map[string]string{"main.tf": "# latest later\n"}), "latest"); err != nil {
		t.Fatal(err)
	}
	latest := filepath.Join(t.TempDir(), "latest")
	got, err := src.Fetch(ctx, source.ModulePackage{Source: pkg.Source, Pin: first.Digest.String()}, latest)
	if err != nil {
		t.Fatalf("Fetch of the implied latest pinned by a lock: %v", err)
	}
	if diff := cmp.Diff(map[string]string{"main.tf": "# latest at first\n"}, readTree(t, latest)); diff != "" || got.Pin != first.Digest.String() {
		t.Errorf("pinned latest: pin %s, files (-want +got):\n%s", got.Pin, diff)
	}
	head := filepath.Join(t.TempDir(), "head")
	if _, err := src.Fetch(ctx, source.ModulePackage{Source: pkg.Source}, head); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"main.tf": "# latest later\n"}, readTree(t, head)); diff != "" {
		t.Errorf("unpinned latest (-want +got):\n%s", diff)
	}
}

func TestModuleNotFound(t *testing.T) {
	s := newServer(t, ocitest.ServerOptions{})
	publishModule(t, s, "mods/net")
	src := oci.NewSource(s.SourceOptions(nil))
	ctx := context.Background()
	_, err := src.Versions(ctx, source.ModulePackage{Source: "oci://" + s.Host() + "/mods/missing"})
	if !errors.Is(err, source.ErrNotFound) {
		t.Errorf("Versions of a missing repository: %v, want ErrNotFound", err)
	}
	var se *source.Error
	if !errors.As(err, &se) || se.Source != s.Host()+"/mods/missing" {
		t.Errorf("error %v does not name the repository", err)
	}
	_, err = src.Fetch(ctx, source.ModulePackage{Source: "oci://" + s.Host() + "/mods/net", Version: versions.MustParse("9.9.9")}, t.TempDir())
	if !errors.Is(err, source.ErrVersionNotFound) {
		t.Errorf("Fetch of a missing tag: %v, want ErrVersionNotFound", err)
	}
	for _, bad := range []string{"git::https://example.com/x.git", "oci://", "oci://host", "oci://host/repo?tag=1", "oci://host/repo//sub", "oci://host/Repo"} {
		if _, err := src.Versions(ctx, source.ModulePackage{Source: bad}); !errors.Is(err, source.ErrNotFound) {
			t.Errorf("Versions(%q) = %v, want ErrNotFound", bad, err)
		}
	}
}

func TestModuleInvalidArtifacts(t *testing.T) {
	s := newServer(t, ocitest.ServerOptions{})
	ctx := context.Background()
	r := repoOf(t, s, "mods/bad")
	z := mustZip(t, moduleFiles)
	push := func(artifactType string, layers []ocitest.Layer, tag string) {
		t.Helper()
		if _, err := ocitest.PushManifest(ctx, r, artifactType, layers, tag); err != nil {
			t.Fatal(err)
		}
	}
	push(oci.ArtifactTypeModule, []ocitest.Layer{{MediaType: "application/vnd.oci.image.layer.v1.tar+gzip", Data: []byte("tgz")}}, "nozip")
	push(oci.ArtifactTypeModule, nil, "nolayers")
	push(oci.ArtifactTypeModule, []ocitest.Layer{{MediaType: oci.MediaTypeZip, Data: z}, {MediaType: oci.MediaTypeZip, Data: mustZip(t, map[string]string{"x": "y"})}}, "twozips")
	push("application/vnd.example.other", []ocitest.Layer{{MediaType: oci.MediaTypeZip, Data: z}}, "othertype")
	push(oci.ArtifactTypeProviderTarget, []ocitest.Layer{{MediaType: oci.MediaTypeZip, Data: z}}, "providertarget")
	if _, err := ocitest.PushProvider(ctx, r, "2.0.0", map[source.Platform][]byte{{OS: "linux", Arch: "amd64"}: z}); err != nil {
		t.Fatal(err)
	}
	// A container image: no artifactType, an image config.
	cfg, err := pushBlob(ctx, r, ocispec.MediaTypeImageConfig, []byte(`{"architecture":"amd64","os":"linux"}`))
	if err != nil {
		t.Fatal(err)
	}
	layer, err := pushBlob(ctx, r, ocispec.MediaTypeImageLayerGzip, []byte("layer"))
	if err != nil {
		t.Fatal(err)
	}
	pushRaw(t, ctx, r, ocispec.MediaTypeImageManifest, ocispec.Manifest{Versioned: versioned2, MediaType: ocispec.MediaTypeImageManifest, Config: cfg, Layers: []ocispec.Descriptor{layer}}, "image")

	tests := map[string]string{
		"nozip":          `has no layer of media type "archive/zip"`,
		"nolayers":       `has no layer of media type "archive/zip"`,
		"twozips":        "ambiguous",
		"othertype":      `unsupported artifact type "application/vnd.example.other"`,
		"providertarget": "provider package, not a module package",
		"2.0.0":          "provider package, not a module package",
		"image":          "container image",
	}
	src := oci.NewSource(s.SourceOptions(nil))
	for tag, want := range tests {
		t.Run(tag, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "pkg")
			_, err := src.Fetch(ctx, source.ModulePackage{Source: "oci://" + s.Host() + "/mods/bad", Ref: tag}, dir)
			var ae *oci.ArtifactError
			if !errors.As(err, &ae) || !errors.Is(err, oci.ErrInvalidArtifact) {
				t.Fatalf("Fetch error = %v, want an *ArtifactError", err)
			}
			if !strings.Contains(err.Error(), want) || ae.Reference != tag {
				t.Errorf("error %q does not contain %q or name the tag", err, want)
			}
			if !isEmptyOrMissing(t, dir) {
				t.Error("target directory not empty")
			}
		})
	}
}
