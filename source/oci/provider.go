package oci

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
)

// providerIndex resolves the tag of provider version p and returns the
// image index it refers to, checking that it is an OpenTofu provider.
func providerIndex(ctx context.Context, name string, repo Repository, p source.ProviderPackage) (string, *manifestDoc, error) {
	if p.Version.IsZero() {
		return "", nil, errors.New("no provider version given")
	}
	tag := versions.Tag(p.Version, versions.OCITag)
	desc, err := resolve(ctx, repo, tag)
	if err != nil {
		return tag, nil, err
	}
	m, err := fetchManifest(ctx, repo, desc)
	if err != nil {
		return tag, nil, err
	}
	return checkProviderIndex(name, tag, desc, m)
}

// checkProviderIndex checks that m, read by desc from tag, is an OpenTofu
// provider index.
func checkProviderIndex(name, tag string, desc ocispec.Descriptor, m *manifestDoc) (string, *manifestDoc, error) {
	fail := func(format string, args ...any) (string, *manifestDoc, error) {
		return tag, nil, &ArtifactError{Repository: name, Reference: tag, Reason: fmt.Sprintf(format, args...)}
	}
	at := m.artifactType()
	switch {
	case at == ArtifactTypeModule:
		return fail("the artifact is an OpenTofu module package, not a provider package")
	case m.kind(desc) == ocispec.MediaTypeImageManifest:
		return fail("the tag refers to an image manifest, but an OpenTofu provider version must be an image index with one manifest per platform")
	case m.kind(desc) != ocispec.MediaTypeImageIndex:
		return fail("unsupported media type %q: an OpenTofu provider version must be an image index", m.kind(desc))
	case at == "":
		return fail("the index has no artifact type; is this a container image rather than an OpenTofu provider (artifactType %q)?", ArtifactTypeProvider)
	case at != ArtifactTypeProvider:
		return fail("unsupported artifact type %q: an OpenTofu provider index has artifactType %q", at, ArtifactTypeProvider)
	}
	return tag, m, nil
}

// platformManifests returns the index's provider-target manifests by
// platform. Descriptors of other artifact types, and those that name an
// OS version or variant, are ignored as OpenTofu ignores them. Two
// manifests for one platform make the index ambiguous.
func platformManifests(name, tag string, index *manifestDoc) (map[source.Platform]ocispec.Descriptor, error) {
	out := map[source.Platform]ocispec.Descriptor{}
	var wrongType string
	for _, d := range index.Manifests {
		if d.ArtifactType != ArtifactTypeProviderTarget {
			if d.ArtifactType != "" {
				wrongType = d.ArtifactType
			}
			continue
		}
		if d.MediaType != ocispec.MediaTypeImageManifest {
			return nil, &ArtifactError{Repository: name, Reference: tag, Reason: fmt.Sprintf("a provider-target descriptor has media type %q, but it must be an image manifest", d.MediaType)}
		}
		if d.Platform == nil || d.Platform.OS == "" || d.Platform.Architecture == "" {
			return nil, &ArtifactError{Repository: name, Reference: tag, Reason: "a provider-target descriptor lacks the required platform os and architecture"}
		}
		if d.Platform.OSVersion != "" || d.Platform.Variant != "" || len(d.Platform.OSFeatures) > 0 {
			continue
		}
		plat := source.Platform{OS: d.Platform.OS, Arch: d.Platform.Architecture}
		if _, dup := out[plat]; dup {
			return nil, &ArtifactError{Repository: name, Reference: tag, Reason: fmt.Sprintf("the index is ambiguous: it has several manifests for platform %s", plat)}
		}
		out[plat] = d
	}
	if len(out) == 0 {
		if wrongType != "" {
			return nil, &ArtifactError{Repository: name, Reference: tag, Reason: fmt.Sprintf("the index lists no provider-target manifests, only artifacts of type %q", wrongType)}
		}
		return nil, &ArtifactError{Repository: name, Reference: tag, Reason: fmt.Sprintf("the index lists no manifests with artifactType %q; is this a container image rather than an OpenTofu provider?", ArtifactTypeProviderTarget)}
	}
	return out, nil
}

// platformLayer fetches one platform's manifest and returns its zip layer.
func platformLayer(ctx context.Context, name, tag string, repo Repository, d ocispec.Descriptor) (ocispec.Descriptor, error) {
	m, err := fetchManifest(ctx, repo, d)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	return targetLayer(name, tag, d, m)
}

// targetLayer checks that m, read by d, is a provider-target manifest and
// returns its zip layer.
func targetLayer(name, tag string, d ocispec.Descriptor, m *manifestDoc) (ocispec.Descriptor, error) {
	if k := m.kind(d); k != ocispec.MediaTypeImageManifest {
		return ocispec.Descriptor{}, &ArtifactError{Repository: name, Reference: tag, Reason: fmt.Sprintf("platform manifest %s has media type %q, but it must be an image manifest", d.Digest, k)}
	}
	if at := m.artifactType(); at != ArtifactTypeProviderTarget {
		return ocispec.Descriptor{}, &ArtifactError{Repository: name, Reference: tag, Reason: fmt.Sprintf("platform manifest %s has artifact type %q, but the index announced %q", d.Digest, at, ArtifactTypeProviderTarget)}
	}
	return zipLayer(name, tag, m.Layers, "provider-target")
}

// zhOfDigest returns the zh: hash that a sha256 layer digest is, or "".
func zhOfDigest(d digest.Digest) hash.Hash {
	if d.Validate() != nil || d.Algorithm() != digest.SHA256 {
		return ""
	}
	b, err := hex.DecodeString(d.Encoded())
	if err != nil || len(b) != 32 {
		return ""
	}
	return hash.NewHash(hash.SchemeZH, [32]byte(b))
}

func (s *Source) fetchProvider(ctx context.Context, name string, repo Repository, p source.ProviderPackage, dir string) (*source.Fetched, error) {
	if p.Platform.IsZero() {
		return nil, errors.New("no target platform given for the provider package")
	}
	tag, index, err := providerIndex(ctx, name, repo, p)
	if err != nil {
		return nil, err
	}
	plats, err := platformManifests(name, tag, index)
	if err != nil {
		return nil, err
	}
	layer, err := platformLayerOf(ctx, name, tag, repo, plats, p)
	if err != nil {
		return nil, err
	}
	origin, err := s.recordsFor(ctx, name, tag, repo, plats, p.Platform, layer)
	if err != nil {
		return nil, err
	}
	sum, h1, err := s.unpackLayer(ctx, repo, layer, dir, p)
	if err != nil {
		return nil, err
	}
	return &source.Fetched{
		Package:  p,
		Dir:      dir,
		Location: name + "@" + layer.Digest.String(),
		Size:     layer.Size,
		Hashes:   []hash.Hash{h1, hash.NewHash(hash.SchemeZH, sum)},
		Origin:   origin,
	}, nil
}

// recordsFor returns the mirror-reported zh: records: the given platform's
// (whose layer is already known), plus every other platform's when
// [Options.AllPlatformChecksums] is set.
func (s *Source) recordsFor(ctx context.Context, name, tag string, repo Repository, plats map[source.Platform]ocispec.Descriptor, want source.Platform, wantLayer ocispec.Descriptor) ([]hash.Record, error) {
	var out []hash.Record
	add := func(plat source.Platform, layer ocispec.Descriptor) {
		if h := zhOfDigest(layer.Digest); h != "" {
			out = append(out, hash.Record{Hash: h, Provenance: hash.Provenance{Mirrors: []string{name}, Platforms: []string{plat.String()}}})
		}
	}
	if !want.IsZero() {
		add(want, wantLayer)
	}
	if s.opts.AllPlatformChecksums {
		keys := make([]source.Platform, 0, len(plats))
		for k := range plats {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i].LessThan(keys[j]) })
		for _, plat := range keys {
			if plat == want {
				continue
			}
			layer, err := platformLayer(ctx, name, tag, repo, plats[plat])
			if err != nil {
				return nil, err
			}
			add(plat, layer)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Provenance.Platforms[0] < out[j].Provenance.Platforms[0] })
	return out, nil
}

func (s *Source) providerChecksums(ctx context.Context, name string, repo Repository, p source.ProviderPackage) ([]hash.Record, error) {
	if p.Platform.IsZero() && !s.opts.AllPlatformChecksums {
		return nil, nil
	}
	tag, index, err := providerIndex(ctx, name, repo, p)
	if err != nil {
		return nil, err
	}
	plats, err := platformManifests(name, tag, index)
	if err != nil {
		return nil, err
	}
	var layer ocispec.Descriptor
	if !p.Platform.IsZero() {
		if layer, err = platformLayerOf(ctx, name, tag, repo, plats, p); err != nil {
			return nil, err
		}
	}
	return s.recordsFor(ctx, name, tag, repo, plats, p.Platform, layer)
}

// platformLayerOf returns the zip layer of the manifest of p's platform in
// an index, or a [*source.PlatformNotSupportedError] when the index has
// none for it (as OpenTofu's OCI mirror source, without a mirror URL).
func platformLayerOf(ctx context.Context, name, tag string, repo Repository, plats map[source.Platform]ocispec.Descriptor, p source.ProviderPackage) (ocispec.Descriptor, error) {
	d, ok := plats[p.Platform]
	if !ok {
		return ocispec.Descriptor{}, &source.PlatformNotSupportedError{Package: p, Err: fmt.Errorf("the index of tag %q has no manifest for %s", tag, p.Platform)}
	}
	return platformLayer(ctx, name, tag, repo, d)
}
