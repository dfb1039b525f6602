package install_test

import (
	"context"
	"encoding/base64"
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

	// Init with that install in place: its package hashes to the lock's
	// h1:, but the nested module is not covered; it must not be kept.
	if res, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: openCache(t), ReadOnly: true}); err == nil {
		t.Errorf("read-only Init kept the install, installed %v; warnings %v", installedDirs(t, dir), res.Warnings)
	} else if !strings.Contains(err.Error(), "version-control metadata") {
		t.Errorf("read-only Init: %v, want a refusal of the call into version-control metadata", err)
	}
}

// nestedWorld serves registry.example.test/acme/app/cloud 1.0.0, whose
// module calls its local module "./nested".
func nestedWorld(t *testing.T) *installtest.World {
	files := map[string]string{
		"main.tf":        "module \"n\" {\n  source = \"./nested\"\n}\n",
		"nested/main.tf": "output \"which\" {\n  value = \"good\"\n}\n",
	}
	fx := registrytest.Fixtures{Modules: []registrytest.Module{{Addr: installtest.RegistryHost + "/acme/app/cloud", Versions: []registrytest.ModuleVersion{
		{Version: "1.0.0", Files: files, Delivery: registrytest.DeliverHeader}}}}}
	return startWorldWith(t, installtest.Options{NoGit: true, Fixtures: &fx})
}

// TestAttackManifestRedirectsLocalCall: tofu loads every module, local
// ones too, from the directory modules.json records for its call. A
// modules.json whose record of a local call names another directory than
// the call's source (joined to its caller's directory) runs code the lock
// file does not name; Check must report it, for a local call inside a
// locked remote package and for one of the root module.
func TestAttackManifestRedirectsLocalCall(t *testing.T) {
	w := nestedWorld(t)
	for _, tc := range []struct{ key, from, to, rootTo string }{
		{"app.n", ".terraform/modules/app/nested", ".terraform/evil", ""},
		{"app.n", ".terraform/modules/app/nested", "evil", ""},
		{"local", "mods/x", "evil", ""},
		{"local", "mods/x", "mods/x/../../evil", ""},
		// The root module's record moved too, so that the local call's
		// record is its source joined to it; tofu reads the root in place.
		{"local", "mods/x", "evil/mods/x", "evil"},
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
			tampered := strings.Replace(string(b), old, `"Dir":"`+tc.to+`"`, 1)
			if tc.rootTo != "" {
				tampered = strings.Replace(tampered, `"Key":"","Source":"","Dir":"."`, `"Key":"","Source":"","Dir":"`+tc.rootTo+`"`, 1)
				writeFiles(t, dir, map[string]string{"evil/mods/x/main.tf": "output \"which\" {\n  value = \"evil\"\n}\n"})
			}
			writeFiles(t, dir, map[string]string{filepath.Join(".terraform", "modules", install.ManifestFile): tampered})
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

// TestAttackInitKeepsTamperedInstall: Init with an install already in
// place that the lock's hashes accept, but whose modules.json sends a
// local call elsewhere (or whose package, as tofu installed it, holds a
// nested module in VCS metadata the lock does not cover). Init must not
// keep what the lock does not name: after it, Check passes, or Init fails.
func TestAttackInitKeepsTamperedInstall(t *testing.T) {
	w := nestedWorld(t)
	for _, tc := range []struct{ key, from, to string }{
		{"app.n", ".terraform/modules/app/nested", "evil"},
		{"local", "mods/x", "evil"},
	} {
		t.Run(tc.key, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{
				"main.tf":        monoConfig("app") + "module \"local\" {\n  source = \"./mods/x\"\n}\n",
				"mods/x/main.tf": "output \"which\" {\n  value = \"good\"\n}\n",
				"evil/main.tf":   "output \"which\" {\n  value = \"evil\"\n}\n",
			})
			c := openCache(t)
			initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: c})
			man := filepath.Join(dir, ".terraform", "modules", install.ManifestFile)
			b, err := os.ReadFile(man)
			if err != nil {
				t.Fatal(err)
			}
			writeFiles(t, dir, map[string]string{filepath.Join(".terraform", "modules", install.ManifestFile): strings.Replace(string(b), `"Dir":"`+tc.from+`"`, `"Dir":"`+tc.to+`"`, 1)})
			if _, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: c, ReadOnly: true}); err != nil {
				t.Logf("Init: %v", err)
				return
			}
			if cr, err := install.Check(context.Background(), install.CheckOptions{Dir: dir}); err != nil || len(cr.Problems) > 0 {
				b, _ := os.ReadFile(man)
				t.Errorf("Init kept a modules.json that Check refuses: %v\n%s", err, b)
			}
		})
	}
}

// TestAttackLocalCallOutOfPackage: a locked package whose module calls a
// local module outside the package ("../other" from its root: another
// call's installed package, or the configuration's own directories).
// Its code is not covered by the package's h1:, and tofu refuses such a
// path ("escapes module package"); Init must refuse it too, from a fresh
// machine and with an install in place.
func TestAttackLocalCallOutOfPackage(t *testing.T) {
	other := map[string]string{"main.tf": "output \"which\" {\n  value = \"other\"\n}\n"}
	od := t.TempDir()
	writeFiles(t, od, other)
	oh1, err := hash.Options{Module: true}.H1Dir(context.Background(), od)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(string(oh1), "h1:"))
	if err != nil {
		t.Fatal(err)
	}
	// The cache's entry of the other module, next to this one's.
	otherEntry := "../h1-" + base64.RawURLEncoding.EncodeToString(sum)
	for _, src := range []string{"../other", "../../../evil", "./x/../../other", otherEntry} {
		t.Run(src, func(t *testing.T) {
			files := map[string]string{"main.tf": "module \"n\" {\n  source = \"" + src + "\"\n}\n"}
			fx := registrytest.Fixtures{Modules: []registrytest.Module{
				{Addr: installtest.RegistryHost + "/acme/app/cloud", Versions: []registrytest.ModuleVersion{{Version: "1.0.0", Files: files, Delivery: registrytest.DeliverHeader}}},
				{Addr: installtest.RegistryHost + "/acme/other/cloud", Versions: []registrytest.ModuleVersion{{Version: "1.0.0", Files: other, Delivery: registrytest.DeliverHeader}}},
			}}
			w := startWorldWith(t, installtest.Options{NoGit: true, Fixtures: &fx})
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{
				"main.tf":      monoConfig("other", "app"),
				"evil/main.tf": "output \"which\" {\n  value = \"evil\"\n}\n",
			})
			c := openCache(t)
			first := t.TempDir()
			writeFiles(t, first, map[string]string{"main.tf": monoConfig("other")})
			initAndWrite(t, install.Options{Dir: first, Source: w.Source, Cache: c})
			res, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: c})
			if err == nil {
				t.Errorf("Init accepted a local call out of its package: installed %v", installedDirs(t, dir))
				if _, err := install.WriteLock(filepath.Join(dir, install.LockFileName), res); err != nil {
					t.Fatal(err)
				}
				// Once more with the install in place.
				if _, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: c, ReadOnly: true}); err == nil {
					t.Errorf("read-only Init with the install in place accepted it too")
				}
				return
			}
			if src == otherEntry && !strings.Contains(err.Error(), "Local module path escapes module package") {
				t.Errorf("Init: %v, want tofu's \"Local module path escapes module package\"", err)
			}
		})
	}
}
