package oci

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"

	"github.com/tflock/tflock/source"
)

// The artifact and media types of OpenTofu's OCI formats.
const (
	// ArtifactTypeModule is the artifactType of an OpenTofu module package
	// manifest.
	ArtifactTypeModule = "application/vnd.opentofu.modulepkg"
	// ArtifactTypeProvider is the artifactType of the image index that a
	// provider version's tag refers to.
	ArtifactTypeProvider = "application/vnd.opentofu.provider"
	// ArtifactTypeProviderTarget is the artifactType of each per-platform
	// manifest in a provider index.
	ArtifactTypeProviderTarget = "application/vnd.opentofu.provider-target"
	// MediaTypeZip is the media type of the one package layer of a module
	// or provider-target manifest.
	MediaTypeZip = "archive/zip"
)

// MaxManifestSize is the largest manifest this package reads: 4 MiB, the
// limit the OCI Distribution specification recommends registries accept.
const MaxManifestSize = 4 << 20

// manifestDoc is an image manifest or an image index: the fields of both.
type manifestDoc struct {
	MediaType    string               `json:"mediaType"`
	ArtifactType string               `json:"artifactType"`
	Config       *ocispec.Descriptor  `json:"config"`
	Layers       []ocispec.Descriptor `json:"layers"`
	Manifests    []ocispec.Descriptor `json:"manifests"`
	Annotations  map[string]string    `json:"annotations"`
}

// artifactType returns the manifest's artifact type, falling back to the
// config media type as the OCI image specification says for manifests
// that predate the artifactType field.
func (m *manifestDoc) artifactType() string {
	if m.ArtifactType != "" {
		return m.ArtifactType
	}
	if m.Config != nil && m.Config.MediaType != ocispec.MediaTypeImageConfig && m.Config.MediaType != ocispec.MediaTypeEmptyJSON {
		return m.Config.MediaType
	}
	return ""
}

// kind returns the manifest's media type, from the document or else from
// the descriptor it was fetched by.
func (m *manifestDoc) kind(desc ocispec.Descriptor) string {
	if m.MediaType != "" {
		return m.MediaType
	}
	return desc.MediaType
}

// fetchManifest reads the manifest desc describes, refusing more than
// [MaxManifestSize] bytes and checking size and digest.
func fetchManifest(ctx context.Context, repo Repository, desc ocispec.Descriptor) (*manifestDoc, error) {
	if desc.Size > MaxManifestSize || desc.Size < 0 {
		return nil, fmt.Errorf("manifest %s: %w (it has %d bytes)", desc.Digest, ErrManifestTooLarge, desc.Size)
	}
	rc, err := repo.Fetch(ctx, desc)
	if err != nil {
		return nil, fmt.Errorf("fetching manifest %s: %w", desc.Digest, err)
	}
	defer rc.Close()
	return readManifest(rc, desc)
}

// readManifest reads the manifest desc describes from r, checking size
// and digest.
func readManifest(r io.Reader, desc ocispec.Descriptor) (*manifestDoc, error) {
	if desc.Size > MaxManifestSize || desc.Size < 0 {
		return nil, fmt.Errorf("manifest %s: %w (it has %d bytes)", desc.Digest, ErrManifestTooLarge, desc.Size)
	}
	vr := content.NewVerifyReader(r, desc)
	data, err := io.ReadAll(vr)
	if err != nil {
		return nil, fmt.Errorf("reading manifest %s: %w", desc.Digest, err)
	}
	if err := vr.Verify(); err != nil {
		return nil, fmt.Errorf("manifest %s does not match its digest or size: %w", desc.Digest, err)
	}
	var m manifestDoc
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("manifest %s is not valid JSON: %v", desc.Digest, err)
	}
	return &m, nil
}

// referenceFetcher is the part of *remote.Repository that reads a manifest
// by tag in one request (a GET, where Resolve and Fetch take a HEAD and a
// GET).
type referenceFetcher interface {
	FetchReference(ctx context.Context, reference string) (ocispec.Descriptor, io.ReadCloser, error)
}

// fetchReference resolves ref and reads its manifest: in one request when
// repo can, else by [resolve] and [fetchManifest]. Either way the content
// is checked against the digest and size the registry states for it, and
// bounded by [MaxManifestSize].
func fetchReference(ctx context.Context, repo Repository, ref string) (ocispec.Descriptor, *manifestDoc, error) {
	rf, ok := repo.(referenceFetcher)
	if !ok {
		desc, err := resolve(ctx, repo, ref)
		if err != nil {
			return desc, nil, err
		}
		m, err := fetchManifest(ctx, repo, desc)
		return desc, m, err
	}
	desc, rc, err := rf.FetchReference(ctx, ref)
	if err != nil {
		if errors.Is(classify(err, source.ErrNotFound), source.ErrNotFound) {
			// Tell a missing reference from a missing repository.
			desc, err := resolve(ctx, repo, ref)
			if err == nil {
				err = fmt.Errorf("fetching %q: the registry did not serve the manifest it resolves", ref)
			}
			return desc, nil, err
		}
		return desc, nil, fmt.Errorf("fetching %q: %w", ref, err)
	}
	defer rc.Close()
	m, err := readManifest(rc, desc)
	return desc, m, err
}
