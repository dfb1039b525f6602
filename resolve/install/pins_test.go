package install_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/oci/ocitest"
)

// installed reads a file of an installed module.
func installed(t *testing.T, dir, call, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, ".terraform", "modules", call, name))
	if err != nil {
		t.Fatalf("module %q: %v", call, err)
	}
	return string(b)
}

// changeLines renders a result's lock changes, one per line.
func changeLines(res *install.Result) string {
	var lines []string
	for _, c := range res.Changes {
		lines = append(lines, c.String())
	}
	return strings.Join(lines, "\n")
}

// gitIn runs git in a repository, as its maintainer would.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := installtest.Git(context.Background(), dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestEditedPinnedRef: a call pinned by its source (git ?ref=, OCI ?tag=,
// OCI ?digest=) is locked; the user edits the pin; with the cache still
// warm, normal mode installs the new content and reports the change, and
// read-only mode refuses, naming what the configuration asks and what the
// lock records. Issue 11 item 1.
func TestEditedPinnedRef(t *testing.T) {
	w := startWorld(t)
	ctx := context.Background()
	repo, err := w.OCI.Repository("modules/storage")
	if err != nil {
		t.Fatal(err)
	}
	digests := map[string]string{}
	for _, tag := range []string{"1.0.0", "1.1.0"} {
		d, err := repo.Resolve(ctx, tag)
		if err != nil {
			t.Fatal(err)
		}
		digests[tag] = d.Digest.String()
	}
	for _, tc := range []struct {
		name, from, to   string
		file             string // installed file that tells the versions apart
		oldText, newText string
		change, asks     string
	}{
		{"git ref", installtest.Network + "?ref=v1.0.0", installtest.Network + "?ref=v1.1.0", "main.tf", `value = "1.0.0"`, `value = "1.1.0"`,
			"ref v1.0.0 -> v1.1.0", "the configuration asks for ref v1.1.0, but the lock file records ref v1.0.0"},
		{"oci tag", installtest.Storage + "?tag=1.0.0", installtest.Storage + "?tag=1.1.0", "main.tf", "# storage 1.0.0", "# storage 1.1.0",
			"tag 1.0.0 -> 1.1.0", "the configuration asks for tag 1.1.0, but the lock file records tag 1.0.0"},
		{"oci digest", installtest.Storage + "?digest=" + digests["1.0.0"], installtest.Storage + "?digest=" + digests["1.1.0"], "main.tf", "# storage 1.0.0", "# storage 1.1.0",
			"digest " + digests["1.0.0"] + " -> " + digests["1.1.0"], "digest " + digests["1.0.0"] + " -> " + digests["1.1.0"]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			c := openCache(t)
			config := func(src string) {
				writeFiles(t, dir, map[string]string{"main.tf": "module \"m\" {\n  source = \"" + src + "\"\n}\n"})
			}
			config(tc.from)
			first := initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: c})
			if got := installed(t, dir, "m", tc.file); !strings.Contains(got, tc.oldText) {
				t.Fatalf("first install: %q, want %q", got, tc.oldText)
			}
			lockPath := filepath.Join(dir, install.LockFileName)
			locked, _ := os.ReadFile(lockPath)

			// Edited, read-only: refused, nothing changes.
			config(tc.to)
			before := snapshot(t, dir)
			_, err := install.Init(ctx, install.Options{Dir: dir, Source: w.Source, Cache: c, ReadOnly: true})
			var lce *install.LockChangedError
			if !errors.As(err, &lce) || !strings.Contains(err.Error(), tc.asks) {
				t.Fatalf("read-only run after the edit: %v, want a *LockChangedError saying %q", err, tc.asks)
			}
			if after := snapshot(t, dir); after != before {
				t.Error("a refused read-only run changed the configuration directory")
			}
			// Check (what plan runs) refuses too.
			if _, err := install.Check(ctx, install.CheckOptions{Dir: dir}); err == nil {
				t.Error("Check accepted a lock file made for another ref")
			}

			// Edited, normal mode, same warm cache: the new content.
			res := initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: c})
			if got := installed(t, dir, "m", tc.file); !strings.Contains(got, tc.newText) {
				t.Errorf("after the edit: installed %q, want %q", got, tc.newText)
			}
			if got := changeLines(res); !strings.Contains(got, `module "m": repinned: `+tc.change) || strings.Contains(got, "was moved") {
				t.Errorf("changes:\n%s\nwant one saying %q", got, tc.change)
			}
			ml := res.Lock.Module("m")
			if ml == nil || len(ml.Hashes) != 1 || ml.Hashes[0] == first.Lock.Module("m").Hashes[0] {
				t.Errorf("lock entry after the edit = %+v, want only the new content's h1:", ml)
			}
			if now, _ := os.ReadFile(lockPath); string(now) == string(locked) {
				t.Error("the lock file was not updated")
			}
			// And again: nothing to change, nothing fetched.
			before2 := w.Requests()
			again := initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: c})
			if len(again.Changes) != 0 || w.Requests() != before2 {
				t.Errorf("re-run: changes %v, %d requests", again.Changes, w.Requests()-before2)
			}
			if got := installed(t, dir, "m", tc.file); !strings.Contains(got, tc.newText) {
				t.Errorf("re-run installed %q", got)
			}
			// Back to the first pin: the first content again.
			config(tc.from)
			back := initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: c})
			if got := installed(t, dir, "m", tc.file); !strings.Contains(got, tc.oldText) {
				t.Errorf("after editing back: installed %q, want %q", got, tc.oldText)
			}
			if !lockfile.Equal(back.Lock, first.Lock) {
				t.Errorf("editing back locked differently: %v", lockfile.Changes(first.Lock, back.Lock))
			}
		})
	}
}

// TestPinnedBesideConstrained: two calls of one git or OCI repository, one
// constrained and one pinned by its source, each get their own content and
// their own lock entry, run after run from a cold cache. Issue 11 item 2.
func TestPinnedBesideConstrained(t *testing.T) {
	w := startWorld(t)
	ctx := context.Background()
	repo, err := w.OCI.Repository("modules/storage")
	if err != nil {
		t.Fatal(err)
	}
	d100, err := repo.Resolve(ctx, "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	// A "latest" that is neither version, for the call without tag.
	z, err := ocitest.Zip(map[string]string{"main.tf": "# storage latest\n"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ocitest.PushModule(ctx, repo, z, "latest"); err != nil {
		t.Fatal(err)
	}
	config := `module "net_new" {
  source  = "` + installtest.Network + `"
  version = "~> 2.0"
}

module "net_old" {
  source = "` + installtest.Network + `?ref=v1.0.0"
}

module "net_tip" {
  source = "` + installtest.Network + `"
}

module "store_new" {
  source  = "` + installtest.Storage + `"
  version = "~> 1.1"
}

module "store_digest" {
  source = "` + installtest.Storage + `?digest=` + d100.Digest.String() + `"
}

module "store_tag" {
  source = "` + installtest.Storage + `?tag=1.0.0"
}

module "store_latest" {
  source = "` + installtest.Storage + `"
}
`
	want := map[string]string{
		"net_new":      `value = "2.0.0"`,
		"net_old":      `value = "1.0.0"`,
		"net_tip":      `value = "2.0.0"`,
		"store_new":    "# storage 1.1.0",
		"store_digest": "# storage 1.0.0",
		"store_tag":    "# storage 1.0.0",
		"store_latest": "# storage latest",
	}
	var firstLock []byte
	var dir string
	var c *cache.Cache
	for i := range 10 {
		dir, c = t.TempDir(), openCache(t)
		writeFiles(t, dir, map[string]string{"main.tf": config})
		res := initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: c})
		for call, text := range want {
			if got := installed(t, dir, call, "main.tf"); !strings.Contains(got, text) {
				t.Errorf("run %d: module %q installed %q, want %q", i, call, got, text)
			}
		}
		lf := res.Lock
		if m := lf.Module("net_old"); m == nil || m.Ref != "v1.0.0" || !m.Version.IsZero() || m.Hashes[0] == lf.Module("net_new").Hashes[0] {
			t.Errorf("run %d: net_old lock = %+v", i, m)
		}
		if m := lf.Module("net_new"); m == nil || m.Version.String() != "2.0.0" || m.Ref != "" {
			t.Errorf("run %d: net_new lock = %+v", i, m)
		}
		if m := lf.Module("store_digest"); m == nil || m.Digest != d100.Digest.String() || m.Tag != "" || !m.Version.IsZero() {
			t.Errorf("run %d: store_digest lock = %+v", i, m)
		}
		if m := lf.Module("store_tag"); m == nil || m.Tag != "1.0.0" || m.Digest != d100.Digest.String() {
			t.Errorf("run %d: store_tag lock = %+v", i, m)
		}
		got, _ := os.ReadFile(filepath.Join(dir, install.LockFileName))
		if i == 0 {
			firstLock = got
		} else if string(got) != string(firstLock) {
			t.Errorf("run %d locked differently:\n%s\nvs\n%s", i, got, firstLock)
		}
		if t.Failed() {
			t.Logf("lock file:\n%s", got)
			return
		}
	}
	// Warm: the pinned calls do not stop the constrained ones from being
	// answered by the lock file and the cache; nothing is contacted.
	before := w.Requests()
	res := initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: c})
	if n := w.Requests() - before; n != 0 || res.Listed != 0 || len(res.Changes) != 0 {
		t.Errorf("warm re-run: %d requests, %d listings, changes %v; want none", n, res.Listed, res.Changes)
	}
}

// TestBranchLock: a call pinned to a branch, or to no ref, locks the
// commit. After the branch moved, a fresh machine (cold cache) installs
// the locked commit and never speaks of a moved tag; -upgrade moves to the
// new head and reports it. Issue 11 item 3.
func TestBranchLock(t *testing.T) {
	w := startWorld(t)
	ctx := context.Background()
	gitDir := filepath.Join(w.GitDir, "acme", "network.git")
	for name, ref := range map[string]string{"branch": "?ref=main", "default branch": ""} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"main.tf": "module \"net\" {\n  source = \"" + installtest.Network + ref + "\"\n}\n"})
			res := initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: openCache(t)})
			locked := res.Lock.Module("net")
			head := gitIn(t, gitDir, "rev-parse", "HEAD")
			if locked == nil || locked.Commit != head || locked.Ref != strings.TrimPrefix(ref, "?ref=") {
				t.Fatalf("lock = %+v, want the commit %s", locked, head)
			}
			oldMain := installed(t, dir, "net", "main.tf")

			// The branch moves on.
			if err := os.WriteFile(filepath.Join(gitDir, "main.tf"), []byte("# moved on "+ref+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			gitIn(t, gitDir, "commit", "-q", "-a", "-m", "moved on")
			newHead := gitIn(t, gitDir, "rev-parse", "HEAD")

			freshMachine(t, dir)
			for _, readOnly := range []bool{false, true} {
				res, err := install.Init(ctx, install.Options{Dir: dir, Source: w.Source, Cache: openCache(t), ReadOnly: readOnly})
				if err != nil {
					t.Fatalf("fresh machine (read-only %v) after the branch moved: %v", readOnly, err)
				}
				if len(res.Changes) != 0 {
					t.Errorf("fresh machine: changes %v", res.Changes)
				}
				if got := installed(t, dir, "net", "main.tf"); got != oldMain {
					t.Errorf("fresh machine installed %q, want the locked commit's %q", got, oldMain)
				}
			}

			// -upgrade moves to the new head and says so.
			up := initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: openCache(t), Resolve: resolve.Options{Upgrade: true}})
			if got := installed(t, dir, "net", "main.tf"); got != "# moved on "+ref+"\n" {
				t.Errorf("upgrade installed %q", got)
			}
			if m := up.Lock.Module("net"); m == nil || m.Commit != newHead || len(m.Hashes) != 1 {
				t.Errorf("upgraded lock = %+v, want only the new head %s", m, newHead)
			}
			if got := changeLines(up); !strings.Contains(got, "commit "+head+" -> "+newHead) {
				t.Errorf("upgrade changes:\n%s\nwant the commit change", got)
			}
		})
	}
}

// TestNestedPinnedBesideConstrained: a module of the configuration calls
// a repository pinned by a ref while the root calls the same repository
// with a constraint (a child module's ?ref=v1.0.0 beside a root ~> 2.0).
// Each call gets its own content, run after run from a cold cache.
func TestNestedPinnedBesideConstrained(t *testing.T) {
	w := startWorld(t)
	app := filepath.Join(w.GitDir, "acme", "app.git")
	if err := os.MkdirAll(app, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, app, map[string]string{"main.tf": "module \"net\" {\n  source = \"" + installtest.Network + "?ref=v1.0.0\"\n}\n"})
	gitIn(t, app, "init", "-q")
	gitIn(t, app, "add", "-A")
	gitIn(t, app, "commit", "-q", "-m", "app")
	config := `module "app" {
  source = "git::https://` + installtest.GitHost + `/acme/app.git"
}

module "net" {
  source  = "` + installtest.Network + `"
  version = "~> 2.0"
}
`
	for i := range 3 {
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{"main.tf": config})
		res := initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: openCache(t)})
		if got := installed(t, dir, "net", "main.tf"); !strings.Contains(got, `value = "2.0.0"`) {
			t.Errorf("run %d: root call installed %q", i, got)
		}
		if got := installed(t, dir, "app.net", "main.tf"); !strings.Contains(got, `value = "1.0.0"`) {
			t.Errorf("run %d: nested pinned call installed %q", i, got)
		}
		if m := res.Lock.Module("app.net"); m == nil || m.Ref != "v1.0.0" || !m.Version.IsZero() {
			t.Errorf("run %d: app.net lock = %+v", i, m)
		}
		if m := res.Lock.Module("net"); m == nil || m.Version.String() != "2.0.0" {
			t.Errorf("run %d: net lock = %+v", i, m)
		}
	}
}
