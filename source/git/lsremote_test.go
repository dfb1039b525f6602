package git_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/git"
)

// gitShim is a git executable that runs the real one and records, for
// every "git ls-remote", its arguments, the lines it printed and the refs
// the client received from the server (from GIT_TRACE_PACKET).
type gitShim struct {
	t                 *testing.T
	path              string
	args, out, packet string // log files
}

func newGitShim(t *testing.T) *gitShim {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the git shim is a shell script")
	}
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	g := &gitShim{t: t, path: filepath.Join(dir, "git"),
		args: filepath.Join(dir, "args.log"), out: filepath.Join(dir, "out.log"), packet: filepath.Join(dir, "packet.log")}
	script := fmt.Sprintf(`#!/bin/sh
if [ "$1" != ls-remote ]; then exec %[1]q "$@"; fi
printf '%%s\n' "$*" >> %[2]q
tmp=%[5]q/out.$$
GIT_TRACE_PACKET=%[4]q %[1]q "$@" > "$tmp"
rc=$?
cat "$tmp" >> %[3]q
cat "$tmp"
rm -f "$tmp"
exit $rc
`, real, g.args, g.out, g.packet, dir)
	if err := os.WriteFile(g.path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return g
}

// reset forgets what was recorded.
func (g *gitShim) reset() {
	for _, p := range []string{g.args, g.out, g.packet} {
		os.Remove(p)
	}
}

// calls returns the argument lists of the ls-remote runs.
func (g *gitShim) calls() []string {
	b, _ := os.ReadFile(g.args)
	if len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// printed returns the ref names ls-remote printed.
func (g *gitShim) printed() []string {
	b, _ := os.ReadFile(g.out)
	var refs []string
	for line := range strings.Lines(string(b)) {
		if _, name, ok := strings.Cut(strings.TrimSpace(line), "\t"); ok {
			refs = append(refs, name)
		}
	}
	return refs
}

var receivedRe = regexp.MustCompile(`ls-remote< [0-9a-f]{40} (\S+)`)

// received returns the ref names the client received from the server.
func (g *gitShim) received() []string {
	b, _ := os.ReadFile(g.packet)
	var refs []string
	for _, m := range receivedRe.FindAllStringSubmatch(string(b), -1) {
		refs = append(refs, m[1])
	}
	return refs
}

func countPrefix(names []string, prefix string) int {
	n := 0
	for _, s := range names {
		if strings.HasPrefix(s, prefix) {
			n++
		}
	}
	return n
}

// TestPinnedRefAsksForOneRef: a call pinned by a ref asks the remote for
// its branches and tags only (the one listing that also gives versions),
// not for every ref of a repository with hundreds of refs/pull/*; a full
// commit id asks nothing; a ref outside branches and tags, and the
// default branch, print that ref only.
func TestPinnedRefAsksForOneRef(t *testing.T) {
	root := t.TempDir()
	f := newFixture(t, filepath.Join(root, "mod.git"))
	var stdin strings.Builder
	const pulls = 500
	for i := 1; i <= pulls; i++ {
		c := f.c4
		if i == 7 {
			c = f.c1
		}
		fmt.Fprintf(&stdin, "create refs/pull/%d/head %s\n", i, c)
	}
	cmd := exec.Command("git", "update-ref", "--stdin")
	cmd.Dir, cmd.Env, cmd.Stdin = f.repo.dir, testEnv(), strings.NewReader(stdin.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git update-ref: %v\n%s", err, out)
	}
	if n := strings.Count(runGit(t, f.repo.dir, "ls-remote", "."), "\n") + 1; n < pulls {
		t.Fatalf("fixture has %d refs, want more than %d", n, pulls)
	}

	shim := newGitShim(t)
	src := "git::" + f.repo.fileURL()
	ctx := context.Background()
	for _, tc := range []struct {
		name, ref, version string
		commit             string
		wantPrinted        []string // exactly what ls-remote printed; nil: branches and tags
		wantCalls          int
		noPulls            bool // the server sent no refs/pull/*
	}{
		{name: "branch", ref: "main", commit: f.c4, wantCalls: 1, noPulls: true},
		{name: "annotated tag", ref: "1.1.0", commit: f.c2, wantCalls: 1, noPulls: true},
		{name: "lightweight tag", ref: "v1.0.0", commit: f.c1, wantCalls: 1, noPulls: true},
		{name: "full commit", ref: f.c3, commit: f.c3, wantCalls: 0},
		{name: "short commit", ref: f.c3[:12], commit: f.c3, wantCalls: 1, noPulls: true},
		{name: "pull ref", ref: "refs/pull/7/head", commit: f.c1, wantPrinted: []string{"refs/pull/7/head"}, wantCalls: 1},
		{name: "default branch", commit: f.c4, wantPrinted: []string{"HEAD"}, wantCalls: 1},
		{name: "version", version: "1.1.0", commit: f.c2, wantCalls: 1, noPulls: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shim.reset()
			// A fresh cache each time, so that every fetch asks the remote.
			s := git.NewSource(git.Options{GitPath: shim.path, CacheDir: t.TempDir()})
			pkg := source.ModulePackage{Source: src, Ref: tc.ref}
			if tc.version != "" {
				pkg.Version = mustVersion(t, tc.version)
			}
			got, err := s.Fetch(ctx, pkg, filepath.Join(t.TempDir(), "out"))
			if err != nil {
				t.Fatal(err)
			}
			if got.Pin != tc.commit {
				t.Errorf("Pin = %s, want %s", got.Pin, tc.commit)
			}
			calls := shim.calls()
			if len(calls) != tc.wantCalls {
				t.Fatalf("ls-remote ran %d times (%q), want %d", len(calls), calls, tc.wantCalls)
			}
			printed := shim.printed()
			if tc.wantPrinted == nil && tc.wantCalls > 0 {
				// The branches and tags, no other ref.
				if n := len(printed) - countPrefix(printed, "refs/tags/") - countPrefix(printed, "refs/heads/"); n != 0 || countPrefix(printed, "refs/tags/") == 0 {
					t.Errorf("listing the branches and tags printed %d other refs: %q", n, printed)
				}
			} else if strings.Join(printed, " ") != strings.Join(tc.wantPrinted, " ") {
				t.Errorf("ls-remote printed %q, want %q (args %q)", printed, tc.wantPrinted, calls)
			}
			if tc.noPulls {
				recv := shim.received()
				if len(recv) == 0 {
					t.Fatal("no packet trace recorded")
				}
				if n := countPrefix(recv, "refs/pull/"); n != 0 {
					t.Errorf("the server sent %d refs/pull/* refs of %d refs", n, len(recv))
				}
			}
		})
	}

	// The same repository asked twice with one cache: the second fetch of
	// the pinned branch lists the branches and tags again (a branch moves)
	// and is served from the cache.
	t.Run("warm cache", func(t *testing.T) {
		cache := t.TempDir()
		s := git.NewSource(git.Options{GitPath: shim.path, CacheDir: cache})
		for i := range 2 {
			shim.reset()
			got, err := s.Fetch(ctx, source.ModulePackage{Source: src, Ref: "main"}, filepath.Join(t.TempDir(), "out"))
			if err != nil {
				t.Fatal(err)
			}
			if got.Pin != f.c4 {
				t.Errorf("run %d: Pin = %s, want %s", i, got.Pin, f.c4)
			}
			if p := shim.printed(); len(p) == 0 || len(p) != countPrefix(p, "refs/heads/")+countPrefix(p, "refs/tags/") {
				t.Errorf("run %d: ls-remote printed %q", i, p)
			}
		}
	})
}
