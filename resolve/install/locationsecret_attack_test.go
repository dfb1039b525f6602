package install_test

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
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

// TestAttackLocationCredentialsStayOut: a registry module whose location
// is a git address with credentials in its URL ("https://user:SECRET@")
// is fetched with them (the typed location keeps them), but they reach
// no event, no lock file, no file of the cache (paths and contents) and no
// tag or manifest of the remote tier, on the run that fills them and on
// one served from the tier.
func TestAttackLocationCredentialsStayOut(t *testing.T) {
	if err := installtest.HaveGit(); err != nil {
		t.Skip(err)
	}
	const secret = "S3cr3tT0k3n"
	fx := registrytest.Fixtures{Modules: []registrytest.Module{{Addr: installtest.RegistryHost + "/acme/net/cloud", Versions: []registrytest.ModuleVersion{
		{Version: "1.0.0", Location: "git::https://tok:" + secret + "@" + installtest.GitHost + "/acme/network.git//modules/../?ref=v1.0.0"},
	}}}}
	w := startWorldWith(t, installtest.Options{Fixtures: &fx})
	srv := ocitest.New(t, ocitest.ServerOptions{})
	var mu sync.Mutex
	var seen []string
	events := source.EventsFunc(func(e source.Event) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, e.Detail)
		if e.Package != nil {
			seen = append(seen, e.Package.String(), e.Package.ForDisplay())
		}
	})
	cacheDirs := []string{}
	runner := func() *cache.Cache {
		tier, err := ocitier.New("oci://"+srv.Host()+"/fleet", ocitier.Options{OCI: oci.Options{PlainHTTP: true, HTTPClient: srv.Client()}})
		if err != nil {
			t.Fatal(err)
		}
		d := t.TempDir()
		cacheDirs = append(cacheDirs, d)
		c, err := cache.Open(d, cache.Options{Remote: tier, Events: events})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": "module \"net\" {\n  source  = \"" + installtest.RegistryHost + "/acme/net/cloud\"\n  version = \"1.0.0\"\n}\n"})
	initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: runner(), Events: events})
	freshMachine(t, dir)
	src := &counting{src: w.Source}
	if _, err := install.Init(context.Background(), install.Options{Dir: dir, Source: src, Cache: runner(), Events: events, ReadOnly: true}); err != nil {
		t.Fatal(err)
	}
	if n := src.fetches.Load(); n != 0 {
		t.Errorf("%d downloads, want the tier to serve the module", n)
	}
	for _, s := range seen {
		if strings.Contains(s, secret) {
			t.Errorf("an event holds the credentials: %q", s)
		}
	}
	for _, d := range append(cacheDirs, dir) {
		_ = filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if strings.Contains(p, secret) {
				t.Errorf("a path holds the credentials: %s", p)
			}
			if e.Type().IsRegular() {
				if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), secret) {
					t.Errorf("%s holds the credentials", p)
				}
			}
			return nil
		})
	}
	repo, err := srv.Repository("fleet/" + ocitier.ModuleRepository)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	n := 0
	if err := repo.Tags(ctx, "", func(tags []string) error {
		for _, tag := range tags {
			n++
			d, rc, err := repo.FetchReference(ctx, tag)
			if err != nil {
				return err
			}
			b := make([]byte, d.Size)
			_, err = io.ReadFull(rc, b)
			rc.Close()
			if err != nil {
				return err
			}
			if strings.Contains(tag, secret) || strings.Contains(string(b), secret) {
				t.Errorf("tier tag %s holds the credentials: %s", tag, b)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Error("the tier holds no module")
	}
}
