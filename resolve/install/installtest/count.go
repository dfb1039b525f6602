package installtest

import (
	"context"
	"io"
	"sync/atomic"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/tflock/tflock/source/oci"
)

func (c *counter) add()        { atomic.AddInt64(&c.n, 1) }
func (c *counter) load() int64 { return atomic.LoadInt64(&c.n) }

func (w *World) ociRequests() int64 { return w.ociCount.load() }

// countingRepo counts the calls made to an OCI repository.
type countingRepo struct {
	oci.Repository
	n *counter
}

func (r *countingRepo) Resolve(ctx context.Context, ref string) (ocispec.Descriptor, error) {
	r.n.add()
	return r.Repository.Resolve(ctx, ref)
}

func (r *countingRepo) Fetch(ctx context.Context, d ocispec.Descriptor) (io.ReadCloser, error) {
	r.n.add()
	return r.Repository.Fetch(ctx, d)
}

func (r *countingRepo) Tags(ctx context.Context, last string, fn func([]string) error) error {
	r.n.add()
	return r.Repository.Tags(ctx, last, fn)
}
