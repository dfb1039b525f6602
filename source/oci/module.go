package oci

import (
	"context"
	"fmt"
	"strings"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
)

// defaultModuleTag is the tag a module source without tag, digest or
// version refers to, as in OpenTofu.
const defaultModuleTag = "latest"

// moduleReference returns the tag or digest that selects module p. A
// module with neither ref nor version follows "latest", which moves on by
// design: when a lock pinned it (p.Pin), the pinned digest is fetched, as
// a git default branch is fetched at its locked commit.
func moduleReference(p source.ModulePackage) string {
	switch {
	case p.Ref != "":
		return p.Ref
	case !p.Version.IsZero():
		return versions.Tag(p.Version, versions.OCITag)
	case p.Pin != "" && isDigest(p.Pin):
		return p.Pin
	}
	return defaultModuleTag
}

// isDigest reports whether ref is a digest ("sha256:...") rather than a tag.
func isDigest(ref string) bool {
	_, err := digest.Parse(ref)
	return err == nil
}

func (s *Source) fetchModule(ctx context.Context, name string, repo Repository, p source.ModulePackage, dir string) (*source.Fetched, error) {
	ref := moduleReference(p)
	if p.Pin != "" && !isDigest(p.Pin) {
		return nil, fmt.Errorf("the locked digest %q is not a valid OCI digest such as \"sha256:...\"", p.Pin)
	}
	desc, err := resolve(ctx, repo, ref)
	if err != nil {
		return nil, err
	}
	if p.Pin != "" && desc.Digest.String() != p.Pin {
		if isDigest(ref) {
			return nil, fmt.Errorf("%w: the source selects digest %s but the lock file records %s", source.ErrChecksumMismatch, ref, p.Pin)
		}
		return nil, &MovedTagError{Repository: name, Tag: ref, Locked: p.Pin, Current: desc.Digest.String()}
	}
	m, err := fetchManifest(ctx, repo, desc)
	if err != nil {
		return nil, err
	}
	layer, err := moduleLayer(name, ref, desc, m)
	if err != nil {
		return nil, err
	}
	_, h1, err := s.unpackLayer(ctx, repo, layer, dir, p)
	if err != nil {
		return nil, err
	}
	return &source.Fetched{
		Package:  p,
		Dir:      dir,
		Location: "oci://" + name + "@" + desc.Digest.String(),
		Size:     layer.Size,
		Hashes:   []hash.Hash{h1},
		Pin:      desc.Digest.String(),
	}, nil
}

// moduleLayer checks that m is an OpenTofu module package and returns its
// zip layer.
func moduleLayer(name, ref string, desc ocispec.Descriptor, m *manifestDoc) (ocispec.Descriptor, error) {
	fail := func(format string, args ...any) (ocispec.Descriptor, error) {
		return ocispec.Descriptor{}, &ArtifactError{Repository: name, Reference: ref, Reason: fmt.Sprintf(format, args...)}
	}
	at := m.artifactType()
	switch {
	case at == ArtifactTypeProvider || at == ArtifactTypeProviderTarget:
		return fail("the artifact is an OpenTofu provider package, not a module package")
	case m.kind(desc) == ocispec.MediaTypeImageIndex:
		return fail("the reference selects an image index, but a module package must be a single image manifest with artifactType %q", ArtifactTypeModule)
	case m.kind(desc) != ocispec.MediaTypeImageManifest:
		return fail("unsupported manifest media type %q: a module package must be an image manifest", m.kind(desc))
	case at == "":
		return fail("the manifest has no artifact type; is this a container image rather than an OpenTofu module package (artifactType %q)?", ArtifactTypeModule)
	case at != ArtifactTypeModule:
		return fail("unsupported artifact type %q: a module package has artifactType %q", at, ArtifactTypeModule)
	}
	return zipLayer(name, ref, m.Layers, "module package")
}

// zipLayer returns the one archive/zip layer of a manifest.
func zipLayer(name, ref string, layers []ocispec.Descriptor, what string) (ocispec.Descriptor, error) {
	var found []ocispec.Descriptor
	var others []string
	for _, l := range layers {
		if l.MediaType == MediaTypeZip {
			found = append(found, l)
		} else {
			others = append(others, l.MediaType)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		reason := fmt.Sprintf("the %s manifest has no layer of media type %q", what, MediaTypeZip)
		if len(others) > 0 {
			reason += fmt.Sprintf(" (it has layers of types %s; it might be meant for another tool or another version of OpenTofu)", strings.Join(others, ", "))
		}
		return ocispec.Descriptor{}, &ArtifactError{Repository: name, Reference: ref, Reason: reason}
	}
	return ocispec.Descriptor{}, &ArtifactError{Repository: name, Reference: ref, Reason: fmt.Sprintf("the %s manifest is ambiguous: it has %d layers of media type %q and must have exactly one", what, len(found), MediaTypeZip)}
}
