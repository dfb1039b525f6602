package install_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source"
)

const (
	killStageEnv = "TFLOCK_ADV_KILL_STAGE" // the event kind the child stops at
	killDirEnv   = "TFLOCK_ADV_KILL_DIR"   // the configuration directory; its cache is DIR.cache
)

// stopAt is the child's event handler: at the first event of its kind, it
// says so (the file DIR.ready) and waits to be killed.
type stopAt struct {
	kind  source.EventKind
	ready string
}

func (s stopAt) Event(e source.Event) {
	if e.Kind == s.kind {
		_ = os.WriteFile(s.ready, nil, 0o644)
		select {}
	}
}

// TestAttackKillAtEachStageThenRerun: a run with the lock file of 1.0.0 is
// killed (SIGKILL) at each stage (a fetch started, a fetch done, a package
// verified, the lock file changing), then the same directory and cache
// are used again: with the lock file of 1.1.0 (read-only), then with
// 1.0.0's again. Each rerun installs exactly what its lock names, Check
// agrees, and the lock file is not touched.
func TestAttackKillAtEachStageThenRerun(t *testing.T) {
	if stage := os.Getenv(killStageEnv); stage != "" {
		dir := os.Getenv(killDirEnv)
		k, _ := strconv.Atoi(stage)
		w := startWorldWith(t, installtest.Options{NoGit: true})
		_, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: openCacheIn(dir + ".cache"), Events: stopAt{source.EventKind(k), dir + ".ready"}})
		t.Fatalf("the child was not killed: %v", err)
	}
	w := startWorldWith(t, installtest.Options{NoGit: true})
	lockOf := authorityLocks(t, w)
	for _, kind := range []source.EventKind{source.EventFetchStarted, source.EventFetchDone, source.EventVerified, source.EventLockChanged} {
		t.Run(kind.String(), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "cfg")
			// The lock file of 1.0.0 without the module, so that the run
			// changes it (a lock file change event).
			lock := lockOf["1.0.0"][:strings.Index(lockOf["1.0.0"], "module \"vpc\"")]
			writeFiles(t, dir, map[string]string{"main.tf": authorityConfig("1.0.0"), install.LockFileName: lock})
			cmd := exec.Command(os.Args[0], "-test.run=^TestAttackKillAtEachStageThenRerun$", "-test.count=1")
			cmd.Env = append(os.Environ(), killStageEnv+"="+strconv.Itoa(int(kind)), killDirEnv+"="+dir)
			var out strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
			for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				if _, err := os.Stat(dir + ".ready"); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the child never got to %s\n%s", kind, out.String())
				}
			}
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			if got := readLock(t, dir); got != lock {
				t.Errorf("the killed run changed the lock file:\n%s", got)
			}
			for _, v := range []string{"1.1.0", "1.0.0"} {
				writeFiles(t, dir, map[string]string{"main.tf": authorityConfig(v), install.LockFileName: lockOf[v]})
				res, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: openCacheIn(dir + ".cache"), ReadOnly: true})
				if err != nil {
					t.Fatalf("rerun with %s's lock: %v", v, err)
				}
				if _, err := os.Stat(filepath.Join(res.Providers[0].Dir, "terraform-provider-cloud_v"+v)); err != nil {
					t.Errorf("rerun with %s's lock: provider: %v", v, err)
				}
				if b, _ := os.ReadFile(filepath.Join(dir, ".terraform", "modules", "vpc", "README.md")); string(b) != "vpc "+v+"\n" {
					t.Errorf("rerun with %s's lock: the module has README %q", v, b)
				}
				if cr, err := install.Check(context.Background(), install.CheckOptions{Dir: dir}); err != nil || len(cr.Problems) > 0 {
					t.Errorf("Check after the rerun with %s's lock: %v %v", v, err, cr.Problems)
				}
				if got := readLock(t, dir); got != lockOf[v] {
					t.Errorf("the read-only rerun changed the lock file")
				}
			}
		})
	}
}
