package cache_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/oci/ocitest"
)

// monorepo is one package that two registry modules deliver, each from
// its own subdirectory.
var monorepo = map[string]string{"main.tf": "# root\n", "modules/x/main.tf": "# x\n", "modules/y/main.tf": "# y\n"}

var (
	modX = source.ModulePackage{Source: "registry.example.test/acme/x/aws", Version: versions.MustParse("1.0.0"), Located: true}
	modY = source.ModulePackage{Source: "registry.example.test/acme/y/aws", Version: versions.MustParse("1.0.0"), Located: true}
)

// locatedFetch is an origin delivering monorepo, its location naming sub.
func locatedFetch(t *testing.T, sub string, calls *atomic.Int32) cache.FetchFunc {
	return func(ctx context.Context, dir string) (*source.Fetched, error) {
		calls.Add(1)
		writeFiles(t, dir, monorepo)
		return &source.Fetched{Dir: dir, Subdir: sub}, nil
	}
}

func bind(m source.ModulePackage, sub string) source.ModulePackage {
	m.Subdir = sub
	return m
}

// Two modules of one package: a local cache filled by another project
// (module x) serves module y, found by the lock's h1:, from y's own
// subdirectory, the one y's lock binds.
func TestMonorepoLocalCacheKeepsEachSubdir(t *testing.T) {
	ctx := context.Background()
	c, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	ex, _, err := c.Fill(ctx, modX, nil, locatedFetch(t, "modules/x", &calls))
	if err != nil || ex.Subdir != "modules/x" {
		t.Fatalf("fill x: %v, subdir %q", err, ex.Subdir)
	}
	ey, hit, err := c.Fill(ctx, bind(modY, "modules/y"), []hash.Hash{ex.H1}, noFetch(t))
	if err != nil || !hit || ey.Subdir != "modules/y" || ey.Dir != ex.Dir {
		t.Fatalf("y from the warm cache: hit=%v subdir=%q err=%v", hit, ey.Subdir, err)
	}
	// Bound to the package root (also what a lock written before
	// subdirectories were recorded says), y is not served from an entry
	// another identity filled: nothing of y's own confirms that its
	// location names no subdirectory, so its origin is asked, and says.
	before := calls.Load()
	er, hit, err := c.Fill(ctx, bind(modY, source.SubdirRoot), []hash.Hash{ex.H1}, locatedFetch(t, "modules/y", &calls))
	if err != nil || hit || calls.Load() != before+1 || er.Subdir != "modules/y" {
		t.Fatalf("root: hit=%v origin asked %d times, subdir=%q err=%v", hit, calls.Load()-before, er.Subdir, err)
	}
	// Its own record now answers; bound to the root, it is a miss again
	// (the record names modules/y), bound to modules/y a hit.
	if _, hit, err := c.Fill(ctx, bind(modY, "modules/y"), []hash.Hash{ex.H1}, noFetch(t)); err != nil || !hit {
		t.Fatalf("y bound to its own subdirectory: hit=%v err=%v", hit, err)
	}
	// A package whose source names no location (git, OCI) has no other
	// subdirectory than the root: an entry filled under another
	// identity serves it.
	git := source.ModulePackage{Source: "git::https://git.example.test/mono.git", Ref: "v1.0.0", Subdir: source.SubdirRoot}
	if e, hit, err := c.Fill(ctx, git, []hash.Hash{ex.H1}, noFetch(t)); err != nil || !hit || e.Subdir != "" {
		t.Fatalf("git module bound to the root: hit=%v subdir=%q err=%v", hit, e.Subdir, err)
	}
}

// A package's own index record naming another subdirectory than the lock
// binds is a miss: the origin is asked again (and says what it says).
func TestOwnRecordOtherSubdirIsAMiss(t *testing.T) {
	ctx := context.Background()
	c, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	ex, _, err := c.Fill(ctx, modX, nil, locatedFetch(t, "modules/x", &calls))
	if err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{source.SubdirRoot, "modules/y"} {
		before := calls.Load()
		e, hit, err := c.Fill(ctx, bind(modX, sub), []hash.Hash{ex.H1}, locatedFetch(t, "modules/x", &calls))
		if err != nil || hit || calls.Load() != before+1 || e.Subdir != "modules/x" {
			t.Errorf("bound to %q: hit=%v origin asked %d times, subdir %q, err %v", sub, hit, calls.Load()-before, e.Subdir, err)
		}
	}
	if e, hit, err := c.Fill(ctx, bind(modX, "modules/x"), []hash.Hash{ex.H1}, noFetch(t)); err != nil || !hit || e.Subdir != "modules/x" {
		t.Errorf("bound to its own subdirectory: hit=%v subdir=%q err=%v", hit, e.Subdir, err)
	}
}

// A subdirectory read from an index record is used only when it is a
// clean relative path inside the package; any other makes the record
// unusable: the entry, found by the lock's h1:, gets the subdirectory the
// lock binds, or none.
func TestIndexRecordSubdirValidated(t *testing.T) {
	ctx := context.Background()
	for _, bad := range []string{"../../etc", "/modules/x", "modules/../../x", "modules/./x", `modules\x`} {
		dir := t.TempDir()
		c, err := cache.Open(dir, cache.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var calls atomic.Int32
		ex, _, err := c.Fill(ctx, modX, nil, locatedFetch(t, "modules/x", &calls))
		if err != nil {
			t.Fatal(err)
		}
		file := indexFile(t, dir)
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		q := strings.ReplaceAll(strings.ReplaceAll(bad, `\`, `\\`), `"`, `\"`)
		edited := strings.Replace(string(b), `"subdir": "modules/x"`, `"subdir": "`+q+`"`, 1)
		if edited == string(b) {
			t.Fatalf("no subdir in %s", b)
		}
		if err := os.WriteFile(file, []byte(edited), 0o644); err != nil {
			t.Fatal(err)
		}
		reopened, err := cache.Open(dir, cache.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if e, ok, err := reopened.Lookup(ctx, modX, []hash.Hash{ex.H1}); err != nil || !ok || e.Subdir != "" {
			t.Errorf("record naming %q: found=%v subdir %q (%v), want the entry without the record's subdirectory", bad, ok, e.Subdir, err)
		}
		if e, ok, err := reopened.Lookup(ctx, bind(modX, "modules/x"), []hash.Hash{ex.H1}); err != nil || !ok || e.Subdir != "modules/x" {
			t.Errorf("record naming %q, lock binding modules/x: found=%v subdir %q (%v)", bad, ok, e.Subdir, err)
		}
	}
}

// A fetcher reporting a subdirectory out of the package stores nothing.
func TestFetchedSubdirOutOfPackageRefused(t *testing.T) {
	c, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	if _, _, err := c.Fill(context.Background(), modX, nil, locatedFetch(t, "../x", &calls)); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Fatalf("Fill: %v, want a refusal", err)
	}
	if files, _ := filepath.Glob(filepath.Join(c.Dir(), "index", "*.json")); len(files) != 0 {
		t.Errorf("index records: %v", files)
	}
}

// Two modules of one package through the remote tier: a runner that
// installed both writes two entries; another runner, with its own empty
// cache and the locks' h1: and subdirectories, gets each module from the
// tier without the origin, each from its own subdirectory.
func TestMonorepoRemoteTierKeepsEachSubdir(t *testing.T) {
	srv := ocitest.New(t, ocitest.ServerOptions{})
	ctx := context.Background()
	a := machine(t, srv, nil)
	var calls atomic.Int32
	ex, _, err := a.Fill(ctx, modX, nil, locatedFetch(t, "modules/x", &calls))
	if err != nil {
		t.Fatal(err)
	}
	// Runner a's cache serves y's package by h1:, but a's install of y
	// asked the origin (y has no lock yet): its fill writes y through.
	if _, _, err := a.Fill(ctx, modY, nil, locatedFetch(t, "modules/y", &calls)); err != nil {
		t.Fatal(err)
	}
	var ev events
	b := machine(t, srv, &ev)
	for _, m := range []struct {
		pkg source.ModulePackage
		sub string
	}{{modY, "modules/y"}, {modX, "modules/x"}} {
		e, _, err := b.Fill(ctx, bind(m.pkg, m.sub), []hash.Hash{ex.H1}, noFetch(t))
		if err != nil || e.Subdir != m.sub {
			t.Errorf("%s from the tier: subdir %q, want %q (%v)", m.pkg.Source, e.Subdir, m.sub, err)
		}
	}
	if w := ev.warnings(); len(w) != 0 {
		t.Errorf("warnings: %q", w)
	}
}

// lyingTier is a remote tier whose entries record another subdirectory
// than the one they were written for.
type lyingTier struct {
	cache.Remote
	subdir string
}

func (l lyingTier) Get(ctx context.Context, pkg source.Package, want []hash.Hash, path string) (cache.RemoteArchive, error) {
	a, err := l.Remote.Get(ctx, pkg, want, path)
	a.Subdir = l.subdir
	return a, err
}

// A tier entry whose subdirectory disagrees with the lock, or is not a
// clean relative path inside the package, is a miss and a warning: the
// origin serves.
func TestRemoteTierSubdirDisagreementIsAMiss(t *testing.T) {
	srv := ocitest.New(t, ocitest.ServerOptions{})
	ctx := context.Background()
	var calls atomic.Int32
	ex, _, err := machine(t, srv, nil).Fill(ctx, modX, nil, locatedFetch(t, "modules/x", &calls))
	if err != nil {
		t.Fatal(err)
	}
	for _, lie := range []string{"modules/y", "../../x", ""} {
		var ev events
		c, err := cache.Open(t.TempDir(), cache.Options{Remote: lyingTier{Remote: remoteOf(t, srv), subdir: lie}, Events: &ev})
		if err != nil {
			t.Fatal(err)
		}
		before := calls.Load()
		e, _, err := c.Fill(ctx, bind(modX, "modules/x"), []hash.Hash{ex.H1}, locatedFetch(t, "modules/x", &calls))
		if err != nil || calls.Load() != before+1 || e.Subdir != "modules/x" {
			t.Errorf("tier saying %q: origin asked %d times, subdir %q, err %v", lie, calls.Load()-before, e.Subdir, err)
		}
		if w := ev.warnings(); len(w) != 1 || !strings.Contains(w[0], "was not used") {
			t.Errorf("tier saying %q: warnings %q", lie, w)
		}
	}
}
