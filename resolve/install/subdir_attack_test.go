package install_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// TestAttackRegistrySubdirIsVCSMetadata: a registry whose download
// location names a VCS-metadata directory ("//.svn") of a package that
// holds files there. Those files are left out of h1: and never installed,
// so the lock would name nothing of what the module's directory holds for
// tofu. tflock must refuse the location, never install an empty or an
// unhashed directory as the module.
func TestAttackRegistrySubdirIsVCSMetadata(t *testing.T) {
	for _, sub := range []string{".svn", ".git/hooks", "modules/.hg", ".SVN"} {
		t.Run(sub, func(t *testing.T) {
			files := map[string]string{
				"main.tf":        "output \"which\" {\n  value = \"root\"\n}\n",
				sub + "/main.tf": "output \"which\" {\n  value = \"evil\"\n}\n",
			}
			fx := registrytest.Fixtures{Modules: []registrytest.Module{{Addr: installtest.RegistryHost + "/acme/app/cloud", Versions: []registrytest.ModuleVersion{
				{Version: "1.0.0", Files: files, Delivery: registrytest.DeliverHeader, Subdir: sub}}}}}
			w := startWorldWith(t, installtest.Options{NoGit: true, Fixtures: &fx})
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"main.tf": monoConfig("app")})
			res, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: openCache(t)})
			if err == nil {
				var got []string
				for m := range res.Lock.Modules() {
					got = append(got, m.Path+" subdir="+m.Subdir)
				}
				ents, _ := os.ReadDir(filepath.Join(dir, ".terraform", "modules", "app", filepath.FromSlash(sub)))
				t.Fatalf("Init accepted a module in VCS metadata %q: lock %v, dirs %v, installed entries %v", sub, got, installedDirs(t, dir), ents)
			}
			t.Log(err)
			if !strings.Contains(err.Error(), sub) {
				t.Errorf("error %v does not name the subdirectory %q", err, sub)
			}
		})
	}
}
