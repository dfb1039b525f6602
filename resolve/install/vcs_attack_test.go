package install_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// vcsNestedFiles is a registry package whose root module calls a local
// module kept in a VCS-metadata directory: the files there are left out
// of the package's h1:, so the origin can change them under one h1:.
func vcsNestedFiles(body string) map[string]string {
	return map[string]string{
		"main.tf":            "module \"n\" {\n  source = \"./.hg/nested\"\n}\n",
		".hg/nested/main.tf": "output \"which\" {\n  value = \"" + body + "\"\n}\n",
	}
}

// TestAttackLocalCallIntoVCSMetadata: a locked registry package calls
// "./.hg/nested". Two origins serving that package with different code in
// .hg/nested have one h1:, so the lock cannot tell them apart; tflock must
// not install such a call as locked, nor Check accept an install (tofu's
// keeps every file of the archive) whose nested module is not covered.
func TestAttackLocalCallIntoVCSMetadata(t *testing.T) {
	fx := registrytest.Fixtures{Modules: []registrytest.Module{{Addr: installtest.RegistryHost + "/acme/app/cloud", Versions: []registrytest.ModuleVersion{
		{Version: "1.0.0", Files: vcsNestedFiles("good"), Delivery: registrytest.DeliverHeader}}}}}
	w := startWorldWith(t, installtest.Options{NoGit: true, Fixtures: &fx})
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": monoConfig("app")})
	if _, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: openCache(t)}); err == nil {
		t.Fatal("Init installed a local call into VCS metadata, which the package's h1: does not cover")
	}

	// Check of an install that tofu made (it keeps every file of the
	// archive), here from the evil origin, with the lock file of the good
	// one: the package's h1: leaves .hg out, so it matches.
	pkg := filepath.Join(dir, ".terraform", "modules", "app")
	writeFiles(t, pkg, vcsNestedFiles("evil"))
	h1, err := hash.Options{Module: true}.H1Dir(context.Background(), pkg)
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{
		install.LockFileName: "module \"app\" {\n  source      = \"" + installtest.RegistryHost + "/acme/app/cloud\"\n  version     = \"1.0.0\"\n  constraints = \"1.0.0\"\n  hashes = [\n    \"" + string(h1) + "\",\n  ]\n}\n",
		filepath.Join(".terraform", "modules", install.ManifestFile): `{"Modules":[{"Key":"","Source":"","Dir":"."},` +
			`{"Key":"app","Source":"` + installtest.RegistryHost + `/acme/app/cloud","Version":"1.0.0","Dir":".terraform/modules/app"},` +
			`{"Key":"app.n","Source":"./.hg/nested","Dir":".terraform/modules/app/.hg/nested"}]}`,
	})
	wantMismatch(t, dir, "app.n", "version-control metadata")
}

// TestAttackManifestRedirectsLocalCall: tofu loads every module, local
// ones too, from the directory modules.json records for its call. A
// modules.json whose record of a local call names another directory than
// the call's source (joined to its caller's directory) runs code the lock
// file does not name; Check must report it, for a local call inside a
// locked remote package and for one of the root module.
func TestAttackManifestRedirectsLocalCall(t *testing.T) {
	files := map[string]string{
		"main.tf":        "module \"n\" {\n  source = \"./nested\"\n}\n",
		"nested/main.tf": "output \"which\" {\n  value = \"good\"\n}\n",
	}
	fx := registrytest.Fixtures{Modules: []registrytest.Module{{Addr: installtest.RegistryHost + "/acme/app/cloud", Versions: []registrytest.ModuleVersion{
		{Version: "1.0.0", Files: files, Delivery: registrytest.DeliverHeader}}}}}
	w := startWorldWith(t, installtest.Options{NoGit: true, Fixtures: &fx})
	for _, tc := range []struct{ key, from, to string }{
		{"app.n", ".terraform/modules/app/nested", ".terraform/evil"},
		{"app.n", ".terraform/modules/app/nested", "evil"},
		{"local", "mods/x", "evil"},
		{"local", "mods/x", "mods/x/../../evil"},
	} {
		t.Run(tc.key+" to "+tc.to, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{
				"main.tf":                 monoConfig("app") + "module \"local\" {\n  source = \"./mods/x\"\n}\n",
				"mods/x/main.tf":          "output \"which\" {\n  value = \"good\"\n}\n",
				"evil/main.tf":            "output \"which\" {\n  value = \"evil\"\n}\n",
				".terraform/evil/main.tf": "output \"which\" {\n  value = \"evil\"\n}\n",
			})
			initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: openCache(t)})
			if cr, err := install.Check(context.Background(), install.CheckOptions{Dir: dir}); err != nil || len(cr.Problems) != 0 {
				t.Fatalf("Check of the genuine install: %v, %v", err, cr.Problems)
			}
			man := filepath.Join(dir, ".terraform", "modules", install.ManifestFile)
			b, err := os.ReadFile(man)
			if err != nil {
				t.Fatal(err)
			}
			old := `"Dir":"` + tc.from + `"`
			if !strings.Contains(string(b), old) {
				t.Fatalf("modules.json has no %s:\n%s", old, b)
			}
			writeFiles(t, dir, map[string]string{filepath.Join(".terraform", "modules", install.ManifestFile): strings.Replace(string(b), old, `"Dir":"`+tc.to+`"`, 1)})
			wantMismatch(t, dir, tc.key, `modules.json records the directory `+tc.to)
		})
	}
}

// wantMismatch runs Check in dir and wants exactly one problem: the
// module call key's install does not match the lock file, for a reason
// that says why.
func wantMismatch(t *testing.T, dir, key, why string) {
	t.Helper()
	cr, err := install.Check(context.Background(), install.CheckOptions{Dir: dir})
	var me *install.ModuleMismatchError
	if !errors.As(err, &me) || me.Call != key || !strings.Contains(err.Error(), why) {
		t.Fatalf("Check: %v, want a *ModuleMismatchError of %s saying %q", err, key, why)
	}
	if len(cr.Problems) != 1 || cr.Problems[0].Kind != install.ProblemModuleMismatch || cr.Problems[0].Call != key {
		t.Errorf("problems %v, want one ProblemModuleMismatch of %s", cr.Problems, key)
	}
}
