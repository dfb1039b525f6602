package ocitier

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/registry"

	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/oci"
)

// FuzzMergeIndex: whatever index a registry holds under a version's tag
// (any JSON a reader accepted), merging a platform's entry never panics,
// keeps every entry of another platform or kind, lists the new entry once
// for its platform, and is deterministic.
func FuzzMergeIndex(f *testing.F) {
	f.Add([]byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","artifactType":"application/vnd.opentofu.provider","manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","artifactType":"application/vnd.opentofu.provider-target","digest":"sha256:0000000000000000000000000000000000000000000000000000000000000000","size":1,"platform":{"os":"darwin","architecture":"arm64"}}]}`), "linux", "amd64")
	f.Add([]byte(`{"manifests":[{"artifactType":"application/vnd.opentofu.provider-target","platform":{"os":"linux","architecture":"amd64","variant":"v8"}},{"artifactType":"x"},{}]}`), "linux", "amd64")
	f.Add([]byte(`{}`), "", "")
	f.Fuzz(func(t *testing.T, doc []byte, os, arch string) {
		var idx ocispec.Index
		if json.Unmarshal(doc, &idx) != nil {
			return
		}
		entry := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, ArtifactType: oci.ArtifactTypeProviderTarget,
			Digest: digest.FromString(os + arch), Size: 10, Platform: &ocispec.Platform{OS: os, Architecture: arch}}
		a := mergeEntries(&idx, []ocispec.Descriptor{entry})
		b := mergeEntries(&idx, []ocispec.Descriptor{entry})
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Fatal("merge is not deterministic")
		}
		if a.MediaType != ocispec.MediaTypeImageIndex || a.ArtifactType != oci.ArtifactTypeProvider {
			t.Fatalf("merged index %q %q", a.MediaType, a.ArtifactType)
		}
		n := 0
		for _, d := range a.Manifests {
			if platformKey(d) == platformKey(entry) {
				n++
				if !sameEntry(d, entry) {
					t.Fatalf("platform %s lists another manifest", platformKey(entry))
				}
			}
		}
		if n != 1 {
			t.Fatalf("platform %q listed %d times", platformKey(entry), n)
		}
		for _, d := range idx.Manifests {
			if platformKey(d) == platformKey(entry) {
				continue
			}
			found := false
			for _, m := range a.Manifests {
				if m.Digest == d.Digest && platformKey(m) == platformKey(d) && m.ArtifactType == d.ArtifactType {
					found = true
				}
			}
			if !found {
				t.Fatalf("entry %+v lost", d)
			}
		}
	})
}

// FuzzPlatformTag: the tag of a version's platform is a valid OCI tag that
// no one reads as a version, and the only one a listing of the version's
// platform tags reads as that platform; another version's never is.
func FuzzPlatformTag(f *testing.F) {
	f.Add("5.1.0+ent", "linux", "amd64", "5.1.0")
	f.Add("1.0.0", "darwin", "arm64", "1.0.0-rc1")
	f.Add("1.0.0-x+y", "x", "y", "1.0.0")
	f.Fuzz(func(t *testing.T, version, os, arch, other string) {
		v, err := versions.Parse(version)
		if err != nil {
			return
		}
		vtag := versionTag(source.ProviderPackage{Version: v})
		plat := source.Platform{OS: os, Arch: arch}
		tag, ok := platformTag(vtag, plat)
		if !ok {
			return
		}
		if ref, err := registry.ParseReference("h.test/r:" + tag); err != nil || ref.Reference != tag {
			t.Fatalf("platform tag %q is not a valid tag: %v", tag, err)
		}
		if _, isVersion := oci.TagVersion(tag); isVersion {
			t.Fatalf("platform tag %q reads as a version", tag)
		}
		rest, ok := strings.CutPrefix(tag, platformTagPrefix(vtag))
		if got, err := source.ParsePlatform(rest); !ok || err != nil || got != plat {
			t.Fatalf("platform tag %q lists as %v, %v", tag, got, err)
		}
		if w, err := versions.Parse(other); err == nil && w.String() != v.String() {
			otag := versionTag(source.ProviderPackage{Version: w})
			if rest, ok := strings.CutPrefix(tag, platformTagPrefix(otag)); ok {
				if _, err := source.ParsePlatform(rest); err == nil {
					t.Fatalf("platform tag %q lists as a platform of %s too", tag, w)
				}
			}
		}
	})
}
