package oci

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
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
	vr := content.NewVerifyReader(rc, desc)
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
