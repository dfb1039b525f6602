package git_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tflock/tflock/internal/leaktest"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/git"
	"github.com/tflock/tflock/source/git/gittest"
)

// TestCredentialsNotInCache fetches a repository over smart HTTP behind
// basic auth, credentials in the URL, with a clone cache: no file of the
// cache (the bare clone's FETCH_HEAD and configuration, the tag list)
// names or holds them, and no temporary file is left. The same repository
// with other credentials is the same cache entry: its fetch is a cache
// hit.
func TestCredentialsNotInCache(t *testing.T) {
	token := leaktest.Secret(t, "token")
	other := leaktest.Secret(t, "other")
	check := leaktest.New(t, token, other)
	// The server takes any credentials, so that two addresses differing
	// only by them both work.
	srv := gittest.New(t, gittest.Options{})
	if _, err := srv.Repo("net", gittest.Commit{Files: map[string]string{"main.tf": "# one\n"}, Tags: []string{"v1.0.0"}}); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	cacheDir := t.TempDir()
	var events []source.Event
	var warnings []string
	s := git.NewSource(git.Options{CacheDir: cacheDir, Events: source.EventsFunc(func(e source.Event) { events = append(events, e) }), Warn: func(m string) { warnings = append(warnings, m) }})
	ctx := context.Background()
	for i, pass := range []string{token, other} {
		pkg := source.ModulePackage{Source: "git::" + srv.LoopbackURLWithCredentials("alice", pass) + "/net.git", Version: versions.MustParse("1.0.0")}
		if _, err := s.Versions(ctx, pkg); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "m")
		f, err := s.Fetch(ctx, pkg, dir)
		if err != nil {
			t.Fatal(err)
		}
		check.Text("the location", f.Location)
		check.Tree(dir)
		hits := 0
		for _, e := range events {
			check.Text("the "+e.Kind.String()+" event", fmt.Sprintf("%#v", e)+e.Package.String())
			if e.Kind == source.EventCacheHit {
				hits++
			}
		}
		if i == 1 && hits == 0 {
			t.Error("the fetch with other credentials is not a cache hit")
		}
		events = nil
	}
	check.Text("the warnings", strings.Join(warnings, "\n"))
	check.Tree(cacheDir)
	entries, err := os.ReadDir(cacheDir)
	if err != nil || len(entries) != 1 {
		t.Errorf("cache holds %d entries (%v), want one for the repository", len(entries), err)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "tflock-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestCredentialsNotInGitErrors: git's messages for a refused password, an
// unreachable host and an unreachable ssh host given a key are shown
// without the password or the key, and the key's temporary file is gone.
func TestCredentialsNotInGitErrors(t *testing.T) {
	token := leaktest.Secret(t, "token")
	wrong := leaktest.Secret(t, "wrong")
	key, keyText := leaktest.SSHKey(t)
	check := leaktest.New(t, token, wrong, key, keyText)
	srv := gittest.New(t, gittest.Options{Auth: &gittest.BasicAuth{Username: "alice", Password: token}})
	if _, err := srv.Repo("net", gittest.Commit{Files: map[string]string{"main.tf": "# one\n"}, Tags: []string{"v1.0.0"}}); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Setenv("GIT_SSH_COMMAND", "ssh -o BatchMode=yes -o StrictHostKeyChecking=no -o ConnectTimeout=5")
	for name, src := range map[string]string{
		"refused password": "git::" + srv.LoopbackURLWithCredentials("alice", wrong) + "/net.git?ref=v1.0.0",
		"unreachable host": "git::http://alice:" + token + "@127.0.0.1:1/net.git?ref=v1.0.0",
		"ssh key":          "git::ssh://git@127.0.0.1:1/net.git?ref=v1.0.0&sshkey=" + key,
	} {
		t.Run(name, func(t *testing.T) {
			check := check.With(t)
			s := git.NewSource(git.Options{CacheDir: t.TempDir()})
			pkg := source.ModulePackage{Source: src, Ref: "v1.0.0"}
			_, err := s.Fetch(context.Background(), pkg, filepath.Join(t.TempDir(), "m"))
			if err == nil {
				t.Fatal("no error")
			}
			check.Text("the error", err.Error())
			var ce *git.CommandError
			if !errors.As(err, &ce) {
				t.Fatalf("%v is not a git command error", err)
			}
			check.Text("the command's stderr", ce.Stderr)
			check.Text("the command's arguments", strings.Join(ce.Args, " "))
			if !strings.Contains(err.Error(), "REDACTED") {
				t.Errorf("the error does not show where the credentials were: %v", err)
			}
			if left, _ := filepath.Glob(filepath.Join(tmp, "tflock-*")); len(left) != 0 {
				t.Errorf("temporary files left: %v", left)
			}
		})
	}
}
