package install_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/install"
)

// providerOnly returns lf without its module blocks: the lock file tofu
// and terraform write, which have not adopted module locking.
func providerOnly(lf *lockfile.File) *lockfile.File {
	out := lf.Clone()
	var calls []string
	for m := range out.Modules() {
		calls = append(calls, m.Path)
	}
	for _, c := range calls {
		out.RemoveModule(c)
	}
	return out
}

func countString(ss []string, s string) int {
	n := 0
	for _, x := range ss {
		if strings.HasPrefix(x, s) {
			n++
		}
	}
	return n
}

// TestInitReadOnlyModulesNotAdopted: a read-only run against a lock file
// with provider blocks only (module locking not adopted, as after "tofu
// init") installs the modules as their constraints allow, warns once and
// leaves the lock file alone, cold and warm; Check accepts the same tree.
// A lock file that has module blocks but lacks a call still fails, and so
// does a provider change against a provider-only lock file.
func TestInitReadOnlyModulesNotAdopted(t *testing.T) {
	ctx := context.Background()
	dir := newConfig(t)
	full := initAndWrite(t, install.Options{Dir: dir, Source: staticFixtures(), Cache: openCache(t)}).Lock
	if full.Module("vpc") == nil {
		t.Fatal("the first run locked no module")
	}
	lockPath := filepath.Join(dir, install.LockFileName)
	tofuLock := providerOnly(full).Bytes()
	if err := os.WriteFile(lockPath, tofuLock, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, ".terraform")); err != nil {
		t.Fatal(err)
	}

	c := openCache(t)
	for _, run := range []string{"cold", "warm"} {
		res, err := install.Init(ctx, install.Options{Dir: dir, Source: staticFixtures(), Cache: c, ReadOnly: true})
		if err != nil {
			t.Fatalf("%s read-only run against a provider-only lock: %v", run, err)
		}
		if n := countString(res.Warnings, install.ModulesNotLockedWarning); n != 1 {
			t.Errorf("%s: warnings %q: ModulesNotLockedWarning %d times, want once", run, res.Warnings, n)
		}
		if len(res.Changes) != 0 {
			t.Errorf("%s: changes %v, want none", run, res.Changes)
		}
		if note, err := install.WriteLock(lockPath, res); err != nil || note != "" {
			t.Errorf("%s: WriteLock = %q, %v; want nothing written", run, note, err)
		}
		if got, err := os.ReadFile(lockPath); err != nil || !bytes.Equal(got, tofuLock) {
			t.Errorf("%s: lock file changed (%v):\n%s", run, err, got)
		}
		for _, call := range []string{"vpc", "vpc.subnets"} {
			if !slices.ContainsFunc(res.Modules, func(m install.ModuleResult) bool { return m.Key == call && m.Remote && m.Version != "" }) {
				t.Errorf("%s: module %q not installed: %+v", run, call, res.Modules)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, ".terraform", "modules", "vpc", "main.tf")); err != nil {
			t.Errorf("%s: %v", run, err)
		}
	}
	cr, err := install.Check(ctx, install.CheckOptions{Dir: dir})
	if err != nil {
		t.Fatalf("Check against a provider-only lock: %v", err)
	}
	if n := countString(cr.Warnings, install.ModulesNotLockedWarning); n != 1 {
		t.Errorf("Check warnings %q: ModulesNotLockedWarning %d times, want once", cr.Warnings, n)
	}

	// A provider change is still refused, and only it is named.
	writeFiles(t, dir, map[string]string{"main.tf": strings.Replace(rootConfig, `source = "`+host+`/hashicorp/random" }`, `source = "`+host+`/hashicorp/random", version = "3.6.0" }`, 1)})
	_, err = install.Init(ctx, install.Options{Dir: dir, Source: staticFixtures(), Cache: c, ReadOnly: true})
	var lc *install.LockChangedError
	if !errors.As(err, &lc) || len(lc.Changes) != 1 || lc.Changes[0].Provider != randAddr {
		t.Fatalf("read-only run with new provider constraints: err = %v, want a *LockChangedError naming %s only", err, randAddr)
	}
	writeFiles(t, dir, map[string]string{"main.tf": rootConfig})

	// Module locking adopted: a call the lock file lacks is refused, by
	// Init and by Check.
	if err := os.WriteFile(lockPath, full.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"more.tf": `module "vpc2" {
  source  = "` + vpcSource + `"
  version = "~> 1.0"
}
`})
	before := snapshot(t, dir)
	_, err = install.Init(ctx, install.Options{Dir: dir, Source: staticFixtures(), Cache: c, ReadOnly: true})
	if !errors.As(err, &lc) || !slices.ContainsFunc(lc.Changes, func(ch lockfile.Change) bool { return ch.Module == "vpc2" && ch.Kind == lockfile.Added }) {
		t.Fatalf("read-only run with an unlocked call: err = %v, want a *LockChangedError adding module vpc2", err)
	}
	if snapshot(t, dir) != before {
		t.Error("a refused read-only run changed the configuration directory")
	}
	_, err = install.Check(ctx, install.CheckOptions{Dir: dir})
	var ie *install.InconsistentLockError
	if !errors.As(err, &ie) || !slices.ContainsFunc(ie.Problems, func(p install.Problem) bool { return strings.Contains(p.Message, `module "vpc2"`) }) {
		t.Fatalf("Check with an unlocked call: err = %v, want an inconsistency naming module vpc2", err)
	}
}

// TestInitReadOnlyChangedConstraint checks the error types ReadOnly
// documents for an edited constraint: one the locked version still meets
// changes the lock and is refused with a *LockChangedError; one it no
// longer meets is a *resolve.LockedMismatchError, as without ReadOnly (and
// as OpenTofu reports it), and not a *LockChangedError.
func TestInitReadOnlyChangedConstraint(t *testing.T) {
	dir := newConfig(t)
	c := openCache(t)
	lock := initAndWrite(t, install.Options{Dir: dir, Source: staticFixtures(), Cache: c}).Lock
	aws := lock.Provider(tfaddr.MustParseProviderSource(host + "/hashicorp/aws"))
	if aws == nil {
		t.Fatal("aws is not locked")
	}
	for _, tc := range []struct {
		constraint string
		mismatch   bool
	}{
		{">= 5.0", false},
		{"~> 5.0, != " + aws.Version.String(), true},
	} {
		writeFiles(t, dir, map[string]string{"main.tf": strings.Replace(rootConfig, `version = "~> 5.0"`, `version = "`+tc.constraint+`"`, 1)})
		_, err := install.Init(context.Background(), install.Options{Dir: dir, Source: staticFixtures(), Cache: c, ReadOnly: true})
		var lc *install.LockChangedError
		var mm *resolve.LockedMismatchError
		if got := errors.As(err, &mm); got != tc.mismatch {
			t.Errorf("%q: err = %v; *resolve.LockedMismatchError %v, want %v", tc.constraint, err, got, tc.mismatch)
		}
		if got := errors.As(err, &lc); got == tc.mismatch {
			t.Errorf("%q: err = %v; *install.LockChangedError %v, want %v", tc.constraint, err, got, !tc.mismatch)
		}
	}
}
