package cache_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
)

// A lock file lists the hashes of every platform of a provider version
// together, so a cached provider entry named by one of them must not serve
// another platform (the regression: a normal run after a multi-platform
// "providers lock" installed the other platform's executable).
func TestProviderLookupByHashNeedsItsOwnPlatform(t *testing.T) {
	c, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var calls atomic.Int32
	darwin := testPkg
	darwin.Platform = source.Platform{OS: "darwin", Arch: "arm64"}
	linux := testPkg
	linux.Platform = source.Platform{OS: "linux", Arch: "amd64"}
	e, _, err := c.Fill(ctx, darwin, nil, countingFetch(t, map[string]string{"terraform-provider-x": "darwin"}, &calls))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := c.Lookup(ctx, linux, []hash.Hash{e.H1}); err != nil || ok {
		t.Fatalf("lookup of the linux package by the darwin package's h1: ok=%v err=%v, want a miss", ok, err)
	}
	if got, ok, err := c.Lookup(ctx, darwin, []hash.Hash{e.H1}); err != nil || !ok || got.Dir != e.Dir {
		t.Fatalf("lookup of the darwin package by its own h1: ok=%v err=%v", ok, err)
	}
	// Fill for linux fetches, even with the darwin h1: among the wanted
	// hashes, and stores the linux package beside it.
	want := []hash.Hash{e.H1, referenceH1(t, map[string]string{"terraform-provider-x": "linux"})}
	l, hit, err := c.Fill(ctx, linux, want, countingFetch(t, map[string]string{"terraform-provider-x": "linux"}, &calls))
	if err != nil || hit || l.H1 == e.H1 {
		t.Fatalf("fill of the linux package: hit=%v h1=%s err=%v, want a fetch of its own package", hit, l.H1, err)
	}
	if calls.Load() != 2 {
		t.Fatalf("%d fetches, want 2", calls.Load())
	}
}
