package install_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source/oci/ocitest"
)

// managedConfig calls the world's git and OCI modules with tflock
// annotations, written with comments and uneven spacing that a rewrite
// must keep.
func managedConfig(netC, netRef, storeC, storeSrc string) string {
	return `# top comment
module "network" {
  # tflock: version = "` + netC + `"
  source    =   "` + installtest.Network + `?ref=` + netRef + `"   # trailing comment
}

/* between */
module "storage" {
    source = "` + storeSrc + `" // tflock: version = "` + storeC + `"
}
`
}

func readText(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func gitCommit(t *testing.T, w *installtest.World, tag string) string {
	t.Helper()
	return gitIn(t, filepath.Join(w.GitDir, "acme", "network.git"), "rev-parse", tag+"^{commit}")
}

// Calls constrained by "# tflock: version" comments: the first lock writes
// the selected tags into the sources, byte for byte elsewhere; a re-run
// changes nothing; a hand-edited ref is refused read-only and put back
// otherwise; -upgrade moves the ref with the lock; providers lock mode
// and KeepManagedRefs never write.
func TestInitManagedRefs(t *testing.T) {
	w := startWorld(t)
	dir := t.TempDir()
	mainTF := filepath.Join(dir, "main.tf")
	writeFiles(t, dir, map[string]string{"main.tf": managedConfig("~> 1.0", "v1.0.0", "1.0.0", installtest.Storage)})
	c := openCache(t)
	// What a run killed while rewriting left: swept by the next rewrite.
	stale := filepath.Join(dir, ".main.tf.tmp-1234")
	writeFiles(t, dir, map[string]string{".main.tf.tmp-1234": "half"})
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}

	// First lock: network moves to the newest 1.x tag, storage gets a tag.
	res := initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: c})
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale temporary file is still there: %v", err)
	}
	want := managedConfig("~> 1.0", "v1.1.0", "1.0.0", installtest.Storage+"?tag=1.0.0")
	if got := readText(t, mainTF); got != want {
		t.Fatalf("main.tf after the first lock:\n%s\nwant:\n%s", got, want)
	}
	if len(res.Rewritten) != 2 || res.Rewritten[0].Call != "network" || res.Rewritten[0].Line != 4 || res.Rewritten[1].New != installtest.Storage+"?tag=1.0.0" {
		t.Errorf("Rewritten = %+v", res.Rewritten)
	}
	ml := res.Lock.Module("network")
	if ml == nil || ml.Version.String() != "1.1.0" || ml.Ref != "" || ml.Constraints != "~> 1.0" || ml.Commit != gitCommit(t, w, "v1.1.0") {
		t.Fatalf("network lock = %+v, want 1.1.0 at v1.1.0's commit, constrained, no ref", ml)
	}
	if sl := res.Lock.Module("storage"); sl == nil || sl.Version.String() != "1.0.0" || sl.Tag != "" {
		t.Errorf("storage lock = %+v, want 1.0.0 without a tag", sl)
	}
	if got := readText(t, filepath.Join(dir, ".terraform", "modules", "network", "main.tf")); !strings.Contains(got, `"1.1.0"`) {
		t.Errorf("installed network:\n%s\nwant 1.1.0", got)
	}
	manifest := readText(t, filepath.Join(dir, ".terraform", "modules", "modules.json"))
	if !strings.Contains(manifest, "network.git?ref=v1.1.0") {
		t.Errorf("modules.json does not record the rewritten source:\n%s", manifest)
	}

	// A re-run: nothing to do, and no source asked (the lock, the cache
	// and the written tags agree).
	lockBefore := readText(t, filepath.Join(dir, install.LockFileName))
	requests := w.Requests()
	res = initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: c})
	if n := w.Requests() - requests; n != 0 {
		t.Errorf("the re-run sent %d requests, want none", n)
	}
	if len(res.Rewritten) != 0 || len(res.Changes) != 0 || readText(t, mainTF) != want || readText(t, filepath.Join(dir, install.LockFileName)) != lockBefore {
		t.Errorf("re-run: rewritten %+v, changes %v", res.Rewritten, res.Changes)
	}

	// The ref edited by hand: read-only refuses, naming file and line.
	edited := managedConfig("~> 1.0", "v1.0.0", "1.0.0", installtest.Storage+"?tag=1.0.0")
	writeFiles(t, dir, map[string]string{"main.tf": edited})
	before := snapshot(t, dir)
	_, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: c, ReadOnly: true})
	var mre *install.ManagedRefError
	if !errors.As(err, &mre) || len(mre.Rewrites) != 1 || !strings.Contains(err.Error(), "main.tf:4") || !strings.Contains(err.Error(), "ref=v1.1.0") {
		t.Errorf("read-only: %v, want a *ManagedRefError for network at main.tf:4", err)
	}
	// The remedy names what rewrites (stock tofu never does): the
	// embedder's program (Words.Locker), "tflock" by default.
	if err == nil || strings.Contains(err.Error(), "tofu init") || !strings.Contains(err.Error(), `To rewrite them, run "tflock" without the "-lockfile=readonly" flag`) {
		t.Errorf("read-only remedy: %v", err)
	}
	if snapshot(t, dir) != before {
		t.Error("the read-only run changed the directory")
	}
	// Check finds it too: tofu would install v1.0.0.
	cres, err := install.Check(context.Background(), install.CheckOptions{Dir: dir})
	if cres == nil || len(cres.Problems) != 1 || cres.Problems[0].Kind != install.ProblemManagedRef || cres.Problems[0].Range.Start.Line != 3 ||
		!strings.Contains(err.Error(), `module "network": its source, whose ref tflock manages, names ref v1.0.0, but the lock file selects version 1.1.0`) {
		t.Errorf("Check on the edited ref: %+v, %v", cres, err)
	}
	// Providers lock mode and KeepManagedRefs leave it too.
	if _, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: c, ProvidersLock: true}); err != nil {
		t.Fatal(err)
	}
	res = initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: c, KeepManagedRefs: true})
	if readText(t, mainTF) != edited || len(res.Rewritten) != 0 || !strings.Contains(strings.Join(res.Warnings, "\n"), "Module source not rewritten") {
		t.Errorf("KeepManagedRefs: rewritten %+v, warnings %q", res.Rewritten, res.Warnings)
	}
	// A normal run puts the locked tag back: the lock decides.
	res = initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: c})
	if got := readText(t, mainTF); got != want || len(res.Changes) != 0 {
		t.Errorf("after the hand edit, main.tf:\n%s\nchanges %v", got, res.Changes)
	}
	if _, err := install.Check(context.Background(), install.CheckOptions{Dir: dir}); err != nil {
		t.Errorf("Check after the rewrite: %v", err)
	}

	// Wider constraints keep the lock; -upgrade moves both refs.
	writeFiles(t, dir, map[string]string{"main.tf": managedConfig(">= 1.0.0", "v1.1.0", ">= 1.0.0", installtest.Storage+"?tag=1.0.0")})
	res = initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: c})
	if len(res.Rewritten) != 0 || res.Lock.Module("network").Version.String() != "1.1.0" {
		t.Errorf("without -upgrade: rewritten %+v", res.Rewritten)
	}
	res = initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: c, Resolve: resolve.Options{Upgrade: true}})
	want = managedConfig(">= 1.0.0", "v2.0.0", ">= 1.0.0", installtest.Storage+"?tag=1.1.0")
	if got := readText(t, mainTF); got != want {
		t.Errorf("main.tf after -upgrade:\n%s\nwant:\n%s", got, want)
	}
	if ml := res.Lock.Module("network"); ml == nil || ml.Version.String() != "2.0.0" || ml.Commit != gitCommit(t, w, "v2.0.0") {
		t.Errorf("network lock after -upgrade = %+v", ml)
	}
	if got := readText(t, filepath.Join(dir, ".terraform", "modules", "network", "main.tf")); !strings.Contains(got, `"2.0.0"`) {
		t.Errorf("installed network after -upgrade:\n%s", got)
	}
	if entries, _ := filepath.Glob(filepath.Join(dir, ".main.tf.tmp-*")); len(entries) != 0 {
		t.Errorf("temporary files left: %v", entries)
	}
}

// An annotated call inside a fetched package is resolved on its
// constraint but never edited (the package is shared, and tofu installs
// it as published): when its ref is not the selected version's, Init
// warns.
func TestInitManagedRefInFetchedPackage(t *testing.T) {
	w := startWorld(t)
	ctx := context.Background()
	repo, err := w.OCI.Repository("modules/wrapper")
	if err != nil {
		t.Fatal(err)
	}
	inner := "module \"net\" {\n  # tflock: version = \"~> 1.0\"\n  source = \"" + installtest.Network + "?ref=v1.0.0\"\n}\n"
	z, err := ocitest.Zip(map[string]string{"main.tf": inner})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ocitest.PushModule(ctx, repo, z, "1.0.0"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	root := "module \"wrapper\" {\n  source = \"oci://" + installtest.OCIHost + "/modules/wrapper?tag=1.0.0\"\n}\n"
	writeFiles(t, dir, map[string]string{"main.tf": root})
	res := initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: openCache(t)})
	if ml := res.Lock.Module("wrapper.net"); ml == nil || ml.Version.String() != "1.1.0" {
		t.Errorf("wrapper.net lock = %+v, want 1.1.0", ml)
	}
	if len(res.Rewritten) != 0 || readText(t, filepath.Join(dir, "main.tf")) != root {
		t.Errorf("rewritten %+v", res.Rewritten)
	}
	if got := readText(t, filepath.Join(dir, ".terraform", "modules", "wrapper", "main.tf")); got != inner {
		t.Errorf("the installed package was edited:\n%s", got)
	}
	if !strings.Contains(strings.Join(res.Warnings, "\n"), `module "wrapper.net" is called from a fetched package with the source "`+installtest.Network+`?ref=v1.0.0", whose ref tflock manages, but the lock selects version 1.1.0`) {
		t.Errorf("warnings %q", res.Warnings)
	}
}

// A local module called twice holds one source for two call paths: it is
// rewritten once when both select the same version, and a run whose
// locks would need two different tags there fails, leaving it.
func TestInitManagedRefSharedLocalModule(t *testing.T) {
	w := startWorld(t)
	dir := t.TempDir()
	shared := func(c, ref string) string {
		return "module \"net\" {\n  # tflock: version = \"" + c + "\"\n  source = \"" + installtest.Network + "?ref=" + ref + "\"\n}\n"
	}
	writeFiles(t, dir, map[string]string{
		"main.tf":          "module \"a\" {\n  source = \"./shared\"\n}\n\nmodule \"b\" {\n  source = \"./shared\"\n}\n",
		"shared/main.tf":   shared("1.0.0", "main"),
		"shared/extra.txt": "not configuration\n",
	})
	sharedTF := filepath.Join(dir, "shared", "main.tf")
	c := openCache(t)
	res := initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: c})
	if got := readText(t, sharedTF); got != shared("1.0.0", "v1.0.0") || len(res.Rewritten) != 1 {
		t.Fatalf("shared/main.tf:\n%s\nrewritten %+v", got, res.Rewritten)
	}

	writeFiles(t, dir, map[string]string{"shared/main.tf": shared("~> 1.0", "v1.0.0")})
	before := snapshot(t, dir)
	_, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: c, Resolve: resolve.Options{UpgradeModules: []string{"a"}}})
	if err == nil || !strings.Contains(err.Error(), `module calls "a.net" and "b.net" share the source at `+sharedTF+`:3`) {
		t.Errorf("upgrading one of the calls: %v, want a conflict", err)
	}
	if snapshot(t, dir) != before {
		t.Error("the failed run changed the directory")
	}
	res = initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: c, Resolve: resolve.Options{Upgrade: true}})
	if got := readText(t, sharedTF); got != shared("~> 1.0", "v1.1.0") || len(res.Rewritten) != 1 {
		t.Errorf("after -upgrade, shared/main.tf:\n%s\nrewritten %+v", got, res.Rewritten)
	}
}
