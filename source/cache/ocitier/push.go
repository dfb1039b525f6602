package ocitier

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/opencontainers/go-digest"
	"github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/oci"
)

// emptyConfig is the config blob of every manifest the tier writes: the
// OCI empty descriptor "{}", as artifacts without a config use.
var emptyConfig = []byte("{}")

// emptyConfigDesc describes emptyConfig (without the embedded data field,
// which older registries do not know).
var emptyConfigDesc = ocispec.Descriptor{MediaType: ocispec.MediaTypeEmptyJSON, Digest: digest.FromBytes(emptyConfig), Size: int64(len(emptyConfig))}

// fileBlob describes the file at path as a blob of mediaType: its sha256
// digest and size.
func fileBlob(path, mediaType string) (ocispec.Descriptor, error) {
	f, err := os.Open(path)
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("%w: %w", errLocal, err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("%w: reading %s: %w", errLocal, path, err)
	}
	return ocispec.Descriptor{MediaType: mediaType, Digest: digest.NewDigestFromBytes(digest.SHA256, h.Sum(nil)), Size: n}, nil
}

// manifestBytes serialises the image manifest of one zip layer, with the
// given artifact type and annotations. The same arguments always give the
// same bytes, and so the same digest.
func manifestBytes(artifactType string, layer ocispec.Descriptor, annotations map[string]string) (ocispec.Descriptor, []byte, error) {
	m := ocispec.Manifest{
		Versioned:    specs.Versioned{SchemaVersion: 2},
		MediaType:    ocispec.MediaTypeImageManifest,
		ArtifactType: artifactType,
		Config:       emptyConfigDesc,
		Layers:       []ocispec.Descriptor{layer},
		Annotations:  annotations,
	}
	b, err := json.Marshal(m)
	if err != nil {
		return ocispec.Descriptor{}, nil, err
	}
	d := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, ArtifactType: artifactType, Digest: digest.FromBytes(b), Size: int64(len(b))}
	return d, b, nil
}

// pushBlob pushes a blob unless the repository has it already.
func pushBlob(ctx context.Context, repo *remote.Repository, desc ocispec.Descriptor, open func() (io.ReadCloser, error)) error {
	if ok, err := repo.Exists(ctx, desc); err != nil {
		return fmt.Errorf("checking blob %s: %w", desc.Digest, err)
	} else if ok {
		return nil
	}
	r, err := open()
	if err != nil {
		return fmt.Errorf("%w: %w", errLocal, err)
	}
	defer r.Close()
	if err := repo.Push(ctx, desc, r); err != nil && !errors.Is(err, errdef.ErrAlreadyExists) {
		return fmt.Errorf("pushing blob %s: %w", desc.Digest, err)
	}
	return nil
}

// open returns the client of repository name and describes the zip at
// path as its layer blob.
func (t *Tier) open(ctx context.Context, name, path string) (*remote.Repository, ocispec.Descriptor, error) {
	repo, err := t.repository(ctx, name)
	if err != nil {
		return nil, ocispec.Descriptor{}, fmt.Errorf("%w: %w", errLocal, err)
	}
	blob, err := fileBlob(path, oci.MediaTypeZip)
	return repo, blob, err
}

// pushBlobs pushes the blobs of a manifest the tier writes: the empty
// config and the zip at path (blob).
func pushBlobs(ctx context.Context, repo *remote.Repository, blob ocispec.Descriptor, path string) error {
	if err := pushBlob(ctx, repo, emptyConfigDesc, bytesOpener(emptyConfig)); err != nil {
		return err
	}
	return pushBlob(ctx, repo, blob, fileOpener(path))
}

func bytesOpener(b []byte) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
}

func fileOpener(path string) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) { return os.Open(path) }
}

// pushManifest pushes a manifest (by digest) unless the repository has it.
func pushManifest(ctx context.Context, repo *remote.Repository, desc ocispec.Descriptor, b []byte) error {
	if ok, err := repo.Exists(ctx, desc); err != nil {
		return fmt.Errorf("checking manifest %s: %w", desc.Digest, err)
	} else if ok {
		return nil
	}
	if err := repo.Push(ctx, desc, bytes.NewReader(b)); err != nil && !errors.Is(err, errdef.ErrAlreadyExists) {
		return fmt.Errorf("pushing manifest %s: %w", desc.Digest, err)
	}
	return nil
}

// zhOf returns the zh: of a blob descriptor's sha256 digest.
func zhOf(d ocispec.Descriptor) hash.Hash {
	b, err := hex.DecodeString(d.Digest.Encoded())
	if err != nil || len(b) != 32 {
		return ""
	}
	return hash.NewHash(hash.SchemeZH, [32]byte(b))
}

func (t *Tier) putProvider(ctx context.Context, p source.ProviderPackage, a cache.RemoteArchive, path string) error {
	if p.Version.IsZero() || p.Platform.IsZero() {
		return fmt.Errorf("%w: a provider package needs a version and a platform", errLocal)
	}
	name, err := t.template(ctx, p.Addr)
	if err != nil {
		return fmt.Errorf("%w: %w", errLocal, err)
	}
	repo, blob, err := t.open(ctx, name, path)
	if err != nil {
		return err
	}
	// The layer's digest is the zh: the lock records; the caller verified
	// the package, so the zip must be the one it verified.
	if zh := zhOf(blob); !slices.Contains(a.Hashes, zh) {
		return fmt.Errorf("%w: %w: the zip hashes to %s, which is not among the verified hashes %v", errLocal, source.ErrChecksumMismatch, zh, a.Hashes)
	}
	mdesc, mbytes, err := manifestBytes(oci.ArtifactTypeProviderTarget, blob, nil)
	if err != nil {
		return err
	}
	entry := targetEntry(mdesc, p.Platform)
	tag := versionTag(p)
	ptag, hasPtag := platformTag(tag, p.Platform)
	idx, err := readIndex(ctx, name, repo, tag)
	if err != nil {
		return err
	}
	var held ocispec.Descriptor // what the platform's own tag refers to
	if hasPtag {
		if held, err = readTarget(ctx, name, repo, ptag, mdesc.Digest); err != nil {
			return err
		}
	}
	if idx != nil && hasEntry(idx, entry) && (!hasPtag || held.Digest == mdesc.Digest) {
		return nil // there already: nothing to write
	}
	// Blobs, then the manifest under the platform's own tag, which no
	// other writer's platform touches, then the index.
	if err := pushBlobs(ctx, repo, blob, path); err != nil {
		return err
	}
	if !hasPtag {
		err = pushManifest(ctx, repo, mdesc, mbytes)
	} else if held.Digest != mdesc.Digest {
		if err = repo.PushReference(ctx, mdesc, bytes.NewReader(mbytes), ptag); err != nil {
			err = fmt.Errorf("pushing the manifest of %s: %w", ptag, err)
		}
	}
	if err != nil {
		return err
	}
	// Read the index again: pushing the blobs took as long as the upload,
	// and another writer may have added its platform meanwhile; merging
	// into the index read before would drop it.
	if idx, err = readIndex(ctx, name, repo, tag); err != nil {
		return err
	}
	return t.mergeIndex(ctx, name, repo, tag, idx, entry)
}

// platformTag is the tag under which the tier also writes the manifest of
// one platform of a provider version whose tag is versionTag:
// "tflock-VERSIONTAG-OS_ARCH". Only the writers of that platform write
// it, so no writer can drop another's platform, as a writer of the shared
// index can. It is no version (OpenTofu and tflock ignore it when
// listing versions), and it names one version and platform: OS and ARCH
// hold no "-". False when the platform is not two lower-case words or the
// tag would be longer than a tag may be: such a platform is written to
// the index only.
func platformTag(versionTag string, plat source.Platform) (string, bool) {
	if _, err := source.ParsePlatform(plat.String()); err != nil {
		return "", false
	}
	tag := platformTagPrefix(versionTag) + plat.String()
	return tag, len(tag) <= maxTagLength
}

// platformTagPrefix is what the platform tags of a version begin with.
func platformTagPrefix(versionTag string) string { return "tflock-" + versionTag + "-" }

// maxTagLength is the longest tag the OCI distribution specification
// allows.
const maxTagLength = 128

// readTarget returns the descriptor of the manifest a platform tag refers
// to, the zero descriptor when the tag does not exist. A tag that refers
// to anything but a provider-target manifest is an error: the tier never
// overwrites what it did not write. A tag that refers to ours, the
// manifest the tier would write, is not read.
func readTarget(ctx context.Context, name string, repo *remote.Repository, ptag string, ours digest.Digest) (ocispec.Descriptor, error) {
	var m ocispec.Manifest
	desc, found, err := readTagged(ctx, name, repo, ptag, ours, &m)
	if err != nil || !found || desc.Digest == ours {
		return desc, err
	}
	if m.MediaType != ocispec.MediaTypeImageManifest || m.ArtifactType != oci.ArtifactTypeProviderTarget {
		return ocispec.Descriptor{}, foreign(name, ptag, fmt.Sprintf("the tag refers to a %q of artifact type %q, not an OpenTofu provider-target manifest", m.MediaType, m.ArtifactType))
	}
	return desc, nil
}

// readTagged resolves tag and, unless it refers to skip, reads the JSON
// document it refers to into doc; false when the tag does not exist.
func readTagged(ctx context.Context, name string, repo *remote.Repository, tag string, skip digest.Digest, doc any) (ocispec.Descriptor, bool, error) {
	desc, err := repo.Resolve(ctx, tag)
	if errors.Is(err, errdef.ErrNotFound) {
		return ocispec.Descriptor{}, false, nil
	}
	if err != nil {
		return ocispec.Descriptor{}, false, fmt.Errorf("resolving %s:%s: %w", name, tag, err)
	}
	if skip != "" && desc.Digest == skip {
		return desc, true, nil
	}
	if desc.Size > oci.MaxManifestSize || desc.Size < 0 {
		return ocispec.Descriptor{}, false, foreign(name, tag, fmt.Sprintf("the tag refers to a manifest of %d bytes", desc.Size))
	}
	b, err := content.FetchAll(ctx, repo, desc)
	if err != nil {
		return ocispec.Descriptor{}, false, fmt.Errorf("reading %s:%s: %w", name, tag, err)
	}
	if err := json.Unmarshal(b, doc); err != nil {
		return ocispec.Descriptor{}, false, foreign(name, tag, fmt.Sprintf("the tag refers to a document that is not valid JSON (%v)", err))
	}
	return desc, true, nil
}

// foreign is the error of a tag the tier would write that holds something
// it did not write.
func foreign(name, tag, reason string) error {
	return &oci.ArtifactError{Repository: name, Reference: tag, Reason: reason + "; the remote cache does not overwrite it"}
}

// taggedEntries returns the index entries of the platforms of version tag
// that are written under their own tags ([platformTag]) but missing from
// idx: found by listing the tags that follow the version's prefix, so
// that a writer whose index replaced another's restores its platform.
// The listing is a repair, not a need: an error of the listing or of a
// platform tag (one the tier did not write) leaves that platform out.
func taggedEntries(ctx context.Context, name string, repo *remote.Repository, tag string, idx *ocispec.Index) []ocispec.Descriptor {
	prefix := platformTagPrefix(tag)
	var plats []source.Platform
	_ = repo.Tags(ctx, prefix, func(tags []string) error {
		for _, tg := range tags {
			rest, ok := strings.CutPrefix(tg, prefix)
			if !ok {
				if tg > prefix {
					return errStopListing // sorted, as the specification asks: past the version's tags
				}
				continue // a registry that ignores "last"
			}
			if plat, err := source.ParsePlatform(rest); err == nil {
				plats = append(plats, plat)
			}
		}
		return nil
	})
	var out []ocispec.Descriptor
	for _, plat := range plats {
		key := platformKey(targetEntry(ocispec.Descriptor{}, plat))
		if idx != nil && slices.ContainsFunc(idx.Manifests, func(d ocispec.Descriptor) bool { return platformKey(d) == key }) {
			continue
		}
		ptag, _ := platformTag(tag, plat)
		desc, err := readTarget(ctx, name, repo, ptag, "")
		if err != nil || desc.Digest == "" {
			continue
		}
		out = append(out, targetEntry(desc, plat))
	}
	return out
}

var errStopListing = errors.New("stop listing")

// targetEntry is the index entry of the provider-target manifest desc for
// platform plat.
func targetEntry(desc ocispec.Descriptor, plat source.Platform) ocispec.Descriptor {
	return ocispec.Descriptor{
		MediaType:    ocispec.MediaTypeImageManifest,
		ArtifactType: oci.ArtifactTypeProviderTarget,
		Digest:       desc.Digest,
		Size:         desc.Size,
		Platform:     &ocispec.Platform{OS: plat.OS, Architecture: plat.Arch},
	}
}

// mergeIndex writes the index of tag with entry added to what the
// registry holds, then reads it back: while an entry it wrote is missing
// (another writer's index, built from an older read, replaced it), it
// merges again, up to [Options.MergeAttempts] times.
func (t *Tier) mergeIndex(ctx context.Context, name string, repo *remote.Repository, tag string, idx *ocispec.Index, entry ocispec.Descriptor) error {
	seen := []ocispec.Descriptor{entry}
	for attempt := 0; attempt < t.opts.MergeAttempts; attempt++ {
		merged := mergeEntries(idx, seen)
		b, err := json.Marshal(merged)
		if err != nil {
			return err
		}
		desc := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageIndex, ArtifactType: oci.ArtifactTypeProvider, Digest: digest.FromBytes(b), Size: int64(len(b))}
		if err := repo.PushReference(ctx, desc, bytes.NewReader(b), tag); err != nil {
			return fmt.Errorf("pushing the index of %s: %w", tag, err)
		}
		seen = merged.Manifests
		if err := sleep(ctx, t.opts.Settle); err != nil {
			return err
		}
		if idx, err = readIndex(ctx, name, repo, tag); err != nil {
			return err
		}
		seen = append(seen, taggedEntries(ctx, name, repo, tag, idx)...)
		if idx != nil && containsAll(idx, seen) {
			return nil
		}
	}
	return fmt.Errorf("the index of %s lost entries to other writers %d times in a row", tag, t.opts.MergeAttempts)
}

func sleep(ctx context.Context, d time.Duration) error {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tm.C:
		return nil
	}
}

// readIndex returns the provider index tag refers to, nil when the tag
// does not exist. A tag that refers to anything else is an error: the tier
// never overwrites what it did not write.
func readIndex(ctx context.Context, name string, repo *remote.Repository, tag string) (*ocispec.Index, error) {
	var idx ocispec.Index
	_, found, err := readTagged(ctx, name, repo, tag, "", &idx)
	if err != nil || !found {
		return nil, err
	}
	if idx.MediaType != ocispec.MediaTypeImageIndex || idx.ArtifactType != oci.ArtifactTypeProvider {
		return nil, foreign(name, tag, fmt.Sprintf("the tag refers to a %q of artifact type %q, not an OpenTofu provider index", idx.MediaType, idx.ArtifactType))
	}
	return &idx, nil
}

// platformKey identifies a provider-target entry by its platform; "" for
// any other entry (kept as it is).
func platformKey(d ocispec.Descriptor) string {
	if d.ArtifactType != oci.ArtifactTypeProviderTarget || d.Platform == nil || d.Platform.OSVersion != "" || d.Platform.Variant != "" || len(d.Platform.OSFeatures) > 0 {
		return ""
	}
	return d.Platform.OS + "\x00" + d.Platform.Architecture
}

func sameEntry(a, b ocispec.Descriptor) bool {
	return platformKey(a) == platformKey(b) && a.Digest == b.Digest && a.Size == b.Size && a.MediaType == b.MediaType
}

// hasEntry reports whether idx lists entry's platform with entry's
// manifest and no other manifest for that platform.
func hasEntry(idx *ocispec.Index, entry ocispec.Descriptor) bool {
	found := false
	for _, d := range idx.Manifests {
		if platformKey(d) != platformKey(entry) {
			continue
		}
		if !sameEntry(d, entry) {
			return false
		}
		found = true
	}
	return found
}

func containsAll(idx *ocispec.Index, want []ocispec.Descriptor) bool {
	for _, w := range want {
		if !slices.ContainsFunc(idx.Manifests, func(d ocispec.Descriptor) bool { return sameEntry(d, w) }) {
			return false
		}
	}
	return true
}

// mergeEntries returns idx (nil: an empty index) with the entries of add,
// each replacing any provider-target entry of its platform; entries of
// other kinds are kept in their order after the platforms, which are
// sorted. The result is deterministic: writers that merge the same
// entries write the same bytes.
func mergeEntries(idx *ocispec.Index, add []ocispec.Descriptor) ocispec.Index {
	out := ocispec.Index{
		Versioned:    specs.Versioned{SchemaVersion: 2},
		MediaType:    ocispec.MediaTypeImageIndex,
		ArtifactType: oci.ArtifactTypeProvider,
	}
	byPlat := map[string]ocispec.Descriptor{}
	var others []ocispec.Descriptor
	if idx != nil {
		out.Annotations = idx.Annotations
		for _, d := range idx.Manifests {
			if k := platformKey(d); k != "" {
				byPlat[k] = d
			} else {
				others = append(others, d)
			}
		}
	}
	for _, d := range add {
		if k := platformKey(d); k != "" {
			byPlat[k] = d
		}
	}
	keys := make([]string, 0, len(byPlat))
	for k := range byPlat {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out.Manifests = make([]ocispec.Descriptor, 0, len(keys)+len(others))
	for _, k := range keys {
		out.Manifests = append(out.Manifests, byPlat[k])
	}
	out.Manifests = append(out.Manifests, others...)
	return out
}

func (t *Tier) putModule(ctx context.Context, pkg source.ModulePackage, a cache.RemoteArchive, path string) error {
	tag := ""
	var h1 hash.Hash
	for _, h := range a.Hashes {
		if tg, ok := moduleTag(h, a.Subdir, pkg); ok {
			tag, h1 = tg, h
			break
		}
	}
	if tag == "" {
		return fmt.Errorf("%w: a module package is stored under its h1:, and none is given", errLocal)
	}
	// The zip was made from the verified tree: check that it gives that
	// tree back, so that no machine ever downloads a useless artifact.
	got, err := hash.Options{Module: true}.HashZip(ctx, path)
	if err != nil {
		return fmt.Errorf("%w: hashing %s: %w", errLocal, path, err)
	}
	if got.H1 != h1 {
		return fmt.Errorf("%w: %w: the module zip hashes to %s, not the verified %s", errLocal, source.ErrChecksumMismatch, got.H1, h1)
	}
	name := t.location + "/" + ModuleRepository
	repo, blob, err := t.open(ctx, name, path)
	if err != nil {
		return err
	}
	var ann map[string]string
	if a.Subdir != "" {
		ann = map[string]string{AnnotationSubdir: a.Subdir}
	}
	mdesc, mbytes, err := manifestBytes(oci.ArtifactTypeModule, blob, ann)
	if err != nil {
		return err
	}
	if d, err := repo.Resolve(ctx, tag); err == nil && d.Digest == mdesc.Digest {
		return nil // there already
	} else if err != nil && !errors.Is(err, errdef.ErrNotFound) {
		return fmt.Errorf("resolving %s:%s: %w", name, tag, err)
	}
	if err := pushBlobs(ctx, repo, blob, path); err != nil {
		return err
	}
	if err := repo.PushReference(ctx, mdesc, bytes.NewReader(mbytes), tag); err != nil {
		return fmt.Errorf("pushing the manifest of %s: %w", tag, err)
	}
	return nil
}
