package gittest_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/git"
	"github.com/tflock/tflock/source/git/gittest"
)

func network(t *testing.T, s *gittest.Server) *gittest.Repo {
	t.Helper()
	r, err := s.Repo("acme/network",
		gittest.Commit{Files: map[string]string{"main.tf": "# 1.0.0\n", "modules/a/main.tf": "# a\n"}, Tags: []string{"v1.0.0"}},
		gittest.Commit{Files: map[string]string{"main.tf": "# 1.1.0\n"}, Tags: []string{"v1.1.0"}},
	)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestServeTags: the git source lists and fetches a repository of the
// server by its stable address, over smart HTTP; two servers made alike
// give the same addresses and the same commits.
func TestServeTags(t *testing.T) {
	ctx := context.Background()
	var commits []string
	for range 2 {
		s := gittest.New(t, gittest.Options{})
		r := network(t, s)
		if got, want := r.Source(), "git::https://git.example.test/acme/network.git"; got != want {
			t.Fatalf("Source() = %q, want %q", got, want)
		}
		src := git.NewSource(s.SourceOptions())
		av, err := src.Versions(ctx, source.ModulePackage{Source: r.Source()})
		if err != nil {
			t.Fatal(err)
		}
		var vs []string
		for _, a := range av {
			vs = append(vs, a.Version.String())
		}
		if strings.Join(vs, " ") != "1.0.0 1.1.0" {
			t.Errorf("versions = %q, want 1.0.0 1.1.0", vs)
		}
		dir := filepath.Join(t.TempDir(), "pkg")
		f, err := src.Fetch(ctx, source.ModulePackage{Source: r.Source(), Version: versions.MustParse("1.1.0")}, dir)
		if err != nil {
			t.Fatal(err)
		}
		want, err := r.Rev("v1.1.0")
		if err != nil {
			t.Fatal(err)
		}
		if f.Pin != want {
			t.Errorf("fetched commit %s, want v1.1.0's %s", f.Pin, want)
		}
		b, err := os.ReadFile(filepath.Join(dir, "main.tf"))
		if err != nil || string(b) != "# 1.1.0\n" {
			t.Errorf("main.tf = %q, %v", b, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "modules", "a")); !os.IsNotExist(err) {
			t.Errorf("a file of the previous commit is in the new one: %v", err)
		}
		if s.Requests() == 0 {
			t.Error("the server saw no request")
		}
		commits = append(commits, want)
	}
	if commits[0] != commits[1] {
		t.Errorf("the same repository made twice has commits %s and %s", commits[0], commits[1])
	}
}

// TestBasicAuth: a server with basic auth refuses git without credentials
// (an error, without the password) and serves it with them in the
// address.
func TestBasicAuth(t *testing.T) {
	ctx := context.Background()
	s := gittest.New(t, gittest.Options{Host: "private.example.test", Auth: &gittest.BasicAuth{Username: "bot", Password: "s3cret-pw"}})
	r := network(t, s)
	src := git.NewSource(s.SourceOptions())
	_, err := src.Versions(ctx, source.ModulePackage{Source: r.Source()})
	if err == nil {
		t.Fatal("listed without credentials")
	}
	withCreds := strings.Replace(r.Source(), "https://", "https://bot:s3cret-pw@", 1)
	av, err := src.Versions(ctx, source.ModulePackage{Source: withCreds})
	if err != nil {
		t.Fatal(err)
	}
	if len(av) != 2 {
		t.Errorf("versions = %v, want two", av)
	}
	_, err = src.Versions(ctx, source.ModulePackage{Source: strings.Replace(withCreds, "s3cret-pw", "wrong-pw", 1)})
	if err == nil || strings.Contains(err.Error(), "wrong-pw") {
		t.Errorf("wrong password: err = %v, want an error without the password", err)
	}

	// Go code reaches the server by its name too.
	req, _ := http.NewRequest(http.MethodGet, r.URL()+"/info/refs?service=git-upload-pack", nil)
	req.SetBasicAuth("bot", "s3cret-pw")
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "refs/tags/v1.1.0") {
		t.Errorf("GET info/refs: %s %q", resp.Status, body)
	}
}

// TestMovedTag: a commit that reuses a tag moves it, as a force-push of a
// tag does upstream.
func TestMovedTag(t *testing.T) {
	s := gittest.New(t, gittest.Options{})
	r := network(t, s)
	before, _ := r.Rev("v1.0.0")
	id, err := r.Commit(gittest.Commit{Files: map[string]string{"main.tf": "# moved\n"}, Tags: []string{"v1.0.0"}})
	if err != nil {
		t.Fatal(err)
	}
	after, _ := r.Rev("v1.0.0")
	if after != id || after == before {
		t.Errorf("v1.0.0 points to %s, want the new commit %s (was %s)", after, id, before)
	}
	if _, err := s.Repo("../escape"); err == nil {
		t.Error("a repository name leaving the server's directory is accepted")
	}
}

// TestSourceOptionsOverrideInherited: the certificate reaches git even
// when the environment names another CA file (GIT_SSL_CAINFO, which git
// lets override its configuration): git.Options.Env replaces it.
func TestSourceOptionsOverrideInherited(t *testing.T) {
	t.Setenv("GIT_SSL_CAINFO", filepath.Join(t.TempDir(), "other-ca.pem"))
	s := gittest.New(t, gittest.Options{})
	r := network(t, s)
	if _, err := git.NewSource(s.SourceOptions()).Versions(context.Background(), source.ModulePackage{Source: r.Source()}); err != nil {
		t.Fatal(err)
	}
	// Without the Env override, the inherited setting wins and the
	// server's certificate is not trusted.
	opts := s.SourceOptions()
	opts.Env = nil
	if _, err := git.NewSource(opts).Versions(context.Background(), source.ModulePackage{Source: r.Source()}); err == nil {
		t.Error("git trusted the server without its certificate")
	}
}
