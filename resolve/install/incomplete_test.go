package install_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/source"
)

// wantIncomplete is OpenTofu's warning for providers whose checksums were
// computed here only: OpenTofu v1.12.6 internal/command/init.go (summary
// "Incomplete lock file information for providers", line 973, and the
// body incompleteLockFileInformationBody, lines 1332-1339), the providers
// sorted and joined by "\n  - ", the platform getproviders.CurrentPlatform.
func wantIncomplete(providers ...string) string {
	return "Incomplete lock file information for providers: Due to your customized provider installation methods, OpenTofu was forced to calculate lock file checksums locally for the following providers:\n" +
		"  - " + strings.Join(providers, "\n  - ") + "\n\n" +
		"The current .terraform.lock.hcl file only includes checksums for " + source.CurrentPlatform.String() + ", so OpenTofu running on another platform will fail to install these providers.\n\n" +
		"To calculate additional checksums for another platform, run:\n" +
		"  tofu providers lock -platform=linux_amd64\n" +
		"(where linux_amd64 is the platform to generate)"
}

func incompleteWarnings(res *install.Result) []string {
	var out []string
	for _, w := range res.Warnings {
		if strings.HasPrefix(w, install.IncompleteLockWarningSummary) {
			out = append(out, w)
		}
	}
	return out
}

// A source that vouches for no checksum a lock file records (here, h1: of
// other platforms, which init does not record) leaves the lock file with
// this platform's h1: alone: Init warns as tofu does, once per change of
// the lock file, naming the providers it computed checksums for in this
// run (a provider installed already and matching the lock is not named).
func TestIncompleteLockWarning(t *testing.T) {
	dir := t.TempDir()
	src := staticFixtures()
	c := openCacheIn(t.TempDir())
	run := func(name string, want ...string) {
		t.Helper()
		res, err := install.Init(context.Background(), install.Options{Dir: dir, Source: src, Cache: c})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := install.WriteLock(filepath.Join(dir, install.LockFileName), res); err != nil {
			t.Fatal(err)
		}
		got := incompleteWarnings(res)
		if !slices.Equal(got, want) {
			t.Errorf("%s: incomplete lock warnings:\n%q\nwant:\n%q", name, got, want)
		}
	}
	null := `terraform {
  required_providers {
    null = { source = "` + host + `/hashicorp/null" }
  }
}
`
	random := `terraform {
  required_providers {
    random = { source = "` + host + `/hashicorp/random" }
  }
}
`
	writeFiles(t, dir, map[string]string{"main.tf": null})
	run("first run", wantIncomplete(host+"/hashicorp/null"))
	run("no change")
	writeFiles(t, dir, map[string]string{"extra.tf": random})
	run("a provider added", wantIncomplete(host+"/hashicorp/random"))
	run("no change again")
}

// A registry whose signed SHA256SUMS give every platform's zh: completes
// the lock file: no warning.
func TestNoIncompleteLockWarningFromRegistry(t *testing.T) {
	w := startWorld(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": worldConfig})
	res, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: openCacheIn(t.TempDir())})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changes) == 0 {
		t.Fatal("the first run changed nothing")
	}
	if got := incompleteWarnings(res); len(got) > 0 {
		t.Errorf("warnings %q for providers a registry signs", got)
	}
}
