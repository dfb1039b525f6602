package registry_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/tflock/tflock/source/registry/registrytest"
)

// Attack: the first caller of a package's download response and
// SHA256SUMS gives up while the registry is slow; callers waiting for
// the same answers, with live contexts, get them rather than its
// cancellation.
func TestAttackCancelledFirstCallerNotShared(t *testing.T) {
	srv := registrytest.New(t, smallFixtures, registrytest.Options{Latency: 50 * time.Millisecond})
	src, _ := newSource(srv, nil)
	pkg := providerPkg(t, "registry.example.test/acme/big", "1.0.0", "linux_amd64")
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var firstErr error
	wg.Go(func() { _, firstErr = src.Checksums(ctx, pkg) })
	time.Sleep(10 * time.Millisecond)
	errs := make([]error, 3)
	for i := range errs {
		wg.Go(func() { _, errs[i] = src.Checksums(context.Background(), pkg) })
	}
	time.Sleep(20 * time.Millisecond)
	cancel()
	wg.Wait()
	if !errors.Is(firstErr, context.Canceled) {
		t.Logf("first caller: %v", firstErr)
	}
	for i, err := range errs {
		if err != nil {
			t.Errorf("waiter %d: %v, want the answer", i, err)
		}
	}
}

// Attack: a registry that fails (503 beyond the retries) is asked again
// by the next call of the same Source: no failure is kept for the run.
func TestAttackTransientFailureNotKept(t *testing.T) {
	srv := registrytest.New(t, smallFixtures, registrytest.Options{FailFirst: 4})
	src, _ := newSource(srv, nil)
	pkg := providerPkg(t, "registry.example.test/acme/big", "1.0.0", "linux_amd64")
	var err error
	for range 30 {
		before := srv.Requests()
		if _, err = src.Checksums(context.Background(), pkg); err == nil {
			return
		}
		if srv.Requests() == before {
			t.Fatalf("a failure was kept: the call made no request (%v)", err)
		}
	}
	t.Fatalf("never answered: %v", err)
}
