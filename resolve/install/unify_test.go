package install_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source/registry/registrytest"
)

const vpcSourceWorld = installtest.RegistryHost + "/acme/vpc/cloud"

// twoCallers is a root module whose local modules app and utils both call
// the world's vpc module, with the given constraints (line 5 of their
// files).
func twoCallers(app, utils string) map[string]string {
	call := func(c string) string {
		return "# calls vpc\n\nmodule \"vpc\" {\n  source  = \"" + vpcSourceWorld + "\"\n  version = \"" + c + "\"\n}\n"
	}
	return map[string]string{
		"main.tf":               "module \"app\" {\n  source = \"./modules/app\"\n}\n\nmodule \"utils\" {\n  source = \"./modules/utils\"\n}\n",
		"modules/app/main.tf":   call(app),
		"modules/utils/main.tf": call(utils),
	}
}

// With UnifyModules, the calls of one source share one version (the lock
// file of the module-locking RFC has one entry per source), and
// constraints that cannot be met together are reported with both calls'
// files and lines.
func TestInitUnifyModules(t *testing.T) {
	w := startWorld(t)
	dir := t.TempDir()
	writeFiles(t, dir, twoCallers(">= 1.0.0", "< 1.1.0"))
	c := openCache(t)

	// Each call on its own, as tofu: the newest each allows.
	res, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: c})
	if err != nil {
		t.Fatal(err)
	}
	if a, u := res.Lock.Module("app.vpc").Version.String(), res.Lock.Module("utils.vpc").Version.String(); a != "1.1.0" || u != "1.0.0" {
		t.Errorf("separately: app.vpc %s, utils.vpc %s; want 1.1.0 and 1.0.0", a, u)
	}

	// Unified: one version both allow.
	res = initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: c, Resolve: resolve.Options{UnifyModules: true}})
	for _, call := range []string{"app.vpc", "utils.vpc"} {
		if ml := res.Lock.Module(call); ml == nil || ml.Version.String() != "1.0.0" || ml.Constraints != ">= 1.0.0, < 1.1.0" {
			t.Errorf("unified %s = %+v, want 1.0.0 under both constraints", call, ml)
		}
		if m := moduleResult(res, call); m == nil || m.Version != "1.0.0" {
			t.Errorf("installed %s = %+v, want 1.0.0", call, m)
		}
	}

	// Constraints in conflict: both files and lines, nothing written.
	writeFiles(t, dir, twoCallers(">= 1.1.0", "< 1.1.0"))
	before := snapshot(t, dir)
	_, err = install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: c, Resolve: resolve.Options{UnifyModules: true}})
	var ce *resolve.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("conflict: %v, want a *resolve.ConflictError", err)
	}
	for _, want := range []string{
		`module "app" (` + filepath.Join(dir, "modules", "app", "main.tf") + `:5) requires >= 1.1.0`,
		`module "utils" (` + filepath.Join(dir, "modules", "utils", "main.tf") + `:5) requires < 1.1.0`,
		"available: 1.0.0 1.1.0",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("conflict error lacks %q:\n%v", want, err)
		}
	}
	if snapshot(t, dir) != before {
		t.Error("a failed run changed the configuration directory")
	}
}

func moduleResult(res *install.Result, key string) *install.ModuleResult {
	for i := range res.Modules {
		if res.Modules[i].Key == key {
			return &res.Modules[i]
		}
	}
	return nil
}

// A call of the same source found deeper in the tree, whose constraint
// excludes the version already fetched for a shallower call, is an error
// naming the call, not a lock of a tree that was not read.
func TestInitUnifyModulesAcrossLevels(t *testing.T) {
	if err := installtest.HaveGit(); err != nil {
		t.Skip(err)
	}
	fx := installtest.DefaultFixtures()
	fx.Modules = append(fx.Modules, registrytest.Module{Addr: installtest.RegistryHost + "/acme/outer/cloud", Versions: []registrytest.ModuleVersion{{Version: "1.0.0", Files: map[string]string{
		"main.tf": "module \"vpc\" {\n  source  = \"" + vpcSourceWorld + "\"\n  version = \"< 1.1.0\"\n}\n",
	}}}})
	w, err := installtest.Start(context.Background(), installtest.Options{Fixtures: &fx})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": "module \"vpc\" {\n  source  = \"" + vpcSourceWorld + "\"\n  version = \">= 1.0.0\"\n}\n\nmodule \"outer\" {\n  source  = \"" + installtest.RegistryHost + "/acme/outer/cloud\"\n  version = \"1.0.0\"\n}\n"})
	res, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: openCache(t)})
	if err != nil {
		t.Fatal(err)
	}
	if v := res.Lock.Module("vpc").Version.String(); v != "1.1.0" {
		t.Errorf("separately: vpc %s, want 1.1.0", v)
	}
	_, err = install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: openCache(t), Resolve: resolve.Options{UnifyModules: true}})
	if err == nil || !strings.Contains(err.Error(), `module "vpc": `+vpcSourceWorld+` was fetched at 1.1.0, but the calls of the same source found deeper in the tree need 1.0.0 together`) {
		t.Errorf("unified across levels: %v", err)
	}
}
