package oci

import (
	"context"
	"errors"
	"fmt"
	"os"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
)

// Archive is what [Source.FetchArchive] brings: a package's zip, not
// extracted.
type Archive struct {
	// Path is the zip file written.
	Path string
	// Location is "host/repository@digest" of the layer (no credentials).
	Location string
	// Size is the zip's size in bytes.
	Size int64
	// ZH is the zh: of the zip: the SHA-256 of its bytes, which is the
	// layer's digest, checked while reading.
	ZH hash.Hash
	// Pin is the digest of the manifest holding the layer: for a module
	// what a lock file records; for a provider its platform manifest.
	Pin string
	// Annotations are those of a module's manifest (nil for a provider).
	Annotations map[string]string
}

// FetchArchive writes the zip layer of pkg, selected as [Source.Fetch]
// selects it (a module by Ref, version or "latest"; a provider by its
// version's index and its platform's manifest), to the file path, without
// extracting it. Every manifest and the layer are checked against their
// digests and sizes while read and the layer is bounded by
// [Options.Limits]. The file is written whole or not at all: it is
// downloaded beside path and renamed into place.
func (s *Source) FetchArchive(ctx context.Context, pkg source.Package, path string) (*Archive, error) {
	name, repo, err := s.target(ctx, pkg)
	if err != nil {
		return nil, s.wrap(name, pkg, err)
	}
	a, err := s.fetchArchive(ctx, name, repo, pkg, path)
	if err != nil {
		return nil, s.wrap(name, pkg, err)
	}
	return a, nil
}

func (s *Source) fetchArchive(ctx context.Context, name string, repo Repository, pkg source.Package, path string) (*Archive, error) {
	var layer, holder ocispec.Descriptor
	var annotations map[string]string
	switch p := pkg.(type) {
	case source.ModulePackage:
		ref := moduleReference(p)
		desc, m, err := fetchReference(ctx, repo, ref)
		if err != nil {
			return nil, err
		}
		if p.Pin != "" && desc.Digest.String() != p.Pin {
			return nil, &MovedTagError{Repository: name, Tag: ref, Locked: p.Pin, Current: desc.Digest.String()}
		}
		annotations = m.Annotations
		if layer, err = moduleLayer(name, ref, desc, m); err != nil {
			return nil, err
		}
		holder = desc
	case source.ProviderPackage:
		if p.Platform.IsZero() {
			return nil, errors.New("no target platform given for the provider package")
		}
		if p.Version.IsZero() {
			return nil, errors.New("no provider version given")
		}
		tag := versions.Tag(p.Version, versions.OCITag)
		desc, m, err := fetchReference(ctx, repo, tag)
		if err != nil {
			return nil, err
		}
		if _, _, err := checkProviderIndex(name, tag, desc, m); err != nil {
			return nil, err
		}
		index := m
		plats, err := platformManifests(name, tag, index)
		if err != nil {
			return nil, err
		}
		if layer, err = platformLayerOf(ctx, name, tag, repo, plats, p); err != nil {
			return nil, err
		}
		holder = plats[p.Platform]
	default:
		return nil, fmt.Errorf("%w: unsupported package type %T", source.ErrNotFound, pkg)
	}
	return s.writeArchive(ctx, name, repo, pkg, layer, holder, annotations, path)
}

// writeArchive downloads layer, held by the manifest holder, to the file
// path: beside it, then renamed into place.
func (s *Source) writeArchive(ctx context.Context, name string, repo Repository, pkg source.Package, layer, holder ocispec.Descriptor, annotations map[string]string, path string) (*Archive, error) {
	f, sum, err := s.downloadBlob(ctx, repo, layer, path, pkg)
	if err != nil {
		return nil, err
	}
	tmp := f.Name()
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return nil, err
	}
	return &Archive{
		Path:        path,
		Location:    name + "@" + layer.Digest.String(),
		Size:        layer.Size,
		ZH:          hash.NewHash(hash.SchemeZH, sum),
		Pin:         holder.Digest.String(),
		Annotations: annotations,
	}, nil
}

// OpenRepository returns the client [NewSource] would use by default for
// repo ("host/repository") under opts: HTTPS (plain HTTP with
// [Options.PlainHTTP]) through [Options.HTTPClient], authenticated with the
// credentials [Options.Credentials] or [Options.ConfigFiles] find. Unlike
// [Repository], it can also push. [Options.Repository] is not consulted.
func OpenRepository(ctx context.Context, opts Options, repo string) (*remote.Repository, error) {
	if err := checkRepository(repo); err != nil {
		return nil, err
	}
	r, err := NewSource(opts).openRemote(ctx, repo)
	if err != nil {
		return nil, err
	}
	return r.(*remote.Repository), nil
}
