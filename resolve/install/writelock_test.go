package install_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/install"
)

// The note WriteLock returns names what the lock file records. For
// providers it is OpenTofu's text word for word (OpenTofu v1.12.6
// internal/command/views/init.go, InitHuman.LockFileCreated and
// LockFileChanged); a configuration that calls registry modules and needs
// no provider said "to record the provider selections".
func TestWriteLockNoteSpeaksOfModules(t *testing.T) {
	const createdTail = "\nselections it made above. Include this file in your version control repository\n" +
		"so that OpenTofu can guarantee to make the same selections by default when\n" +
		"you run \"tofu init\" in the future.\n"
	const changedTail = "in the .terraform.lock.hcl file. Review those changes and commit them to your\n" +
		"version control system if they represent changes you intended to make.\n"
	src := staticFixtures()
	c := openCacheIn(t.TempDir())

	run := func(t *testing.T, dir string) string {
		t.Helper()
		res, err := install.Init(context.Background(), install.Options{Dir: dir, Source: src, Cache: c, Resolve: resolve.Options{DefaultHost: host}})
		if err != nil {
			t.Fatal(err)
		}
		note, err := install.WriteLock(filepath.Join(dir, install.LockFileName), res)
		if err != nil {
			t.Fatal(err)
		}
		return note
	}
	modulesOnly := `module "subnets" {
  source  = "` + subsSource + `"
  version = "~> 2.0"
}
`
	providersOnly := `terraform {
  required_providers {
    null = { source = "` + host + `/hashicorp/null" }
  }
}
`

	t.Run("modules only", func(t *testing.T) {
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{"main.tf": modulesOnly})
		want := "OpenTofu has created a lock file .terraform.lock.hcl to record the module" + createdTail
		if got := run(t, dir); got != want {
			t.Errorf("first run note:\n%s\nwant:\n%s", got, want)
		}
		if got := run(t, dir); got != "" {
			t.Errorf("second run note = %q, want none", got)
		}
		// The configuration gains a provider: a provider-only change,
		// in tofu's words.
		writeFiles(t, dir, map[string]string{"main.tf": modulesOnly + providersOnly})
		want = "- " + host + "/hashicorp/null: added 3.2.0\n\n" +
			"OpenTofu has made some changes to the provider dependency selections recorded\n" + changedTail
		if got := run(t, dir); got != want {
			t.Errorf("after adding a provider, note:\n%s\nwant:\n%s", got, want)
		}
	})
	for _, tc := range []struct{ name, config, what string }{
		{"providers only", providersOnly, "provider"},
		{"both", modulesOnly + providersOnly, "provider and module"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"main.tf": tc.config})
			want := "OpenTofu has created a lock file .terraform.lock.hcl to record the " + tc.what + createdTail
			if got := run(t, dir); got != want {
				t.Errorf("note:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}
