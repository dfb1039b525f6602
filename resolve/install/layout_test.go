package install_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/tflock/tflock/resolve/install"
)

// TestInitInstallDirModes: .terraform/providers and .terraform/modules are
// 0755, as tofu makes them, on a first run and on a re-run that replaces
// them.
func TestInitInstallDirModes(t *testing.T) {
	dir := newConfig(t)
	c := openCache(t)
	for _, run := range []string{"cold", "warm"} {
		initAndWrite(t, install.Options{Dir: dir, Source: staticFixtures(), Cache: c})
		for _, sub := range []string{"providers", "modules"} {
			fi, err := os.Stat(filepath.Join(dir, ".terraform", sub))
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode().Perm(); got != 0o755 {
				t.Errorf("%s run: .terraform/%s mode %v, want 0755", run, sub, got)
			}
		}
	}
}

// TestWriteLockNothingToLock: a configuration with no provider and no
// remote module gets no lock file, as with tofu; once it requires a
// provider, the file is created.
func TestWriteLockNothingToLock(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"main.tf":             "module \"app\" {\n  source = \"./modules/app\"\n}\n",
		"modules/app/main.tf": "output \"x\" {\n  value = 1\n}\n",
	})
	lockPath := filepath.Join(dir, install.LockFileName)
	c := openCache(t)
	for _, run := range []string{"first", "second"} {
		res, err := install.Init(context.Background(), install.Options{Dir: dir, Source: staticFixtures(), Cache: c})
		if err != nil {
			t.Fatal(err)
		}
		note, err := install.WriteLock(lockPath, res)
		if err != nil || note != "" {
			t.Errorf("%s run: WriteLock = %q, %v; want nothing written", run, note, err)
		}
		if _, err := os.Stat(lockPath); !os.IsNotExist(err) {
			t.Fatalf("%s run: a lock file was written for nothing to lock (stat: %v)", run, err)
		}
	}
	writeFiles(t, dir, map[string]string{"providers.tf": `terraform {
  required_providers {
    random = { source = "` + host + `/hashicorp/random" }
  }
}
`})
	res, err := install.Init(context.Background(), install.Options{Dir: dir, Source: staticFixtures(), Cache: c})
	if err != nil {
		t.Fatal(err)
	}
	note, err := install.WriteLock(lockPath, res)
	if err != nil || note == "" {
		t.Fatalf("WriteLock with a provider = %q, %v; want the file created", note, err)
	}
	if lf, err := os.ReadFile(lockPath); err != nil || len(lf) == 0 {
		t.Errorf("lock file: %v, %d bytes", err, len(lf))
	}
}
