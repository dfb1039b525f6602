package oci

import (
	"context"
	"fmt"
	"io"
	"strings"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/address"
)

// Repository is the part of an OCI repository this package reads: the
// subset of oras-go methods it needs. Both *remote.Repository (a registry
// over the OCI Distribution protocol) and *oci.Store from
// oras.land/oras-go/v2/content/oci (an OCI image layout on disk) satisfy it.
//
// Fetch need not verify what it returns: this package checks every size
// and digest itself while reading.
type Repository interface {
	// Resolve returns the descriptor a tag or digest refers to.
	Resolve(ctx context.Context, reference string) (ocispec.Descriptor, error)
	// Fetch returns the content of a manifest or blob.
	Fetch(ctx context.Context, target ocispec.Descriptor) (io.ReadCloser, error)
	// Tags lists the repository's tags, a page at a time, starting after
	// last ("" for the start).
	Tags(ctx context.Context, last string, fn func(tags []string) error) error
}

var (
	_ Repository = (*remote.Repository)(nil)
)

// moduleRepository returns the repository reference ("host/repository")
// of a module package whose address ([source.ModulePackage.Address]) is a
// canonical OCI module package address ("oci://host/repository").
func moduleRepository(p source.ModulePackage) (string, error) {
	src := p.Source
	ms, err := p.Address()
	if err != nil {
		return "", err
	}
	r, ok := ms.(address.Remote)
	if !ok || r.Kind != address.KindOCI {
		return "", fmt.Errorf("module source %q is not an OCI address: it must start with \"oci://\"", src)
	}
	rest, _ := strings.CutPrefix(r.URL, "oci://")
	if r.Subdir != "" || r.Address != r.URL || r.URL != src {
		return "", fmt.Errorf("module source %q is not a canonical OCI package address: leave out the subdirectory, tag and digest", src)
	}
	if err := checkRepository(rest); err != nil {
		return "", fmt.Errorf("module source %q: %w", src, err)
	}
	return rest, nil
}

// checkRepository validates "host/repository" as oras does.
func checkRepository(repo string) error {
	ref, err := registry.ParseReference(repo)
	if err != nil {
		return fmt.Errorf("invalid OCI repository %q: %w", repo, err)
	}
	if ref.Reference != "" || ref.Repository == "" {
		return fmt.Errorf("invalid OCI repository %q: it must have the form HOST/NAME, without tag or digest", repo)
	}
	return nil
}

// openRemote is the default [Options.Repository]: a registry client over
// HTTPS (or plain HTTP when the options allow it) that authenticates with
// the credentials the options find for the repository.
func (s *Source) openRemote(ctx context.Context, repo string) (Repository, error) {
	r, err := remote.NewRepository(repo)
	if err != nil {
		return nil, fmt.Errorf("invalid OCI repository %q: %w", repo, err)
	}
	r.PlainHTTP = s.opts.PlainHTTP
	client := &auth.Client{
		Client: s.opts.HTTPClient,
		Cache:  auth.NewCache(),
		Credential: func(ctx context.Context, hostport string) (auth.Credential, error) {
			c, err := s.credential(ctx, repo)
			if err != nil {
				return auth.EmptyCredential, err
			}
			return auth.Credential{Username: c.Username, Password: c.Password, RefreshToken: c.IdentityToken, AccessToken: c.AccessToken}, nil
		},
	}
	if s.opts.UserAgent != "" {
		client.SetUserAgent(s.opts.UserAgent)
	}
	r.Client = client
	return r, nil
}
