package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source"
)

// TestDemoInstallAfterProvidersLock is the sequence of issue 11 item 5
// through the program: providers-lock for several platforms into the
// shared cache, then a normal run from the same cache must install this
// platform's executables, not another's found by a locked hash.
func TestDemoInstallAfterProvidersLock(t *testing.T) {
	if err := installtest.HaveGit(); err != nil {
		t.Skip(err)
	}
	tmp := t.TempDir()
	work, cacheDir := filepath.Join(tmp, "work"), filepath.Join(tmp, "cache")
	common := []string{"-work", work, "-cache-dir", cacheDir}
	args := []string{"providers-lock"}
	for _, p := range installtest.Platforms() {
		args = append(args, "-platform", p)
	}
	if out, code := runLock(t, append(args, common...)...); code != 0 {
		t.Fatalf("providers-lock: exit %d\n%s", code, out)
	}
	if out, code := runLock(t, common...); code != 0 {
		t.Fatalf("run after providers-lock: exit %d\n%s", code, out)
	}
	exes, err := filepath.Glob(filepath.Join(work, ".terraform", "providers", "*", "*", "*", "*", "*", "terraform-provider-*"))
	if err != nil || len(exes) == 0 {
		t.Fatalf("no provider installed: %v", err)
	}
	for _, exe := range exes {
		if filepath.Base(filepath.Dir(exe)) != source.CurrentPlatform.String() {
			t.Errorf("%s installed outside this platform's directory", exe)
			continue
		}
		b, err := os.ReadFile(exe)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), " "+source.CurrentPlatform.String()+" (registrytest)") {
			t.Errorf("%s is another platform's executable: %q", exe, strings.SplitN(string(b), "\n", 3)[1])
		}
	}
}
