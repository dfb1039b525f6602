// Package ocitest runs a real OCI registry in-process and publishes
// OpenTofu module packages and provider mirrors to it, for tests and demos
// of [github.com/tflock/tflock/source/oci].
//
// The registry is go-containerregistry's pkg/registry (the OCI
// Distribution protocol, in memory) behind an httptest server on a
// loopback address, spoken to over plain HTTP. Artifacts are pushed with
// oras-go, in OpenTofu's formats:
//
//   - a module package is an image manifest with artifactType
//     "application/vnd.opentofu.modulepkg" and one "archive/zip" layer;
//   - a provider version is an image index with artifactType
//     "application/vnd.opentofu.provider" listing one image manifest per
//     platform (artifactType "application/vnd.opentofu.provider-target",
//     platform os and architecture set), each with one "archive/zip" layer.
package ocitest

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	tfaddr "github.com/hashicorp/terraform-registry-address"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/oci"
)

// Server is an in-process OCI registry.
type Server struct {
	srv      *httptest.Server
	host     string
	username string
	password string
}

// ServerOptions configures [New] and [NewServer]. The zero value serves
// anonymously on the listener's address.
type ServerOptions struct {
	// Username and Password, when Username is set, make the registry
	// demand HTTP basic authentication with them (a 401 challenge
	// otherwise), as registries with static accounts do.
	Username, Password string
	// Host is the host name repositories are addressed by
	// ("oci://HOST/name"), such as "oci.example.test", so that addresses
	// and lock files stay the same from run to run; the clients of
	// [Server.Repository] and [Server.SourceOptions] connect it to the
	// listener. Default "": the listener's "127.0.0.1:PORT".
	Host string
}

// New starts a registry for a test and closes it when the test ends.
func New(tb testing.TB, opts ServerOptions) *Server {
	tb.Helper()
	s := NewServer(opts)
	tb.Cleanup(s.Close)
	return s
}

// NewServer starts a registry on a loopback address. Close it when done.
func NewServer(opts ServerOptions) *Server {
	s := &Server{host: opts.Host, username: opts.Username, password: opts.Password}
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	var h http.Handler = reg
	if opts.Username != "" {
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			u, p, ok := r.BasicAuth()
			if !ok || u != s.username || p != s.password {
				w.Header().Set("WWW-Authenticate", `Basic realm="ocitest"`)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnauthorized)
				io.WriteString(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`)
				return
			}
			reg.ServeHTTP(w, r)
		})
	}
	s.srv = httptest.NewServer(h)
	return s
}

// Host returns the name repositories are addressed by: [ServerOptions.Host],
// or the listener's "host:port".
func (s *Server) Host() string {
	if s.host != "" {
		return s.host
	}
	return strings.TrimPrefix(s.srv.URL, "http://")
}

// Client returns an HTTP client that connects every host name to the
// registry's listener.
func (s *Server) Client() *http.Client {
	tr := s.srv.Client().Transport.(*http.Transport).Clone()
	addr := s.srv.Listener.Addr().String()
	var d net.Dialer
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr)
	}
	return &http.Client{Transport: tr}
}

// Close shuts the registry down.
func (s *Server) Close() { s.srv.Close() }

// Repository returns an oras client for "HOST/name" on this registry,
// authenticated when the server demands it, for pushing test artifacts.
func (s *Server) Repository(name string) (*remote.Repository, error) {
	r, err := remote.NewRepository(s.Host() + "/" + name)
	if err != nil {
		return nil, err
	}
	r.PlainHTTP = true
	c := &auth.Client{Client: s.Client(), Cache: auth.NewCache()}
	if s.username != "" {
		c.Credential = auth.StaticCredential(s.Host(), auth.Credential{Username: s.username, Password: s.password})
	}
	r.Client = c
	return r, nil
}

// SourceOptions returns [oci.Options] that reach this registry over plain
// HTTP, with providers mapped by repoOf (nil: no provider mirror).
func (s *Server) SourceOptions(repoOf func(addr string) string) oci.Options {
	o := oci.Options{PlainHTTP: true, HTTPClient: s.Client()}
	if repoOf != nil {
		o.ProviderRepository = ProviderRepositoryFunc(s.Host(), repoOf)
	}
	return o
}

// fixedTime is the timestamp of every zip entry and the manifests' created
// annotation, so that the same content always gives the same digests.
var fixedTime = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// Zip returns a deterministic zip archive of files (name → content),
// entries sorted by name.
func Zip(files map[string]string) ([]byte, error) {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range names {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: n, Method: zip.Deflate, Modified: fixedTime})
		if err != nil {
			return nil, err
		}
		if _, err := io.WriteString(w, files[n]); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// PushManifest pushes an image manifest with the given artifact type whose
// layers are the given blobs (media type → content, in order), and tags
// it. It is the building block for well-formed and malformed artifacts.
func PushManifest(ctx context.Context, target oras.Target, artifactType string, layers []Layer, tags ...string) (ocispec.Descriptor, error) {
	descs := make([]ocispec.Descriptor, 0, len(layers))
	for _, l := range layers {
		d, err := oras.PushBytes(ctx, target, l.MediaType, l.Data)
		if err != nil {
			return ocispec.Descriptor{}, fmt.Errorf("pushing layer: %w", err)
		}
		descs = append(descs, d)
	}
	m, err := oras.PackManifest(ctx, target, oras.PackManifestVersion1_1, artifactType, oras.PackManifestOptions{
		Layers:              descs,
		ManifestAnnotations: map[string]string{ocispec.AnnotationCreated: fixedTime.Format(time.RFC3339)},
	})
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("packing manifest: %w", err)
	}
	for _, t := range tags {
		if err := target.Tag(ctx, m, t); err != nil {
			return ocispec.Descriptor{}, fmt.Errorf("tagging %q: %w", t, err)
		}
	}
	return m, nil
}

// Layer is one blob of a manifest.
type Layer struct {
	// MediaType is the blob's media type, such as a zip package's.
	MediaType string
	// Data is the blob's contents.
	Data []byte
}

// PushModule pushes a module package (the zip archive moduleZip) in
// OpenTofu's format and gives it each of tags. It returns the manifest
// descriptor, whose digest is what a lock file records.
func PushModule(ctx context.Context, target oras.Target, moduleZip []byte, tags ...string) (ocispec.Descriptor, error) {
	return PushManifest(ctx, target, oci.ArtifactTypeModule, []Layer{{MediaType: oci.MediaTypeZip, Data: moduleZip}}, tags...)
}

// PushProvider pushes one provider version in OpenTofu's mirror format:
// a manifest per platform holding that platform's zip, and an index listing
// them, tagged with the version (its "+" spelled "_"). It returns the
// index descriptor.
func PushProvider(ctx context.Context, target oras.Target, version string, zips map[source.Platform][]byte) (ocispec.Descriptor, error) {
	plats := make([]source.Platform, 0, len(zips))
	for p := range zips {
		plats = append(plats, p)
	}
	sort.Slice(plats, func(i, j int) bool { return plats[i].LessThan(plats[j]) })
	var entries []IndexEntry
	for _, p := range plats {
		m, err := PushManifest(ctx, target, oci.ArtifactTypeProviderTarget, []Layer{{MediaType: oci.MediaTypeZip, Data: zips[p]}})
		if err != nil {
			return ocispec.Descriptor{}, err
		}
		entries = append(entries, IndexEntry{Manifest: m, ArtifactType: oci.ArtifactTypeProviderTarget, Platform: p})
	}
	return PushIndex(ctx, target, oci.ArtifactTypeProvider, entries, strings.ReplaceAll(version, "+", "_"))
}

// IndexEntry is one manifest listed in an index.
type IndexEntry struct {
	// Manifest is the descriptor of the manifest listed.
	Manifest ocispec.Descriptor
	// ArtifactType is the manifest's artifact type, as the index entry gives it.
	ArtifactType string
	Platform     source.Platform // zero: no platform object
}

// PushIndex pushes an image index with the given artifact type listing
// entries, and tags it.
func PushIndex(ctx context.Context, target oras.Target, artifactType string, entries []IndexEntry, tags ...string) (ocispec.Descriptor, error) {
	idx := ocispec.Index{
		MediaType:    ocispec.MediaTypeImageIndex,
		ArtifactType: artifactType,
		Manifests:    []ocispec.Descriptor{},
		Annotations:  map[string]string{ocispec.AnnotationCreated: fixedTime.Format(time.RFC3339)},
	}
	idx.SchemaVersion = 2
	for _, e := range entries {
		d := ocispec.Descriptor{MediaType: e.Manifest.MediaType, Digest: e.Manifest.Digest, Size: e.Manifest.Size, ArtifactType: e.ArtifactType}
		if !e.Platform.IsZero() {
			d.Platform = &ocispec.Platform{OS: e.Platform.OS, Architecture: e.Platform.Arch}
		}
		idx.Manifests = append(idx.Manifests, d)
	}
	data, err := json.Marshal(idx)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	d, err := oras.PushBytes(ctx, target, ocispec.MediaTypeImageIndex, data)
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("pushing index: %w", err)
	}
	d.ArtifactType = artifactType
	for _, t := range tags {
		if err := target.Tag(ctx, d, t); err != nil {
			return ocispec.Descriptor{}, fmt.Errorf("tagging %q: %w", t, err)
		}
	}
	return d, nil
}

// ProviderRepositoryFunc returns an [oci.Options.ProviderRepository] that
// maps a provider to "host/" + repoOf(addr), where addr is the provider's
// "hostname/namespace/type" string.
func ProviderRepositoryFunc(host string, repoOf func(addr string) string) func(context.Context, tfaddr.Provider) (string, error) {
	return func(_ context.Context, p tfaddr.Provider) (string, error) {
		return host + "/" + repoOf(p.String()), nil
	}
}
