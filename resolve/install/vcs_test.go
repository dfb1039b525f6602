package install_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source/oci/ocitest"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// hostileModule is a module package as a hostile publisher could make it:
// a git configuration that runs code when the user runs git in the
// module's directory, and other version-control metadata at any depth.
var hostileModule = map[string]string{
	"main.tf":         "variable \"name\" {\n  type = string\n}\n",
	".git/config":     "[core]\n\tfsmonitor = touch pwned\n",
	".git/HEAD":       "ref: refs/heads/main\n",
	".svn/entries":    "12\n",
	"sub/.hg/hgrc":    "[hooks]\nupdate = touch pwned\n",
	"sub/main.tf":     "# sub\n",
	"sub/.GIT/config": "[core]\n\tfsmonitor = touch pwned\n",
	".gitignore":      "*.tfstate\n",
	"docs/.svnignore": "x\n",
	"docs/README.md":  "docs\n",
}

// installedFiles lists the files and directories under dir.
func installedFiles(t *testing.T, dir string) []string {
	t.Helper()
	var got []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		got = append(got, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	return got
}

// TestModuleVCSMetadataNeverInstalled: a registry module archive (tar.gz
// and zip) and an OCI module holding .git, .svn and a nested .hg install
// without them, through Init, cold and warm; the lock's h1: is the h1: of
// the tree installed; the same package from OCI installs with the same h1:.
func TestModuleVCSMetadataNeverInstalled(t *testing.T) {
	files := hostileModule
	fx := installtest.DefaultFixtures()
	fx.Modules = append(fx.Modules,
		registrytest.Module{Addr: installtest.RegistryHost + "/acme/hostile/tgz", Versions: []registrytest.ModuleVersion{{Version: "1.0.0", Files: files, Delivery: registrytest.DeliverJSON}}},
		registrytest.Module{Addr: installtest.RegistryHost + "/acme/hostile/zip", Versions: []registrytest.ModuleVersion{{Version: "1.0.0", Files: files, Delivery: registrytest.DeliverHeader}}},
	)
	if err := installtest.HaveGit(); err != nil {
		t.Skip(err)
	}
	ctx := context.Background()
	w, err := installtest.Start(ctx, installtest.Options{Fixtures: &fx})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	z, err := ocitest.Zip(files)
	if err != nil {
		t.Fatal(err)
	}
	repo, err := w.OCI.Repository("modules/hostile")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ocitest.PushModule(ctx, repo, z, "1.0.0"); err != nil {
		t.Fatal(err)
	}
	want, ok := w.Registry.ModuleH1(installtest.RegistryHost+"/acme/hostile/tgz", "1.0.0")
	if !ok {
		t.Fatal("no module h1: from the registry")
	}

	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": `
module "tgz" {
  source  = "registry.example.test/acme/hostile/tgz"
  version = "1.0.0"
}
module "zip" {
  source  = "registry.example.test/acme/hostile/zip"
  version = "1.0.0"
}
module "oci" {
  source = "oci://` + installtest.OCIHost + `/modules/hostile?tag=1.0.0"
}
`})
	c := openCache(t)
	wantTree := []string{".gitignore", "docs", "docs/.svnignore", "docs/README.md", "main.tf", "sub", "sub/main.tf"}
	for _, run := range []string{"cold", "warm", "fresh .terraform, warm cache"} {
		if run == "fresh .terraform, warm cache" {
			if err := os.RemoveAll(filepath.Join(dir, ".terraform")); err != nil {
				t.Fatal(err)
			}
		}
		res := initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: c})
		for _, call := range []string{"tgz", "zip", "oci"} {
			m := res.Lock.Module(call)
			if m == nil {
				t.Fatalf("%s: no lock entry for %s", run, call)
			}
			if !slices.Equal(m.Hashes, []hash.Hash{want}) {
				t.Errorf("%s: %s hashes = %v, want [%s]", run, call, m.Hashes, want)
			}
			installed := filepath.Join(dir, ".terraform", "modules", call)
			if got := installedFiles(t, installed); !slices.Equal(got, wantTree) {
				t.Errorf("%s: %s installed %v, want %v", run, call, got, wantTree)
			}
			if h, err := hash.H1Dir(installed); err != nil || h != want {
				t.Errorf("%s: %s: the installed tree hashes to %v (%v), the lock records %s", run, call, h, err, want)
			}
		}
	}
}
