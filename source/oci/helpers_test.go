package oci_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/mod/sumdb/dirhash"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source/oci/ocitest"
)

// newServer starts an in-process registry for one test.
func newServer(t *testing.T, opts ocitest.ServerOptions) *ocitest.Server {
	t.Helper()
	s := ocitest.NewServer(opts)
	t.Cleanup(s.Close)
	return s
}

func repoOf(t *testing.T, s *ocitest.Server, name string) *remote.Repository {
	t.Helper()
	r, err := s.Repository(name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustZip(t *testing.T, files map[string]string) []byte {
	t.Helper()
	z, err := ocitest.Zip(files)
	if err != nil {
		t.Fatal(err)
	}
	return z
}

// h1OfZip computes the h1: of a zip as dirhash defines it for archives.
func h1OfZip(t *testing.T, z []byte) hash.Hash {
	t.Helper()
	p := filepath.Join(t.TempDir(), "p.zip")
	if err := os.WriteFile(p, z, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := dirhash.HashZip(p, dirhash.Hash1)
	if err != nil {
		t.Fatal(err)
	}
	return hash.MustParseHash(s)
}

// pushRaw pushes raw manifest JSON with the given media type and tags it.
func pushRaw(t *testing.T, ctx context.Context, target oras.Target, mediaType string, v any, tag string) ocispec.Descriptor {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	d, err := oras.TagBytes(ctx, target, mediaType, data, tag)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// readTree returns the files under dir, name → content.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// isEmptyOrMissing reports whether dir holds nothing.
func isEmptyOrMissing(t *testing.T, dir string) bool {
	t.Helper()
	f, err := os.Open(dir)
	if os.IsNotExist(err) {
		return true
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = f.Readdirnames(1)
	return err == io.EOF
}

// tamperRepo is a Repository decorator that corrupts one byte of whatever
// it fetches for a digest, as a broken or malicious registry would.
type tamperRepo struct {
	oci interface {
		Resolve(ctx context.Context, reference string) (ocispec.Descriptor, error)
		Fetch(ctx context.Context, target ocispec.Descriptor) (io.ReadCloser, error)
		Tags(ctx context.Context, last string, fn func(tags []string) error) error
	}
	digest string
}

func (r tamperRepo) Resolve(ctx context.Context, ref string) (ocispec.Descriptor, error) {
	return r.oci.Resolve(ctx, ref)
}

func (r tamperRepo) Tags(ctx context.Context, last string, fn func([]string) error) error {
	return r.oci.Tags(ctx, last, fn)
}

func (r tamperRepo) Fetch(ctx context.Context, d ocispec.Descriptor) (io.ReadCloser, error) {
	rc, err := r.oci.Fetch(ctx, d)
	if err != nil || d.Digest.String() != r.digest {
		return rc, err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return nil, err
	}
	if len(b) > 0 {
		b[len(b)/2] ^= 0xff
	}
	return io.NopCloser(bytes.NewReader(b)), nil
}

var versioned2 = specs.Versioned{SchemaVersion: 2}

func pushBlob(ctx context.Context, target oras.Target, mediaType string, data []byte) (ocispec.Descriptor, error) {
	return oras.PushBytes(ctx, target, mediaType, data)
}
