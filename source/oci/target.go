package oci

import (
	"context"

	"github.com/tflock/tflock/source"
)

// FetchTargetArchive writes the zip layer of the provider-target manifest
// (one platform's manifest of a provider index) that ref, a tag or digest
// in the repository of provider p, refers to, to the file path, as
// [Source.FetchArchive] does. The manifest must be an image manifest of
// artifact type [ArtifactTypeProviderTarget] with one zip layer; it and
// the layer are checked against their digests and sizes while read, and
// the layer is bounded by [Options.Limits]. Nothing binds the manifest to
// p's version or platform but ref: the caller verifies the zip as it
// verifies any download. A ref that does not exist wraps
// [source.ErrVersionNotFound] (or [source.ErrNotFound] when the
// repository does not exist).
func (s *Source) FetchTargetArchive(ctx context.Context, p source.ProviderPackage, ref, path string) (*Archive, error) {
	name, repo, err := s.target(ctx, p)
	if err != nil {
		return nil, s.wrap(name, p, err)
	}
	desc, m, err := fetchReference(ctx, repo, ref)
	if err != nil {
		return nil, s.wrap(name, p, err)
	}
	layer, err := targetLayer(name, ref, desc, m)
	if err != nil {
		return nil, s.wrap(name, p, err)
	}
	a, err := s.writeArchive(ctx, name, repo, p, layer, desc, nil, path)
	if err != nil {
		return nil, s.wrap(name, p, err)
	}
	return a, nil
}
