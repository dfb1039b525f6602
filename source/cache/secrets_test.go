package cache_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/internal/leaktest"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
)

// TestCredentialFreeIdentity: a module whose address carries credentials
// (user information, an "sshkey" argument) is cached under its
// credential-free address. No file of the cache names or holds them, and
// the same address with other credentials, or none, is the same package:
// found in the index without a fetch.
func TestCredentialFreeIdentity(t *testing.T) {
	token := leaktest.Secret(t, "token")
	key := leaktest.Secret(t, "sshkey")
	check := leaktest.New(t, token, key)
	dir := t.TempDir()
	var events []source.Event
	c, err := cache.Open(dir, cache.Options{Events: source.EventsFunc(func(e source.Event) { events = append(events, e) })})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pin := "0123456789abcdef0123456789abcdef01234567"
	withCreds := source.ModulePackage{Source: "git::https://alice:" + token + "@git.example.test/net.git?sshkey=" + key, Ref: "v1.0.0", Pin: pin}
	var calls atomic.Int32
	fetch := func(ctx context.Context, dir string) (*source.Fetched, error) {
		calls.Add(1)
		writeFiles(t, dir, map[string]string{"main.tf": "# net\n"})
		// A fetcher that reports its location with credentials: the
		// cache keeps it without them.
		return &source.Fetched{Dir: dir, Location: "https://alice:" + token + "@git.example.test/net.git", Pin: pin}, nil
	}
	e, hit, err := c.Fill(ctx, withCreds, nil, fetch)
	if err != nil || hit {
		t.Fatalf("first fill: hit=%v err=%v", hit, err)
	}
	if e.Location != "https://git.example.test/net.git" {
		t.Errorf("entry location %q, want it without credentials", e.Location)
	}
	check.Tree(dir)

	// The same repository with other credentials, and without any: the
	// index finds the entry (no h1: is given), nothing is fetched.
	for _, src := range []string{
		"git::https://bob:other@git.example.test/net.git",
		"git::https://git.example.test/net.git",
	} {
		other := source.ModulePackage{Source: src, Ref: "v1.0.0", Pin: pin}
		got, ok, err := c.Lookup(ctx, other, nil)
		if err != nil || !ok || got.H1 != e.H1 || got.Location != e.Location {
			t.Errorf("%s: lookup = %+v, %v, %v; want the entry of %s", src, got, ok, err, e.H1)
		}
		if _, hit, err := c.Fill(ctx, other, nil, fetch); err != nil || !hit {
			t.Errorf("%s: fill hit=%v err=%v, want a hit", src, hit, err)
		}
	}
	if calls.Load() != 1 {
		t.Errorf("%d fetches, want 1", calls.Load())
	}
	for _, ev := range events {
		check.Text("the "+ev.Kind.String()+" event", ev.Package.String()+" "+ev.Package.ForDisplay()+" "+ev.Detail)
	}
	if len(events) == 0 {
		t.Error("no cache hit events")
	}

	// A mismatch names the package without its credentials.
	wrong := source.ModulePackage{Source: withCreds.Source, Ref: "v2.0.0", Pin: "fedcba9876543210fedcba9876543210fedcba98"}
	_, _, err = c.Fill(ctx, wrong, []hash.Hash{hash.NewHash(hash.SchemeH1, [32]byte{7})}, func(ctx context.Context, dir string) (*source.Fetched, error) {
		writeFiles(t, dir, map[string]string{"main.tf": "# other\n"})
		return &source.Fetched{Dir: dir, Location: "https://alice:" + token + "@git.example.test/net.git"}, nil
	})
	if !errors.Is(err, source.ErrChecksumMismatch) {
		t.Fatalf("got %v, want a checksum mismatch", err)
	}
	check.Text("the mismatch error", err.Error())
	check.Tree(dir)
}
