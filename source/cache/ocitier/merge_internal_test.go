package ocitier

import (
	"encoding/json"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

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
