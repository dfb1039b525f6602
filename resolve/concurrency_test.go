package resolve_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
)

// slowLister answers every package with one version after a pause, and
// records how many calls were in flight at most.
type slowLister struct {
	pause time.Duration

	mu       sync.Mutex
	inFlight int
	max      int
	calls    map[string]int
}

func (l *slowLister) Versions(ctx context.Context, pkg source.Package) ([]source.Available, error) {
	l.mu.Lock()
	l.inFlight++
	l.max = max(l.max, l.inFlight)
	if l.calls == nil {
		l.calls = map[string]int{}
	}
	l.calls[pkg.String()]++
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.inFlight--
		l.mu.Unlock()
	}()
	select {
	case <-time.After(l.pause):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return []source.Available{{Version: versions.MustParse("1.0.0")}}, nil
}

func manyRequirements(n int) []resolve.Requirement {
	var reqs []resolve.Requirement
	for i := range n {
		addr := tfaddr.MustParseProviderSource(fmt.Sprintf("registry.opentofu.org/acme/p%02d", i))
		// Each provider is required twice: it must still be listed once.
		for range 2 {
			reqs = append(reqs, resolve.Requirement{Package: source.ProviderPackage{Addr: addr}})
		}
	}
	return reqs
}

func TestResolveConcurrencyBounded(t *testing.T) {
	l := &slowLister{pause: 20 * time.Millisecond}
	sel, err := resolve.Resolve(context.Background(), manyRequirements(24), l, resolve.Options{Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(sel.Providers) != 24 {
		t.Fatalf("%d picks, want 24", len(sel.Providers))
	}
	if l.max > 4 {
		t.Errorf("%d calls in flight, want at most 4", l.max)
	}
	if l.max < 2 {
		t.Errorf("at most %d call in flight: packages were not listed concurrently", l.max)
	}
	for pkg, n := range l.calls {
		if n != 1 {
			t.Errorf("%s listed %d times", pkg, n)
		}
	}
}

func TestResolveCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := resolve.Resolve(ctx, manyRequirements(3), &slowLister{pause: time.Second}, resolve.Options{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestResolveInvalidRequirements(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  resolve.Requirement
		want string
	}{
		{"no package", resolve.Requirement{}, "requirement 0 (caller): no package"},
		{"zero provider", resolve.Requirement{Package: source.ProviderPackage{}}, "requirement 0 (caller): provider package without an address"},
		{"module without call", resolve.Requirement{Package: source.ModulePackage{Source: "a/b/c"}}, "requirement 0 (caller): module requirement without a call path or source"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := resolve.Resolve(context.Background(), []resolve.Requirement{tc.req}, &slowLister{}, resolve.Options{})
			if err == nil || err.Error() != tc.want {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	// Two requirements for one call with different sources.
	reqs := []resolve.Requirement{
		{Package: source.ModulePackage{Source: "x/a/b"}, Call: "m"},
		{Package: source.ModulePackage{Source: "x/c/d"}, Call: "m"},
	}
	_, err := resolve.Resolve(context.Background(), reqs, &slowLister{}, resolve.Options{})
	if err == nil || !strings.Contains(err.Error(), `module "m": conflicting sources`) {
		t.Errorf("err = %v", err)
	}
}

func TestExplainReasons(t *testing.T) {
	lister := &mapLister{versions: map[string][]versions.Version{
		"registry.opentofu.org/hashicorp/aws":  {versions.MustParse("1.0.0"), versions.MustParse("2.0.0")},
		"registry.opentofu.org/hashicorp/null": {versions.MustParse("3.0.0")},
	}}
	aws := tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/aws")
	null := tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/null")
	builtin := tfaddr.MustParseProviderSource("terraform.io/builtin/terraform")
	reqs := []resolve.Requirement{
		{Package: source.ProviderPackage{Addr: aws}, Constraints: versions.MustParseConstraints(">= 1.0")},
		{Package: source.ProviderPackage{Addr: null}},
		{Package: source.ProviderPackage{Addr: builtin}},
		{Package: source.ModulePackage{Source: "git::https://example.com/x.git", Ref: "v1"}, Call: "x"},
	}
	sel, err := resolve.Resolve(context.Background(), reqs, lister, resolve.Options{UpgradeProviders: []tfaddr.Provider{aws}})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := sel.Explain(&b); err != nil {
		t.Fatal(err)
	}
	want := `provider registry.opentofu.org/hashicorp/aws 2.0.0: upgrade asked: newest of 2 available versions allowed by >= 1.0.0
  caller requires >= 1.0.0

provider registry.opentofu.org/hashicorp/null 3.0.0: newest of 1 available versions allowed by any version
  caller requires any version

provider terraform.io/builtin/terraform: built-in provider; not looked up, not locked
  caller requires any version

module "x" git::https://example.com/x.git?ref=v1: pinned by its source address; no version to resolve
  caller requires any version

`
	if got := b.String(); got != want {
		t.Errorf("Explain:\n%s\nwant:\n%s", got, want)
	}
}

// gatedLister lists every provider at once, except the one named slow,
// which waits until release is closed.
type gatedLister struct {
	mapLister
	slow    string
	release chan struct{}
}

func (l *gatedLister) Versions(ctx context.Context, pkg source.Package) ([]source.Available, error) {
	if p, ok := pkg.(source.ProviderPackage); ok && p.Addr.String() == l.slow {
		select {
		case <-l.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return l.mapLister.Versions(ctx, pkg)
}

func TestProviderPickedBeforeEveryListing(t *testing.T) {
	v := versions.MustParse
	lock := lockfile.New()
	null := tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/null")
	lock.SetProvider(&lockfile.ProviderLock{Addr: null, Version: v("1.0.0")})
	l := &gatedLister{
		mapLister: mapLister{versions: map[string][]versions.Version{
			"registry.opentofu.org/hashicorp/aws":    {v("1.0.0"), v("1.5.0"), v("2.0.0")},
			"registry.opentofu.org/hashicorp/null":   {v("1.0.0"), v("2.0.0")},
			"registry.opentofu.org/hashicorp/random": {v("3.0.0")},
		}},
		slow:    "registry.opentofu.org/hashicorp/random",
		release: make(chan struct{}),
	}
	aws := tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/aws")
	random := tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/random")
	builtin := tfaddr.MustParseProviderSource("terraform.io/builtin/terraform")
	reqs := []resolve.Requirement{
		{Package: source.ProviderPackage{Addr: aws}, Constraints: versions.MustParseConstraints("~> 1.0")},
		{Package: source.ProviderPackage{Addr: null}},
		{Package: source.ProviderPackage{Addr: random}},
		{Package: source.ProviderPackage{Addr: builtin}},
	}
	var mu sync.Mutex
	early := map[tfaddr.Provider]resolve.ProviderPick{}
	opts := resolve.Options{Lock: lock, ProviderPicked: func(ctx context.Context, p resolve.ProviderPick) {
		mu.Lock()
		defer mu.Unlock()
		if _, dup := early[p.Addr]; dup {
			t.Errorf("%s picked twice", p.Addr)
		}
		early[p.Addr] = p
		if len(early) == 2 {
			// aws and null are known while random is still being listed.
			close(l.release)
		}
	}}
	done := make(chan struct{})
	var sel *resolve.Selection
	var err error
	go func() {
		defer close(done)
		sel, err = resolve.Resolve(context.Background(), reqs, l, opts)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Resolve did not return: the picks of the listed providers were not reported before every listing ended")
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(early) != 3 {
		t.Fatalf("%d early picks, want 3 (the built-in provider is not listed)", len(early))
	}
	for _, p := range sel.Providers {
		e, ok := early[p.Addr]
		if p.Reason == resolve.Builtin {
			if ok {
				t.Errorf("built-in %s reported", p.Addr)
			}
			continue
		}
		if !ok || e.Version != p.Version || e.Reason != p.Reason || e.Locked != p.Locked {
			t.Errorf("%s: early pick %+v, selection %+v", p.Addr, e, p)
		}
	}
	if got := early[aws].Version; got != v("1.5.0") {
		t.Errorf("aws picked %s, want 1.5.0", got)
	}
	if got := early[null]; got.Version != v("1.0.0") || got.Reason != resolve.Locked {
		t.Errorf("null picked %s (%v), want the locked 1.0.0", got.Version, got.Reason)
	}
}
