package ocitier_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/cache/ocitier"
	"github.com/tflock/tflock/source/oci"
	"github.com/tflock/tflock/source/oci/ocitest"
)

// The formats, as OpenTofu 1.12 reads them (internal/getproviders,
// oci_registry_mirror_source.go; the module package format of
// internal/getmodules), written out here rather than taken from the code
// under test.
const (
	indexMediaType     = "application/vnd.oci.image.index.v1+json"
	manifestMediaType  = "application/vnd.oci.image.manifest.v1+json"
	providerArtifact   = "application/vnd.opentofu.provider"
	targetArtifact     = "application/vnd.opentofu.provider-target"
	moduleArtifact     = "application/vnd.opentofu.modulepkg"
	zipMediaType       = "archive/zip"
	emptyConfigType    = "application/vnd.oci.empty.v1+json"
	providerRepository = "fleet/registry.example.test/hashicorp/aws"
)

// checkProviderVersion reads the tag of a provider version as OpenTofu
// does and checks every rule it applies: the tag resolves to an image
// index carrying mediaType and artifactType; each platform entry has the
// provider-target artifact type, the image manifest media type and a
// platform with os and architecture only, once per platform; each
// manifest repeats mediaType and artifactType and has exactly one
// archive/zip layer whose sha256 digest is the package's zh:. It returns
// the zh: of each platform.
func checkProviderVersion(t *testing.T, repo *remote.Repository, tag string) map[source.Platform]hash.Hash {
	t.Helper()
	ctx := context.Background()
	desc, err := repo.Resolve(ctx, tag)
	if err != nil {
		t.Fatalf("resolving %s: %v", tag, err)
	}
	if desc.MediaType != indexMediaType {
		t.Fatalf("tag %s resolves to media type %q, want %q", tag, desc.MediaType, indexMediaType)
	}
	var idx ocispec.Index
	fetchJSON(t, repo, desc, &idx)
	if idx.MediaType != indexMediaType || idx.ArtifactType != providerArtifact {
		t.Fatalf("index: mediaType %q artifactType %q, want %q and %q", idx.MediaType, idx.ArtifactType, indexMediaType, providerArtifact)
	}
	out := map[source.Platform]hash.Hash{}
	for _, d := range idx.Manifests {
		if d.ArtifactType != targetArtifact || d.MediaType != manifestMediaType {
			t.Fatalf("index entry %s: artifactType %q mediaType %q", d.Digest, d.ArtifactType, d.MediaType)
		}
		if d.Platform == nil || d.Platform.OS == "" || d.Platform.Architecture == "" || d.Platform.OSVersion != "" || d.Platform.Variant != "" || d.Platform.OSFeatures != nil {
			t.Fatalf("index entry %s: platform %+v, want os and architecture only", d.Digest, d.Platform)
		}
		plat := source.Platform{OS: d.Platform.OS, Arch: d.Platform.Architecture}
		if _, dup := out[plat]; dup {
			t.Fatalf("index lists %s twice", plat)
		}
		var m ocispec.Manifest
		fetchJSON(t, repo, d, &m)
		if m.MediaType != manifestMediaType || m.ArtifactType != targetArtifact {
			t.Fatalf("manifest %s: mediaType %q artifactType %q", d.Digest, m.MediaType, m.ArtifactType)
		}
		if len(m.Layers) != 1 || m.Layers[0].MediaType != zipMediaType {
			t.Fatalf("manifest %s: layers %+v, want one %s layer", d.Digest, m.Layers, zipMediaType)
		}
		verifyBlob(t, repo, m.Config)
		b := verifyBlob(t, repo, m.Layers[0])
		sum := [32]byte(mustHex(t, m.Layers[0].Digest.Encoded()))
		if [32]byte(mustHex(t, fmt.Sprintf("%x", sha256Bytes(b)))) != sum {
			t.Fatalf("layer digest is not the sha256 of its bytes")
		}
		out[plat] = hash.NewHash(hash.SchemeZH, sum)
	}
	return out
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 32 {
		t.Fatalf("not a sha256 hex digest: %q", s)
	}
	return b
}

func zhOf(hs []hash.Hash) hash.Hash {
	for _, h := range hs {
		if h.Scheme() == hash.SchemeZH {
			return h
		}
	}
	return ""
}

func h1Of(hs []hash.Hash) hash.Hash {
	for _, h := range hs {
		if h.Scheme() == hash.SchemeH1 {
			return h
		}
	}
	return ""
}

// TestProviderLayout: a provider written by the tier is in OpenTofu's
// oci_mirror format, and is read back whole by the tier and by the OCI
// source configured as tofu's oci_mirror would be.
func TestProviderLayout(t *testing.T) {
	r := newReg(t)
	ctx := context.Background()
	tier := r.tier(t, "fleet")
	pkg := provider(t, "hashicorp/aws", "5.1.0+build.7", linux)
	zip, hashes := providerZip(t, pkg)
	if err := tier.Put(ctx, pkg, cache.RemoteArchive{Hashes: hashes}, zip); err != nil {
		t.Fatal(err)
	}
	got := checkProviderVersion(t, r.repo(t, providerRepository), "5.1.0_build.7")
	if len(got) != 1 || got[linux] != zhOf(hashes) {
		t.Fatalf("index holds %v, want %s for %s", got, zhOf(hashes), linux)
	}

	out := filepath.Join(t.TempDir(), "got.zip")
	a, err := tier.Get(ctx, pkg, nil, out)
	if err != nil {
		t.Fatal(err)
	}
	if !sameFile(t, zip, out) || len(a.Hashes) != 1 || a.Hashes[0] != zhOf(hashes) {
		t.Fatalf("Get brought %v, not the zip written", a.Hashes)
	}
	if !strings.HasPrefix(a.Location, "oci://"+r.host()+"/"+providerRepository+"@sha256:") {
		t.Errorf("location %q", a.Location)
	}

	// The OCI source, as an oci_mirror with the documented template.
	opts := r.ociOptions()
	opts.ProviderRepository = func(_ context.Context, addr tfaddrProvider) (string, error) {
		return r.host() + "/fleet/" + addr.Hostname.String() + "/" + addr.Namespace + "/" + addr.Type, nil
	}
	f, err := oci.NewSource(opts).Fetch(ctx, pkg, filepath.Join(t.TempDir(), "pkg"))
	if err != nil {
		t.Fatal(err)
	}
	if h1Of(f.Hashes) != h1Of(hashes) || zhOf(f.Hashes) != zhOf(hashes) {
		t.Fatalf("the oci_mirror source read %v, want %v", f.Hashes, hashes)
	}
}

// TestProviderIndexGainsPlatforms: machines of other platforms add theirs
// to a version's index; none is lost, the same package written again
// writes nothing, and entries the tier does not know are kept.
func TestProviderIndexGainsPlatforms(t *testing.T) {
	r := newReg(t)
	ctx := context.Background()
	repo := r.repo(t, providerRepository)

	// A version published by other means first: one platform, and an
	// entry of another artifact type.
	zDarwin, err := ocitest.Zip(map[string]string{"terraform-provider-aws": "darwin"})
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := ocitest.PushManifest(ctx, repo, "application/vnd.example.sbom", []ocitest.Layer{{MediaType: "text/plain", Data: []byte("sbom")}})
	if err != nil {
		t.Fatal(err)
	}
	dm, err := ocitest.PushManifest(ctx, repo, targetArtifact, []ocitest.Layer{{MediaType: zipMediaType, Data: zDarwin}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ocitest.PushIndex(ctx, repo, providerArtifact, []ocitest.IndexEntry{
		{Manifest: dm, ArtifactType: targetArtifact, Platform: darwin},
		{Manifest: foreign, ArtifactType: "application/vnd.example.sbom"},
	}, "5.1.0"); err != nil {
		t.Fatal(err)
	}

	want := map[source.Platform]hash.Hash{darwin: hash.NewHash(hash.SchemeZH, sha256Bytes(zDarwin))}
	for i, plat := range []source.Platform{linux, win, arm} {
		pkg := provider(t, "hashicorp/aws", "5.1.0", plat)
		zip, hashes := providerZip(t, pkg)
		// each a machine of its own
		if err := r.tier(t, "fleet").Put(ctx, pkg, cache.RemoteArchive{Hashes: hashes}, zip); err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
		want[plat] = zhOf(hashes)
	}
	got := checkProviderVersionAllowing(t, repo, "5.1.0")
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("index holds %v, want %v", got, want)
	}

	// Idempotent: the same package again writes nothing.
	before := r.writes.Load()
	pkg := provider(t, "hashicorp/aws", "5.1.0", win)
	zip, hashes := providerZip(t, pkg)
	if err := r.tier(t, "fleet").Put(ctx, pkg, cache.RemoteArchive{Hashes: hashes}, zip); err != nil {
		t.Fatal(err)
	}
	if n := r.writes.Load() - before; n != 0 {
		t.Errorf("writing a package the tier holds made %d write requests, want 0", n)
	}
}

// checkProviderVersionAllowing is checkProviderVersion for an index that
// also lists entries of other artifact types (OpenTofu ignores them): it
// checks they are still there and returns the provider platforms.
func checkProviderVersionAllowing(t *testing.T, repo *remote.Repository, tag string) map[source.Platform]hash.Hash {
	t.Helper()
	desc, err := repo.Resolve(context.Background(), tag)
	if err != nil {
		t.Fatal(err)
	}
	var idx ocispec.Index
	fetchJSON(t, repo, desc, &idx)
	out := map[source.Platform]hash.Hash{}
	foreign := 0
	for _, d := range idx.Manifests {
		if d.ArtifactType != targetArtifact {
			foreign++
			continue
		}
		var m ocispec.Manifest
		fetchJSON(t, repo, d, &m)
		verifyBlob(t, repo, m.Layers[0])
		out[source.Platform{OS: d.Platform.OS, Arch: d.Platform.Architecture}] = hash.NewHash(hash.SchemeZH, [32]byte(mustHex(t, m.Layers[0].Digest.Encoded())))
	}
	if foreign != 1 {
		t.Errorf("the index lists %d entries of other artifact types, want the 1 it had", foreign)
	}
	return out
}

// TestConcurrentWritersEmptyPrefix: four machines at once on an empty
// prefix, each writing the same providers (one on a platform of its own,
// one shared) and the same module: all succeed, no platform is lost, and
// every blob verifies by its digest.
func TestConcurrentWritersEmptyPrefix(t *testing.T) {
	r := newReg(t)
	ctx := context.Background()
	plats := []source.Platform{linux, darwin, win, arm}
	shared := provider(t, "hashicorp/random", "3.6.0", linux)
	sharedZip, sharedHashes := providerZip(t, shared)
	modDir := moduleTree(t, map[string]string{"main.tf": "variable \"x\" {}\n", "sub/run.sh": "#!/bin/sh\n"})
	modZip, modH1 := moduleZip(t, modDir)

	var wg sync.WaitGroup
	errs := make([]error, len(plats))
	want := map[source.Platform]hash.Hash{}
	for i, plat := range plats {
		pkg := provider(t, "hashicorp/aws", "5.1.0", plat)
		zip, hashes := providerZip(t, pkg)
		want[plat] = zhOf(hashes)
		tier := r.tier(t, "fleet")
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = errors.Join(
				tier.Put(ctx, pkg, cache.RemoteArchive{Hashes: hashes}, zip),
				tier.Put(ctx, shared, cache.RemoteArchive{Hashes: sharedHashes}, sharedZip),
				tier.Put(ctx, source.ModulePackage{Source: "git::https://git.example.test/net.git"}, cache.RemoteArchive{Hashes: []hash.Hash{modH1}}, modZip),
			)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("machine %d: %v", i, err)
		}
	}
	if got := checkProviderVersion(t, r.repo(t, providerRepository), "5.1.0"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("index holds %v, want %v", got, want)
	}
	if got := checkProviderVersion(t, r.repo(t, "fleet/registry.example.test/hashicorp/random"), "3.6.0"); len(got) != 1 || got[linux] != zhOf(sharedHashes) {
		t.Fatalf("shared provider index holds %v", got)
	}
	checkModule(t, r.repo(t, "fleet/tflock/modules"), modH1, "")

	// Every machine now reads every package back.
	for _, plat := range plats {
		pkg := provider(t, "hashicorp/aws", "5.1.0", plat)
		out := filepath.Join(t.TempDir(), "p.zip")
		if a, err := r.tier(t, "fleet").Get(ctx, pkg, nil, out); err != nil || a.Hashes[0] != want[plat] {
			t.Errorf("get %s: %v %v", plat, a.Hashes, err)
		}
	}
}

// TestModuleRoundTrip: a module is written under its h1: in OpenTofu's
// module-package format, found only by that h1:, and the OCI module
// source installs it with the same h1:.
func TestModuleRoundTrip(t *testing.T) {
	r := newReg(t)
	ctx := context.Background()
	tier := r.tier(t, "fleet/ci")
	dir := moduleTree(t, map[string]string{"main.tf": "output \"o\" { value = 1 }\n", "modules/a/main.tf": "# a\n", "bin/tool": "#!/bin/sh\n"})
	zip, h1 := moduleZip(t, dir)
	pkg := source.ModulePackage{Source: "registry.example.test/acme/net/aws", Version: mustVersion(t, "1.0.0")}
	if err := tier.Put(ctx, pkg, cache.RemoteArchive{Hashes: []hash.Hash{h1}, Subdir: "modules/a"}, zip); err != nil {
		t.Fatal(err)
	}
	checkModule(t, r.repo(t, "fleet/ci/tflock/modules"), h1, "modules/a")

	// Found by the lock's h1: and subdirectory, whatever the module's
	// address; another module of the same package (another
	// subdirectory, or its root) is another entry.
	for _, sub := range []string{source.SubdirRoot, "modules/b", ""} {
		miss := source.ModulePackage{Source: "git::https://git.example.test/other.git", Ref: "main", Subdir: sub}
		if _, err := tier.Get(ctx, miss, []hash.Hash{h1}, filepath.Join(t.TempDir(), "miss.zip")); !errors.Is(err, source.ErrNotFound) {
			t.Errorf("Get bound to subdirectory %q: %v, want a miss", sub, err)
		}
	}
	out := filepath.Join(t.TempDir(), "m.zip")
	other := source.ModulePackage{Source: "git::https://git.example.test/other.git", Ref: "main", Subdir: "modules/a"}
	a, err := tier.Get(ctx, other, []hash.Hash{hash.MustParseHash("zh:" + strings.Repeat("0", 64)), h1}, out)
	if err != nil {
		t.Fatal(err)
	}
	if !sameFile(t, zip, out) || a.Subdir != "modules/a" {
		t.Fatalf("Get brought subdir %q", a.Subdir)
	}
	// Never without an h1: to verify it by.
	if _, err := tier.Get(ctx, pkg, nil, filepath.Join(t.TempDir(), "none.zip")); !errors.Is(err, source.ErrNotFound) {
		t.Fatalf("Get without an h1: %v, want a miss", err)
	}

	// The OCI module source reads the same artifact as a module package.
	tag := checkModuleTag(t, h1, "modules/a")
	src := oci.NewSource(r.ociOptions())
	f, err := src.Fetch(ctx, source.ModulePackage{Source: "oci://" + r.host() + "/fleet/ci/tflock/modules", Ref: tag}, filepath.Join(t.TempDir(), "m"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Hashes[0] != h1 {
		t.Fatalf("the OCI source installs %s, want %s", f.Hashes[0], h1)
	}
	if fi, err := os.Stat(filepath.Join(f.Dir, "bin", "tool")); err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("bin/tool lost its executable bit: %v %v", fi, err)
	}

	// Idempotent.
	before := r.writes.Load()
	if err := r.tier(t, "fleet/ci").Put(ctx, pkg, cache.RemoteArchive{Hashes: []hash.Hash{h1}, Subdir: "modules/a"}, zip); err != nil {
		t.Fatal(err)
	}
	if n := r.writes.Load() - before; n != 0 {
		t.Errorf("writing a module the tier holds made %d write requests", n)
	}
}

// checkModuleTag is the tag the layout documents: "h1-" and the hex of
// the h1: hash's 32 bytes.
func checkModuleTag(t *testing.T, h1 hash.Hash, subdir string) string {
	t.Helper()
	b := decodeB64(t, h1.Value())
	tag := "h1-" + hex.EncodeToString(b)
	if subdir != "" {
		sum := sha256.Sum256([]byte(subdir))
		tag += "-s" + hex.EncodeToString(sum[:])[:16]
	}
	return tag
}

// checkModule checks the module package of h1 as OpenTofu reads one: an
// image manifest with the module artifact type and one archive/zip layer.
func checkModule(t *testing.T, repo *remote.Repository, h1 hash.Hash, subdir string) {
	t.Helper()
	desc, err := repo.Resolve(context.Background(), checkModuleTag(t, h1, subdir))
	if err != nil {
		t.Fatal(err)
	}
	var m ocispec.Manifest
	fetchJSON(t, repo, desc, &m)
	if desc.MediaType != manifestMediaType || m.MediaType != manifestMediaType || m.ArtifactType != moduleArtifact {
		t.Fatalf("module manifest: %q %q %q", desc.MediaType, m.MediaType, m.ArtifactType)
	}
	if m.Config.MediaType != emptyConfigType || len(m.Layers) != 1 || m.Layers[0].MediaType != zipMediaType {
		t.Fatalf("module manifest: config %+v layers %+v", m.Config, m.Layers)
	}
	verifyBlob(t, repo, m.Config)
	verifyBlob(t, repo, m.Layers[0])
	if m.Annotations[ocitier.AnnotationSubdir] != subdir {
		t.Errorf("subdir annotation %q, want %q", m.Annotations[ocitier.AnnotationSubdir], subdir)
	}
}

// TestMissIsNotFailure: a package the tier lacks is a miss (ErrNotFound),
// and the tier stays usable.
func TestMissIsNotFailure(t *testing.T) {
	r := newReg(t)
	ctx := context.Background()
	tier := r.tier(t, "fleet")
	pkg := provider(t, "hashicorp/aws", "5.1.0", linux)
	out := filepath.Join(t.TempDir(), "p.zip")
	if _, err := tier.Get(ctx, pkg, nil, out); !errors.Is(err, source.ErrNotFound) || errors.Is(err, ocitier.ErrUnavailable) {
		t.Fatalf("absent repository: %v, want a miss", err)
	}
	zip, hashes := providerZip(t, pkg)
	if err := tier.Put(ctx, pkg, cache.RemoteArchive{Hashes: hashes}, zip); err != nil {
		t.Fatal(err)
	}
	for _, other := range []source.ProviderPackage{provider(t, "hashicorp/aws", "5.2.0", linux), provider(t, "hashicorp/aws", "5.1.0", darwin)} {
		if _, err := tier.Get(ctx, other, nil, out); !errors.Is(err, source.ErrNotFound) {
			t.Fatalf("%s: %v, want a miss", other, err)
		}
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a miss left %s", out)
	}
}

// TestUnavailable: a registry that is down, failing, full or too slow
// makes the call fail with ErrUnavailable, and every later call fails at
// once without a request; a failed write leaves no tag.
func TestUnavailable(t *testing.T) {
	ctx := context.Background()
	pkg := provider(t, "hashicorp/aws", "5.1.0", linux)
	zip, hashes := providerZip(t, pkg)

	cases := map[string]func(r *reg) *ocitier.Tier{
		"server error": func(r *reg) *ocitier.Tier {
			r.setFail(func(*http.Request) int { return http.StatusInternalServerError })
			return r.tier(t, "fleet")
		},
		"full: uploads refused": func(r *reg) *ocitier.Tier {
			r.setFail(func(q *http.Request) int {
				if q.Method == http.MethodPost || q.Method == http.MethodPut || q.Method == http.MethodPatch {
					return http.StatusInsufficientStorage
				}
				return 0
			})
			return r.tier(t, "fleet")
		},
		"index refused": func(r *reg) *ocitier.Tier {
			r.setFail(func(q *http.Request) int {
				if q.Method == http.MethodPut && strings.Contains(q.URL.Path, "/manifests/5.1.0") {
					return http.StatusRequestEntityTooLarge
				}
				return 0
			})
			return r.tier(t, "fleet")
		},
		"down": func(r *reg) *ocitier.Tier {
			tr := r.tier(t, "fleet")
			r.srv.Close()
			return tr
		},
		"slow": func(r *reg) *ocitier.Tier {
			r.setFail(func(q *http.Request) int {
				select {
				case <-q.Context().Done():
				case <-time.After(5 * time.Second):
				}
				return http.StatusServiceUnavailable
			})
			tr, err := ocitier.New("oci://"+r.host()+"/fleet", ocitier.Options{OCI: r.ociOptions(), Timeout: 100 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			return tr
		},
	}
	for name, setup := range cases {
		t.Run(name, func(t *testing.T) {
			r := newReg(t)
			tier := setup(r)
			err := tier.Put(ctx, pkg, cache.RemoteArchive{Hashes: hashes}, zip)
			if !errors.Is(err, ocitier.ErrUnavailable) {
				t.Fatalf("put: %v, want ErrUnavailable", err)
			}
			n := r.reads.Load() + r.writes.Load()
			if _, err := tier.Get(ctx, pkg, nil, filepath.Join(t.TempDir(), "p.zip")); !errors.Is(err, ocitier.ErrUnavailable) {
				t.Fatalf("get after: %v, want ErrUnavailable", err)
			}
			if err := tier.Put(ctx, pkg, cache.RemoteArchive{Hashes: hashes}, zip); !errors.Is(err, ocitier.ErrUnavailable) {
				t.Fatalf("put after: %v", err)
			}
			if m := r.reads.Load() + r.writes.Load(); m != n {
				t.Errorf("an unavailable tier was asked %d more requests", m-n)
			}
			if name == "down" {
				return
			}
			r.setFail(nil)
			if _, err := r.repo(t, providerRepository).Resolve(ctx, "5.1.0"); err == nil {
				t.Errorf("a failed write left the tag")
			}
		})
	}
}

// TestRefusesForeignArtifacts: the tier never overwrites a tag that holds
// something other than a provider index (here a module package), nor a
// platform's own tag that holds something other than a provider-target
// manifest, and such a tag is that package's problem, not the tier's.
func TestRefusesForeignArtifacts(t *testing.T) {
	for _, tag := range []string{"5.1.0", "tflock-5.1.0-linux_amd64"} {
		t.Run(tag, func(t *testing.T) {
			r := newReg(t)
			ctx := context.Background()
			repo := r.repo(t, providerRepository)
			img := pushForeign(t, repo, tag)
			tier := r.tier(t, "fleet")
			pkg := provider(t, "hashicorp/aws", "5.1.0", linux)
			zip, hashes := providerZip(t, pkg)
			err := tier.Put(ctx, pkg, cache.RemoteArchive{Hashes: hashes}, zip)
			if !errors.Is(err, oci.ErrInvalidArtifact) || errors.Is(err, ocitier.ErrUnavailable) {
				t.Fatalf("put over a module package: %v", err)
			}
			if d, err := repo.Resolve(ctx, tag); err != nil || d.Digest != img.Digest {
				t.Fatalf("the tag moved: %v %v", d.Digest, err)
			}
			// The tier is still usable for other packages.
			other := provider(t, "hashicorp/aws", "5.2.0", linux)
			zip2, hashes2 := providerZip(t, other)
			if err := tier.Put(ctx, other, cache.RemoteArchive{Hashes: hashes2}, zip2); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// pushForeign pushes a module package under tag.
func pushForeign(t *testing.T, repo *remote.Repository, tag string) ocispec.Descriptor {
	t.Helper()
	z, err := ocitest.Zip(map[string]string{"main.tf": "# a module\n"})
	if err != nil {
		t.Fatal(err)
	}
	img, err := ocitest.PushModule(context.Background(), repo, z, tag)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// TestPutRefusesUnverified: the zip must be the one whose hashes the
// caller verified; nothing is written otherwise.
func TestPutRefusesUnverified(t *testing.T) {
	r := newReg(t)
	ctx := context.Background()
	tier := r.tier(t, "fleet")
	pkg := provider(t, "hashicorp/aws", "5.1.0", linux)
	zip, _ := providerZip(t, pkg)
	_, other := providerZip(t, provider(t, "hashicorp/aws", "5.1.1", linux))
	if err := tier.Put(ctx, pkg, cache.RemoteArchive{Hashes: other}, zip); !errors.Is(err, source.ErrChecksumMismatch) {
		t.Fatalf("put with other hashes: %v", err)
	}
	mod := moduleTree(t, map[string]string{"main.tf": "# m\n"})
	mzip, _ := moduleZip(t, mod)
	if err := tier.Put(ctx, source.ModulePackage{Source: "x"}, cache.RemoteArchive{Hashes: []hash.Hash{h1Of(other)}}, mzip); !errors.Is(err, source.ErrChecksumMismatch) {
		t.Fatalf("module put with another h1: %v", err)
	}
	if n := r.writes.Load(); n != 0 {
		t.Errorf("%d write requests", n)
	}
}

// TestCredentials: a registry that demands a login is used with the
// credentials of a docker config file, as the OCI source finds them; no
// secret appears in an error.
func TestCredentials(t *testing.T) {
	srv := ocitest.New(t, ocitest.ServerOptions{Username: "ci", Password: "s3cret-pw"})
	ctx := context.Background()
	host := srv.Host()
	cfg := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(cfg, []byte(`{"auths":{"`+host+`":{"auth":"`+b64("ci:s3cret-pw")+`"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	pkg := provider(t, "hashicorp/aws", "5.1.0", linux)
	zip, hashes := providerZip(t, pkg)

	anon, err := ocitier.New("oci://"+host+"/fleet", ocitier.Options{OCI: oci.Options{PlainHTTP: true, HTTPClient: srv.Client()}})
	if err != nil {
		t.Fatal(err)
	}
	if err := anon.Put(ctx, pkg, cache.RemoteArchive{Hashes: hashes}, zip); !errors.Is(err, ocitier.ErrUnavailable) {
		t.Fatalf("anonymous put: %v", err)
	}
	wrong := filepath.Join(t.TempDir(), "wrong.json")
	if err := os.WriteFile(wrong, []byte(`{"auths":{"`+host+`":{"auth":"`+b64("ci:not-the-pw")+`"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	bad, err := ocitier.New("oci://"+host+"/fleet", ocitier.Options{OCI: oci.Options{PlainHTTP: true, HTTPClient: srv.Client(), ConfigFiles: []string{wrong}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := bad.Put(ctx, pkg, cache.RemoteArchive{Hashes: hashes}, zip); err == nil || strings.Contains(err.Error(), "not-the-pw") {
		t.Fatalf("put with a wrong password: %v", err)
	}

	tier, err := ocitier.New("oci://"+host+"/fleet", ocitier.Options{OCI: oci.Options{PlainHTTP: true, HTTPClient: srv.Client(), ConfigFiles: []string{cfg}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := tier.Put(ctx, pkg, cache.RemoteArchive{Hashes: hashes}, zip); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "p.zip")
	if _, err := tier.Get(ctx, pkg, nil, out); err != nil {
		t.Fatal(err)
	}
	if !sameFile(t, zip, out) {
		t.Fatal("Get brought another zip")
	}
}

// TestParseLocation: the forms of a tier location, and clear errors.
func TestParseLocation(t *testing.T) {
	good := map[string]string{
		"oci://registry.example.test/tflock":       "registry.example.test/tflock",
		"oci://127.0.0.1:5000/ci/cache/":           "127.0.0.1:5000/ci/cache",
		"registry.example.test:443/a/b":            "registry.example.test:443/a/b",
		"oci://localhost:5000/fleet-cache/v1":      "localhost:5000/fleet-cache/v1",
		"oci://registry.example.test/team_a/cache": "registry.example.test/team_a/cache",
	}
	for in, want := range good {
		got, err := ocitier.ParseLocation(in)
		if err != nil || got != want {
			t.Errorf("ParseLocation(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "oci://", "oci://host", "oci://host/", "https://host/prefix", "oci://host/UPPER", "oci://host/a:tag", "oci://host/a@sha256:00", "oci:///prefix", "oci://host//x"} {
		if got, err := ocitier.ParseLocation(in); err == nil {
			t.Errorf("ParseLocation(%q) = %q, want an error", in, got)
		} else if !strings.Contains(err.Error(), "oci://HOST[:PORT]/PREFIX") && !strings.Contains(err.Error(), "not a valid OCI") {
			t.Errorf("ParseLocation(%q): unclear error %v", in, err)
		}
	}
}

// TestSlowUploadKeepsOtherPlatform: machine B reads a version's index
// (empty), then uploads a large zip; meanwhile machine A writes the
// version with its platform. B's index must keep A's platform: it is
// merged into the index as it is once B's blobs are up, not as it was
// before the upload (B used to write the index it had read first, and A's
// platform was gone).
func TestSlowUploadKeepsOtherPlatform(t *testing.T) {
	r := newReg(t)
	ctx := context.Background()
	pkgA, pkgB := provider(t, "hashicorp/aws", "5.1.0", linux), provider(t, "hashicorp/aws", "5.1.0", darwin)
	zipA, hashesA := providerZip(t, pkgA)
	zipB, hashesB := providerZip(t, pkgB)
	hexB := zhOf(hashesB).Value()
	reached, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	r.setFail(func(req *http.Request) int {
		if req.Method == http.MethodPut && strings.Contains(req.URL.RawQuery, hexB) {
			once.Do(func() { close(reached) })
			<-release
		}
		return 0
	})
	errB := make(chan error, 1)
	go func() {
		errB <- r.tier(t, "fleet").Put(ctx, pkgB, cache.RemoteArchive{Hashes: hashesB}, zipB)
	}()
	<-reached // B has read the index and is uploading its zip
	if err := r.tier(t, "fleet").Put(ctx, pkgA, cache.RemoteArchive{Hashes: hashesA}, zipA); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-errB; err != nil {
		t.Fatal(err)
	}
	got := checkProviderVersion(t, r.repo(t, providerRepository), "5.1.0")
	want := map[source.Platform]hash.Hash{linux: zhOf(hashesA), darwin: zhOf(hashesB)}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("index holds %v, want %v", got, want)
	}
}
