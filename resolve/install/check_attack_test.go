package install_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
)

// TestAttackCheckModuleEntryWithoutUsableHash: a lock file whose module
// entry holds only a hash tflock cannot compute (h9:), or none, and an
// installed module whose files were then changed. Init refuses such an
// entry read-only (nothing in it can be checked); Check must not accept
// the install as the locked module either.
func TestAttackCheckModuleEntryWithoutUsableHash(t *testing.T) {
	w := startWorldWith(t, installtest.Options{NoGit: true})
	for name, module := range map[string][]hash.Hash{"h9": {"h9:whatever"}, "none": {}} {
		t.Run(name, func(t *testing.T) {
			dir := unverifiableLock(t, w, nil, module)
			if _, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: openCache(t)}); err != nil {
				t.Fatal(err)
			}
			lock := readLock(t, dir)
			writeFiles(t, filepath.Join(dir, ".terraform", "modules", "vpc"), map[string]string{"main.tf": "output \"x\" {\n  value = \"evil\"\n}\n"})
			cr, err := install.Check(context.Background(), install.CheckOptions{Dir: dir})
			var me *install.ModuleMismatchError
			if !errors.As(err, &me) || me.Call != "vpc" || !strings.Contains(err.Error(), "no hash of it that tflock can check") {
				t.Errorf("Check: %v, want a *ModuleMismatchError of vpc saying no hash can be checked; lock:\n%s", err, lock)
			}
			if len(cr.Problems) != 1 || cr.Problems[0].Kind != install.ProblemModuleMismatch {
				t.Errorf("problems %v", cr.Problems)
			}
		})
	}
}
