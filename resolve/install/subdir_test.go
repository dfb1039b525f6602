package install_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/cache/ocitier"
	"github.com/tflock/tflock/source/oci"
	"github.com/tflock/tflock/source/oci/ocitest"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// monoFiles is one package holding several modules, each in its own
// subdirectory; its root is a module too.
var monoFiles = map[string]string{
	"main.tf":              "output \"which\" {\n  value = \"root\"\n}\n",
	"modules/good/main.tf": "output \"which\" {\n  value = \"good\"\n}\n",
	"modules/evil/main.tf": "output \"which\" {\n  value = \"evil\"\n}\n",
	"modules/x/main.tf":    "output \"which\" {\n  value = \"x\"\n}\n",
	"modules/y/main.tf":    "output \"which\" {\n  value = \"y\"\n}\n",
}

// monoWorld starts a world whose registry serves monoFiles, as version
// 1.0.0 of each module of subdirs (NAME → the subdirectory its download
// location names, "//SUBDIR" of an X-Terraform-Get answer): the same
// archive, the same h1:, for every module.
func monoWorld(t *testing.T, subdirs map[string]string) *installtest.World {
	t.Helper()
	var fx registrytest.Fixtures
	for name, sub := range subdirs {
		fx.Modules = append(fx.Modules, registrytest.Module{Addr: installtest.RegistryHost + "/acme/" + name + "/cloud", Versions: []registrytest.ModuleVersion{
			{Version: "1.0.0", Files: monoFiles, Delivery: registrytest.DeliverHeader, Subdir: sub}}})
	}
	return startWorldWith(t, installtest.Options{NoGit: true, Fixtures: &fx})
}

// monoConfig calls each module of names as "registry.example.test/acme/NAME/cloud" 1.0.0.
func monoConfig(names ...string) string {
	var b strings.Builder
	for _, n := range names {
		b.WriteString("module \"" + n + "\" {\n  source  = \"" + installtest.RegistryHost + "/acme/" + n + "/cloud\"\n  version = \"1.0.0\"\n}\n\n")
	}
	return b.String()
}

// installedDirs returns each call's directory as modules.json records it.
func installedDirs(t *testing.T, dir string) map[string]string {
	t.Helper()
	m, err := install.ReadManifest(filepath.Join(dir, ".terraform", "modules", install.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range m.Modules {
		if r.Key != "" {
			out[r.Key] = r.Dir
		}
	}
	return out
}

func readLock(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, install.LockFileName))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRegistrySubdirIsLocked is the regression test for a registry that
// answers "...//evil" where it answered "...//good": the same archive, the
// same h1:, another directory installed as the module. The lock records
// the subdirectory; the other answer is a change, refused in read-only
// mode and reported otherwise, never "matches the lock file".
func TestRegistrySubdirIsLocked(t *testing.T) {
	good := monoWorld(t, map[string]string{"app": "modules/good"})
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": monoConfig("app")})
	initAndWrite(t, install.Options{Dir: dir, Source: good.Source, Cache: openCache(t)})
	lockBefore := readLock(t, dir)
	if !strings.Contains(lockBefore, `subdir      = "modules/good"`) {
		t.Fatalf("the lock does not record the subdirectory:\n%s", lockBefore)
	}
	if got := installedDirs(t, dir)["app"]; got != ".terraform/modules/app/modules/good" {
		t.Fatalf("installed %s", got)
	}

	evil := monoWorld(t, map[string]string{"app": "modules/evil"})
	t.Run("read-only", func(t *testing.T) {
		freshMachine(t, dir)
		_, err := install.Init(context.Background(), install.Options{Dir: dir, Source: evil.Source, Cache: openCache(t), ReadOnly: true})
		var lc *install.LockChangedError
		if !errors.As(err, &lc) || !strings.Contains(err.Error(), "modules/evil") || !strings.Contains(err.Error(), "modules/good") {
			t.Fatalf("read-only Init: %v, want a *LockChangedError naming both subdirectories", err)
		}
		if _, err := os.Stat(filepath.Join(dir, ".terraform")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a refused run installed something: %v", err)
		}
	})
	t.Run("normal", func(t *testing.T) {
		freshMachine(t, dir)
		rec := &recorder{}
		res, err := install.Init(context.Background(), install.Options{Dir: dir, Source: evil.Source, Cache: openCache(t), Events: rec})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Changes) != 1 || !strings.Contains(res.Changes[0].String(), "modules/good -> modules/evil") {
			t.Errorf("changes %v, want the module repinned to the other subdirectory", res.Changes)
		}
		for _, e := range rec.take() {
			if e.Kind == source.EventVerified && e.Detail == "matches the lock file" {
				t.Errorf("event %v: the module was said to match the lock file", e)
			}
		}
		if got := installedDirs(t, dir)["app"]; got != ".terraform/modules/app/modules/evil" {
			t.Errorf("installed %s with the change recorded", got)
		}
	})
	if readLock(t, dir) != lockBefore {
		t.Error("the lock file changed")
	}
	// The good registry again, with an install from elsewhere in place.
	if res, err := install.Init(context.Background(), install.Options{Dir: dir, Source: good.Source, Cache: openCache(t), ReadOnly: true}); err != nil || installedDirs(t, dir)["app"] != ".terraform/modules/app/modules/good" {
		t.Errorf("read-only Init with the good registry: %v, installed %s", err, installedDirs(t, dir)["app"])
	} else if len(res.Changes) != 0 {
		t.Errorf("changes %v", res.Changes)
	}
}

// TestOldLockWithoutSubdir: a lock written before tflock recorded the
// subdirectory reads as the package root; a registry naming a
// subdirectory is then a change, recorded in normal mode and refused in
// read-only mode, even when the cache holds the package with its
// subdirectory.
func TestOldLockWithoutSubdir(t *testing.T) {
	good := monoWorld(t, map[string]string{"app": "modules/good"})
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": monoConfig("app")})
	c := openCache(t)
	initAndWrite(t, install.Options{Dir: dir, Source: good.Source, Cache: c})
	old := strings.Replace(readLock(t, dir), "  subdir      = \"modules/good\"\n", "", 1)
	if strings.Contains(old, "subdir") {
		t.Fatalf("lock:\n%s", old)
	}
	writeFiles(t, dir, map[string]string{install.LockFileName: old})
	for _, warm := range []bool{false, true} {
		cc := openCache(t)
		if warm {
			cc = c
		}
		freshMachine(t, dir)
		if _, err := install.Init(context.Background(), install.Options{Dir: dir, Source: good.Source, Cache: cc, ReadOnly: true}); err == nil || !strings.Contains(err.Error(), "modules/good") {
			t.Errorf("warm=%v: read-only Init with an old lock: %v, want a refusal naming the subdirectory", warm, err)
		}
		res, err := install.Init(context.Background(), install.Options{Dir: dir, Source: good.Source, Cache: cc})
		if err != nil || len(res.Changes) != 1 || !strings.Contains(res.Changes[0].String(), "subdir (none) -> modules/good") {
			t.Errorf("warm=%v: Init with an old lock: %v, changes %v", warm, err, res.Changes)
		}
		if got := installedDirs(t, dir)["app"]; got != ".terraform/modules/app/modules/good" {
			t.Errorf("warm=%v: installed %s", warm, got)
		}
	}
}

// TestOldLockCacheOfAnotherModule: a lock without "subdir" and a cache that
// holds the package only under another module (another registry address
// delivering the same archive): the entry does not confirm that this
// module's location names the root, so the origin is asked and the
// subdirectory it names is a change, never the root installed silently.
func TestOldLockCacheOfAnotherModule(t *testing.T) {
	w := monoWorld(t, map[string]string{"app": "modules/good", "other": "modules/x"})
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": monoConfig("app")})
	initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: openCache(t)})
	old := strings.Replace(readLock(t, dir), "  subdir      = \"modules/good\"\n", "", 1)
	writeFiles(t, dir, map[string]string{install.LockFileName: old})

	c := openCache(t)
	other := t.TempDir()
	writeFiles(t, other, map[string]string{"main.tf": monoConfig("other")})
	initAndWrite(t, install.Options{Dir: other, Source: w.Source, Cache: c})

	freshMachine(t, dir)
	if _, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: c, ReadOnly: true}); err == nil || !strings.Contains(err.Error(), "modules/good") {
		t.Errorf("read-only Init: %v, want a refusal naming the subdirectory", err)
	}
	res, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: c})
	if err != nil || len(res.Changes) != 1 || !strings.Contains(res.Changes[0].String(), "subdir (none) -> modules/good") {
		t.Errorf("Init: %v, changes %v", err, res.Changes)
	}
	if got := installedDirs(t, dir)["app"]; got != ".terraform/modules/app/modules/good" {
		t.Errorf("installed %s", got)
	}
}

// TestMonorepoEachCallItsSubdir is the regression test for two modules
// delivered by one package (one h1:, two subdirectories): each call gets
// its own directory whether the package comes from the origin, from a
// local cache another project filled, or from the remote tier another
// runner wrote.
func TestMonorepoEachCallItsSubdir(t *testing.T) {
	w := monoWorld(t, map[string]string{"x": "modules/x", "y": "modules/y"})
	want := map[string]string{"x": ".terraform/modules/x/modules/x", "y": ".terraform/modules/y/modules/y"}
	check := func(t *testing.T, dir string) {
		t.Helper()
		got := installedDirs(t, dir)
		for k, v := range want {
			if got[k] != v {
				t.Errorf("call %s installed from %s, want %s", k, got[k], v)
			}
		}
	}
	both := t.TempDir()
	writeFiles(t, both, map[string]string{"main.tf": monoConfig("x", "y")})

	t.Run("origin", func(t *testing.T) {
		initAndWrite(t, install.Options{Dir: both, Source: w.Source, Cache: openCache(t)})
		check(t, both)
	})
	t.Run("local cache filled by another project", func(t *testing.T) {
		c := openCache(t)
		other := t.TempDir()
		writeFiles(t, other, map[string]string{"main.tf": monoConfig("x")})
		initAndWrite(t, install.Options{Dir: other, Source: w.Source, Cache: c})
		freshMachine(t, both)
		src := &counting{src: w.Source}
		if _, err := install.Init(context.Background(), install.Options{Dir: both, Source: src, Cache: c}); err != nil {
			t.Fatal(err)
		}
		check(t, both)
		if n := src.fetches.Load(); n != 0 {
			t.Errorf("%d downloads, want the cache to serve both", n)
		}
	})
	t.Run("remote tier written by another runner", func(t *testing.T) {
		srv := ocitest.New(t, ocitest.ServerOptions{})
		runner := func() *cache.Cache {
			tier, err := ocitier.New("oci://"+srv.Host()+"/fleet", ocitier.Options{OCI: oci.Options{PlainHTTP: true, HTTPClient: srv.Client()}})
			if err != nil {
				t.Fatal(err)
			}
			c, err := cache.Open(t.TempDir(), cache.Options{Remote: tier, Events: warnLog{t}})
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		freshMachine(t, both)
		if _, err := install.Init(context.Background(), install.Options{Dir: both, Source: w.Source, Cache: runner()}); err != nil {
			t.Fatal(err)
		}
		freshMachine(t, both)
		src := &counting{src: w.Source}
		if _, err := install.Init(context.Background(), install.Options{Dir: both, Source: src, Cache: runner()}); err != nil {
			t.Fatal(err)
		}
		check(t, both)
		if n := src.fetches.Load(); n != 0 {
			t.Errorf("%d downloads, want the tier to serve both", n)
		}
	})
}

// warnLog fails the test on a warning of a cache.
type warnLog struct{ t *testing.T }

func (w warnLog) Event(e source.Event) {
	if e.Kind == source.EventWarning {
		w.t.Errorf("warning: %s", e.Detail)
	}
}

// TestCheckVerifiesModules is the regression test for Check not looking at
// installed modules: each is checked against the lock as providers are
// (the h1: of its package, its version, the subdirectory it is installed
// from), and a missing module is a typed Problem in tofu's words, "Module
// not installed", never an untyped error at "<nil>:".
func TestCheckVerifiesModules(t *testing.T) {
	good := monoWorld(t, map[string]string{"app": "modules/good"})
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": monoConfig("app")})
	install1 := func(t *testing.T) {
		t.Helper()
		freshMachine(t, dir)
		if _, err := install.Init(context.Background(), install.Options{Dir: dir, Source: good.Source, Cache: openCache(t)}); err != nil {
			t.Fatal(err)
		}
	}
	initAndWrite(t, install.Options{Dir: dir, Source: good.Source, Cache: openCache(t)})
	check := func(t *testing.T) (*install.CheckResult, error) {
		t.Helper()
		res, err := install.Check(context.Background(), install.CheckOptions{Dir: dir})
		if err != nil && strings.Contains(err.Error(), "<nil>") {
			t.Errorf("error without a position: %v", err)
		}
		return res, err
	}
	if _, err := check(t); err != nil {
		t.Fatalf("Check of a matching install: %v", err)
	}
	only := func(t *testing.T, res *install.CheckResult, kind install.ProblemKind) install.Problem {
		t.Helper()
		if res == nil || len(res.Problems) != 1 || res.Problems[0].Kind != kind || res.Problems[0].Call != "app" {
			t.Fatalf("problems %+v, want one %v for module app", res, kind)
		}
		return res.Problems[0]
	}
	t.Run("not installed", func(t *testing.T) {
		install1(t)
		if err := os.RemoveAll(filepath.Join(dir, ".terraform", "modules", "app")); err != nil {
			t.Fatal(err)
		}
		res, err := check(t)
		var ni *install.ModuleNotInstalledError
		if !errors.As(err, &ni) || !strings.Contains(err.Error(), "Module not installed") {
			t.Fatalf("Check: %v, want a *ModuleNotInstalledError", err)
		}
		p := only(t, res, install.ProblemModuleNotInstalled)
		if p.Range.Filename == "" || p.Range.Start.Line != 1 {
			t.Errorf("problem at %v, want the module block", p.Range)
		}
	})
	t.Run("no record", func(t *testing.T) {
		install1(t)
		writeFiles(t, dir, map[string]string{".terraform/modules/modules.json": `{"Modules":[{"Key":"","Source":"","Dir":"."}]}`})
		res, err := check(t)
		if err == nil {
			t.Fatal("Check passed a module call modules.json does not list")
		}
		only(t, res, install.ProblemModuleNotInstalled)
	})
	t.Run("edited", func(t *testing.T) {
		install1(t)
		writeFiles(t, dir, map[string]string{".terraform/modules/app/modules/good/main.tf": "output \"which\" {\n  value = \"edited\"\n}\n"})
		res, err := check(t)
		var mm *install.ModuleMismatchError
		if !errors.As(err, &mm) || !strings.Contains(err.Error(), "not among the lock file's hashes") {
			t.Fatalf("Check: %v, want a *ModuleMismatchError about its hash", err)
		}
		only(t, res, install.ProblemModuleMismatch)
	})
	t.Run("other subdirectory", func(t *testing.T) {
		install1(t)
		file := filepath.Join(dir, ".terraform", "modules", install.ManifestFile)
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		writeFiles(t, dir, map[string]string{".terraform/modules/modules.json": strings.Replace(string(b), "app/modules/good", "app/modules/evil", 1)})
		res, err := check(t)
		if err == nil || !strings.Contains(err.Error(), "modules/evil") {
			t.Fatalf("Check: %v, want the other subdirectory named", err)
		}
		only(t, res, install.ProblemModuleMismatch)
	})
}

// TestLocationSubdirMustBeAModuleDirectory: a location naming a
// subdirectory its package does not have, or version-control metadata, is
// an error naming the call, never the package root installed instead.
func TestLocationSubdirMustBeAModuleDirectory(t *testing.T) {
	for sub, want := range map[string]string{"modules/none": "no subdirectory modules/none", ".git": "version-control metadata", "main.tf": "not a directory"} {
		w := monoWorld(t, map[string]string{"app": sub})
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{"main.tf": monoConfig("app")})
		_, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: openCache(t)})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `module "app"`) {
			t.Errorf("location //%s: %v, want an error saying %q", sub, err, want)
		}
	}
}
