package cache_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tfaddr "github.com/hashicorp/terraform-registry-address"
	"golang.org/x/mod/sumdb/dirhash"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
)

var testPkg = source.ProviderPackage{
	Addr:     tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/null"),
	Platform: source.Platform{OS: "linux", Arch: "amd64"},
}

var testFiles = map[string]string{
	"terraform-provider-null": "#!/bin/sh\necho null\n",
	"README.md":               "null provider\n",
	"docs/index.md":           "docs\n",
}

func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// referenceH1 hashes the files, written to a directory of their own, with
// golang.org/x/mod/sumdb/dirhash (the definition of h1:).
func referenceH1(t testing.TB, files map[string]string) hash.Hash {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, files)
	s, err := dirhash.HashDir(dir, "", dirhash.Hash1)
	if err != nil {
		t.Fatal(err)
	}
	return hash.MustParseHash(s)
}

// countingFetch writes files into the directory and counts its calls.
func countingFetch(t testing.TB, files map[string]string, calls *atomic.Int32, extra ...hash.Hash) cache.FetchFunc {
	return func(ctx context.Context, dir string) (*source.Fetched, error) {
		calls.Add(1)
		writeFiles(t, dir, files)
		return &source.Fetched{Dir: dir, Location: "test", Hashes: extra}, nil
	}
}

func TestFillThenHit(t *testing.T) {
	c, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	ctx := context.Background()
	want := referenceH1(t, testFiles)

	e, hit, err := c.Fill(ctx, testPkg, nil, countingFetch(t, testFiles, &calls))
	if err != nil {
		t.Fatal(err)
	}
	if hit || calls.Load() != 1 {
		t.Fatalf("first fill: hit=%v calls=%d, want a miss and one fetch", hit, calls.Load())
	}
	if e.H1 != want {
		t.Fatalf("entry h1 = %s, want %s", e.H1, want)
	}
	got, err := os.ReadFile(filepath.Join(e.Dir, "docs", "index.md"))
	if err != nil || string(got) != "docs\n" {
		t.Fatalf("entry contents: %q, %v", got, err)
	}

	e2, hit, err := c.Fill(ctx, testPkg, []hash.Hash{want}, countingFetch(t, testFiles, &calls))
	if err != nil {
		t.Fatal(err)
	}
	if !hit || calls.Load() != 1 || e2.Dir != e.Dir {
		t.Fatalf("second fill: hit=%v calls=%d dir=%s, want a hit on %s with no fetch", hit, calls.Load(), e2.Dir, e.Dir)
	}

	// Reopening the directory (another process) finds it through the
	// index when the lock names its h1:; with nothing to verify it
	// against, the index is no authority: a miss.
	c2, err := cache.Open(c.Dir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e3, ok, err := c2.Lookup(ctx, testPkg, []hash.Hash{want})
	if err != nil || !ok || e3.H1 != want {
		t.Fatalf("lookup after reopen: ok=%v h1=%s err=%v", ok, e3.H1, err)
	}
	if _, ok, _ := c2.Lookup(ctx, testPkg, nil); ok {
		t.Fatal("lookup after reopen with no hash hit: the index vouched for the entry")
	}
}

func TestLookupByH1AcrossIdentities(t *testing.T) {
	c, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	ctx := context.Background()
	e, _, err := c.Fill(ctx, testPkg, nil, countingFetch(t, testFiles, &calls))
	if err != nil {
		t.Fatal(err)
	}
	// The same contents under another identity (a mirror's copy, another
	// call path's module) are found by their h1: alone.
	other := source.ModulePackage{Source: "git::https://example.com/m.git", Ref: "main"}
	got, ok, err := c.Lookup(ctx, other, []hash.Hash{e.H1})
	if err != nil || !ok || got.Dir != e.Dir {
		t.Fatalf("lookup by h1: ok=%v dir=%s err=%v, want %s", ok, got.Dir, err, e.Dir)
	}
	// Without a hash, the other identity is a miss.
	if _, ok, _ := c.Lookup(ctx, other, nil); ok {
		t.Fatal("lookup of an unknown identity with no hash hit")
	}
}

func TestMismatchStoresNothing(t *testing.T) {
	dir := t.TempDir()
	c, err := cache.Open(dir, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	other := referenceH1(t, map[string]string{"x": "y"})
	_, _, err = c.Fill(context.Background(), testPkg, []hash.Hash{other}, countingFetch(t, testFiles, &calls))
	if !errors.Is(err, source.ErrChecksumMismatch) {
		t.Fatalf("err = %v, want a checksum mismatch", err)
	}
	if !strings.Contains(err.Error(), other.String()) || !strings.Contains(err.Error(), referenceH1(t, testFiles).String()) {
		t.Fatalf("error %q should name the recorded and the computed hashes", err)
	}
	for _, sub := range []string{"objects", "index", "tmp"} {
		ents, _ := os.ReadDir(filepath.Join(dir, sub))
		if len(ents) != 0 {
			t.Errorf("%s/ holds %d entries after a mismatch, want none", sub, len(ents))
		}
	}
}

func TestZHMatchesThroughIndex(t *testing.T) {
	c, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	zh := hash.NewHash(hash.SchemeZH, [32]byte{1, 2, 3})
	var calls atomic.Int32
	ctx := context.Background()
	if _, _, err := c.Fill(ctx, testPkg, nil, countingFetch(t, testFiles, &calls, zh)); err != nil {
		t.Fatal(err)
	}
	e, ok, err := c.Lookup(ctx, testPkg, []hash.Hash{zh})
	if err != nil || !ok {
		t.Fatalf("lookup by zh: ok=%v err=%v", ok, err)
	}
	if len(e.Hashes) != 2 {
		t.Fatalf("entry hashes = %v, want its h1 and zh", e.Hashes)
	}
	otherZH := hash.NewHash(hash.SchemeZH, [32]byte{9})
	if _, ok, _ := c.Lookup(ctx, testPkg, []hash.Hash{otherZH}); ok {
		t.Fatal("lookup with a zh: the entry does not have hit")
	}
}

func TestDamagedEntryIsRefetched(t *testing.T) {
	var warnings atomic.Int32
	c, err := cache.Open(t.TempDir(), cache.Options{Events: source.EventsFunc(func(e source.Event) {
		if e.Kind == source.EventWarning {
			warnings.Add(1)
		}
	})})
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	ctx := context.Background()
	e, _, err := c.Fill(ctx, testPkg, nil, countingFetch(t, testFiles, &calls))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.Dir, "README.md"), []byte("tampered"), 0o644); err != nil {
		t.Fatal(err)
	}
	e2, hit, err := c.Fill(ctx, testPkg, []hash.Hash{e.H1}, countingFetch(t, testFiles, &calls))
	if err != nil {
		t.Fatal(err)
	}
	if hit || calls.Load() != 2 {
		t.Fatalf("hit=%v calls=%d, want the damaged entry fetched again", hit, calls.Load())
	}
	if b, _ := os.ReadFile(filepath.Join(e2.Dir, "README.md")); string(b) != testFiles["README.md"] {
		t.Fatalf("README.md = %q after refetch", b)
	}
	if warnings.Load() == 0 {
		t.Fatal("no warning event for the damaged entry")
	}
}

func TestConcurrentFillsFetchOnce(t *testing.T) {
	var waits atomic.Int32
	c, err := cache.Open(t.TempDir(), cache.Options{Events: source.EventsFunc(func(e source.Event) {
		if e.Kind == source.EventCacheWait {
			waits.Add(1)
		}
	})})
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	release := make(chan struct{})
	fetch := func(ctx context.Context, dir string) (*source.Fetched, error) {
		calls.Add(1)
		<-release
		writeFiles(t, dir, testFiles)
		return nil, nil
	}
	const n = 16
	var wg sync.WaitGroup
	dirs := make([]string, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, _, err := c.Fill(context.Background(), testPkg, nil, fetch)
			dirs[i], errs[i] = e.Dir, err
		}()
	}
	// Let the waiters queue up behind the first fill, then release it.
	for waits.Load() < n-1 {
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	for i := range n {
		if errs[i] != nil || dirs[i] != dirs[0] {
			t.Fatalf("fill %d: dir=%s err=%v, want %s", i, dirs[i], errs[i], dirs[0])
		}
	}
	if calls.Load() != 1 {
		t.Fatalf("%d fetches for %d concurrent fills, want 1", calls.Load(), n)
	}
}

func TestWaitHonoursContext(t *testing.T) {
	c, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	started, release := make(chan struct{}), make(chan struct{})
	done := make(chan error)
	go func() {
		_, _, err := c.Fill(context.Background(), testPkg, nil, func(ctx context.Context, dir string) (*source.Fetched, error) {
			close(started)
			<-release
			writeFiles(t, dir, testFiles)
			return nil, nil
		})
		done <- err
	}()
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err = c.Fill(ctx, testPkg, nil, func(context.Context, string) (*source.Fetched, error) {
		t.Error("second fill fetched while the first held the lock")
		return nil, nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestFetcherCopiesEntry(t *testing.T) {
	c, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	under := fetcherFunc(func(ctx context.Context, pkg source.Package, dir string) (*source.Fetched, error) {
		calls.Add(1)
		writeFiles(t, dir, testFiles)
		return &source.Fetched{Package: pkg, Dir: dir}, nil
	})
	f := c.Fetcher(under)
	for i := range 2 {
		dst := filepath.Join(t.TempDir(), "pkg")
		got, err := f.Fetch(context.Background(), testPkg, dst)
		if err != nil {
			t.Fatal(err)
		}
		if got.Dir != dst || len(got.Hashes) == 0 || got.Hashes[0] != referenceH1(t, testFiles) {
			t.Fatalf("fetch %d: %+v", i, got)
		}
		s, err := dirhash.HashDir(dst, "", dirhash.Hash1)
		if err != nil || s != got.Hashes[0].String() {
			t.Fatalf("copy hashes to %s (%v), want %s", s, err, got.Hashes[0])
		}
	}
	if calls.Load() != 1 {
		t.Fatalf("underlying fetcher called %d times, want 1", calls.Load())
	}
}

type fetcherFunc func(ctx context.Context, pkg source.Package, dir string) (*source.Fetched, error)

func (f fetcherFunc) Fetch(ctx context.Context, pkg source.Package, dir string) (*source.Fetched, error) {
	return f(ctx, pkg, dir)
}

// TestManyProcesses runs eight copies of this test binary against one cache
// directory: each fills the same package, locked to its h1:; exactly one
// may fetch it, and all must end with the same, intact entry.
func TestManyProcesses(t *testing.T) {
	if dir := os.Getenv("TFLOCK_CACHE_CHILD_DIR"); dir != "" {
		childProcess(t, dir)
		return
	}
	dir := t.TempDir()
	marks := t.TempDir()
	const n = 8
	cmds := make([]*exec.Cmd, n)
	outs := make([]strings.Builder, n)
	for i := range n {
		cmd := exec.Command(os.Args[0], "-test.run=^TestManyProcesses$", "-test.count=1")
		cmd.Env = append(os.Environ(), "TFLOCK_CACHE_CHILD_DIR="+dir, "TFLOCK_CACHE_CHILD_MARKS="+marks, fmt.Sprintf("TFLOCK_CACHE_CHILD_ID=%d", i))
		cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	var results []string
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v\n%s", i, err, outs[i].String())
		}
		for _, line := range strings.Split(outs[i].String(), "\n") {
			if s, ok := strings.CutPrefix(line, "ENTRY "); ok {
				results = append(results, s)
			}
		}
	}
	if len(results) != n {
		t.Fatalf("got %d results from %d processes: %v", len(results), n, results)
	}
	sort.Strings(results)
	if results[0] != results[n-1] {
		t.Fatalf("processes disagree on the entry: %v", results)
	}
	fetches, _ := os.ReadDir(marks)
	if len(fetches) != 1 {
		t.Fatalf("%d processes fetched the package, want exactly 1", len(fetches))
	}
	want := referenceH1(t, testFiles)
	if !strings.HasPrefix(results[0], want.String()+" ") {
		t.Fatalf("entry %s, want h1 %s", results[0], want)
	}
}

func childProcess(t *testing.T, dir string) {
	c, err := cache.Open(dir, cache.Options{PollInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	id := os.Getenv("TFLOCK_CACHE_CHILD_ID")
	e, _, err := c.Fill(context.Background(), testPkg, []hash.Hash{referenceH1(t, testFiles)}, func(ctx context.Context, tmp string) (*source.Fetched, error) {
		// Record the fetch, then take long enough that the others queue up.
		if err := os.WriteFile(filepath.Join(os.Getenv("TFLOCK_CACHE_CHILD_MARKS"), id), nil, 0o644); err != nil {
			return nil, err
		}
		time.Sleep(300 * time.Millisecond)
		writeFiles(t, tmp, testFiles)
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("ENTRY %s %s\n", e.H1, e.Dir)
}

func TestModuleEntriesLeaveOutVCS(t *testing.T) {
	c, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mod := source.ModulePackage{Source: "git::https://example.com/net.git", Ref: "v1.0.0", Pin: strings.Repeat("a", 40)}
	withVCS := map[string]string{"main.tf": "# module\n", ".git/HEAD": "ref: refs/heads/main\n"}
	var calls atomic.Int32
	e, _, err := c.Fill(context.Background(), mod, nil, countingFetch(t, withVCS, &calls))
	if err != nil {
		t.Fatal(err)
	}
	if want := referenceH1(t, map[string]string{"main.tf": "# module\n"}); e.H1 != want {
		t.Fatalf("module entry h1 = %s, want %s (the tree without .git)", e.H1, want)
	}
	// What is stored, and so installed, is what the h1: covers: whatever
	// the fetcher wrote, no VCS metadata is kept.
	if des, err := os.ReadDir(e.Dir); err != nil || len(des) != 1 || des[0].Name() != "main.tf" {
		t.Errorf("module entry holds %v (%v), want only main.tf", des, err)
	}
	if h, err := hash.H1Dir(e.Dir); err != nil || h != e.H1 {
		t.Errorf("the stored tree hashes to %s (%v), the entry records %s", h, err, e.H1)
	}
	// The same module pinned at another commit is another package.
	other := mod
	other.Pin = strings.Repeat("b", 40)
	if _, ok, _ := c.Lookup(context.Background(), other, nil); ok {
		t.Fatal("a module pinned at another commit hit the cache")
	}
}

// TestModuleEntryWithVCSIsRefetched: a module entry that holds VCS
// metadata (stored by an older version) is never installed from: it is
// discarded and fetched again, cold or warm, trusted or not.
func TestModuleEntryWithVCSIsRefetched(t *testing.T) {
	for _, trust := range []bool{false, true} {
		c, err := cache.Open(t.TempDir(), cache.Options{TrustEntries: trust})
		if err != nil {
			t.Fatal(err)
		}
		mod := source.ModulePackage{Source: "git::https://example.com/net.git", Ref: "v1.0.0", Pin: strings.Repeat("a", 40)}
		var calls atomic.Int32
		fetch := countingFetch(t, map[string]string{"main.tf": "# module\n"}, &calls)
		e, _, err := c.Fill(context.Background(), mod, nil, fetch)
		if err != nil {
			t.Fatal(err)
		}
		writeFiles(t, e.Dir, map[string]string{".git/config": "[core]\n\tfsmonitor = touch pwned\n"})
		again, hit, err := c.Fill(context.Background(), mod, []hash.Hash{e.H1}, fetch)
		if err != nil {
			t.Fatal(err)
		}
		if hit || calls.Load() != 2 {
			t.Errorf("trust=%v: hit=%v after %d fetches; want the poisoned entry refetched", trust, hit, calls.Load())
		}
		if _, err := os.Stat(filepath.Join(again.Dir, ".git")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("trust=%v: the entry still holds .git (%v)", trust, err)
		}
	}
}

func TestSubdirSurvivesInIndex(t *testing.T) {
	c, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mod := source.ModulePackage{Source: "registry.opentofu.org/acme/vpc/aws", Version: versions.MustParse("1.0.0")}
	fetch := func(ctx context.Context, dir string) (*source.Fetched, error) {
		writeFiles(t, dir, map[string]string{"modules/vpc/main.tf": "# vpc\n"})
		return &source.Fetched{Dir: dir, Subdir: "modules/vpc"}, nil
	}
	if _, _, err := c.Fill(context.Background(), mod, nil, fetch); err != nil {
		t.Fatal(err)
	}
	reopened, err := cache.Open(c.Dir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e, ok, err := reopened.Lookup(context.Background(), mod, []hash.Hash{referenceH1(t, map[string]string{"modules/vpc/main.tf": "# vpc\n"})})
	if err != nil || !ok || e.Subdir != "modules/vpc" {
		t.Fatalf("lookup: ok=%v subdir=%q err=%v, want the subdirectory the fetcher reported", ok, e.Subdir, err)
	}
}

func TestOpenWritesNothingUntilFill(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "c")
	c, err := cache.Open(dir, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := c.Lookup(context.Background(), testPkg, nil); err != nil || ok {
		t.Fatalf("Lookup in a new cache = %v, %v; want a miss", ok, err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("Open did not create the cache directory: %v", err)
	}
	if len(ents) != 0 {
		t.Fatalf("a cache that stored nothing holds %d entries, want none", len(ents))
	}
	var calls atomic.Int32
	if _, _, err := c.Fill(context.Background(), testPkg, nil, countingFetch(t, testFiles, &calls)); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := c.Lookup(context.Background(), testPkg, nil); err != nil || !ok {
		t.Fatalf("Lookup after Fill = %v, %v; want a hit", ok, err)
	}
}

// TestModuleRefIdentity: the ref of a module package is part of its
// identity even beside a version, and a module named only by a ref (a
// branch) is never answered from the index, since the branch moves on: it
// is found by the h1: a lock records, or fetched again.
func TestModuleRefIdentity(t *testing.T) {
	ctx := context.Background()
	c, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const src = "git::https://example.com/net.git"
	v6 := source.ModulePackage{Source: src, Version: versions.MustParse("6.0.0")}
	var calls atomic.Int32
	if _, _, err := c.Fill(ctx, v6, nil, countingFetch(t, map[string]string{"main.tf": "# 6.0.0\n"}, &calls)); err != nil {
		t.Fatal(err)
	}
	withRef := v6
	withRef.Ref = "v5.60.0"
	if e, ok, _ := c.Lookup(ctx, withRef, nil); ok {
		t.Fatalf("a package with a ref was served the entry of the same version without it: %s", e.Dir)
	}

	branch := source.ModulePackage{Source: src, Ref: "main"}
	old := map[string]string{"main.tf": "# main at first\n"}
	e1, _, err := c.Fill(ctx, branch, nil, countingFetch(t, old, &calls))
	if err != nil {
		t.Fatal(err)
	}
	// The branch moved on: without a locked hash, fetched again.
	moved := map[string]string{"main.tf": "# main later\n"}
	before := calls.Load()
	e2, hit, err := c.Fill(ctx, branch, nil, countingFetch(t, moved, &calls))
	if err != nil {
		t.Fatal(err)
	}
	if hit || calls.Load() != before+1 || e2.H1 != referenceH1(t, moved) {
		t.Fatalf("a branch was answered from the cache: hit=%v fetches=%d h1=%s", hit, calls.Load()-before, e2.H1)
	}
	// With the locked hash, the locked content, without a fetch.
	e3, hit, err := c.Fill(ctx, branch, []hash.Hash{e1.H1}, countingFetch(t, moved, &calls))
	if err != nil || !hit || e3.H1 != e1.H1 {
		t.Fatalf("locked branch content: hit=%v h1=%s err=%v, want a hit on %s", hit, e3.H1, err, e1.H1)
	}
	// Pinned to a commit, the index answers again.
	pinned := branch
	pinned.Pin = strings.Repeat("a", 40)
	if _, _, err := c.Fill(ctx, pinned, nil, countingFetch(t, old, &calls)); err != nil {
		t.Fatal(err)
	}
	if e, ok, _ := c.Lookup(ctx, pinned, nil); !ok || e.H1 != e1.H1 {
		t.Fatalf("pinned lookup: ok=%v h1=%s", ok, e.H1)
	}
}
