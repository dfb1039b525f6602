package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tflock/tflock/internal/leaktest"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source/git/gittest"
)

// TestCredentialsNotInOutput runs the program on a configuration whose git
// module sources carry credentials (a token in the URL, an "sshkey"
// argument), served by a git server demanding them: cold, warm, -upgrade,
// then with a wrong token and with an unreachable ssh host. Neither the
// output, the lock file, the cache nor the installed files show them;
// modules.json keeps the sources as written, as tofu does.
func TestCredentialsNotInOutput(t *testing.T) {
	if err := installtest.HaveGit(); err != nil {
		t.Skip(err)
	}
	token := leaktest.Secret(t, "gitTOKEN")
	wrong := leaktest.Secret(t, "wrongTOKEN")
	key, keyText := leaktest.SSHKey(t)
	check := leaktest.New(t, token, wrong, key, keyText)

	srv := gittest.New(t, gittest.Options{Auth: &gittest.BasicAuth{Username: "alice", Password: token}})
	for _, name := range []string{"net", "pinned"} {
		var commits []gittest.Commit
		for _, v := range []string{"1.0.0", "1.1.0"} {
			commits = append(commits, gittest.Commit{Files: map[string]string{"main.tf": "# " + name + ".git " + v + "\n"}, Tags: []string{"v" + v}})
		}
		if _, err := srv.Repo(name, commits...); err != nil {
			t.Fatal(err)
		}
	}
	netSource := "git::" + srv.LoopbackURLWithCredentials("alice", token) + "/net.git"
	pinnedSource := "git::" + srv.LoopbackURLWithCredentials("alice", token) + "/pinned.git?ref=v1.0.0&sshkey=" + key
	config := func(net, pinned string) string {
		return "module \"net\" {\n  source  = \"" + net + "\"\n  version = \"~> 1.0\"\n}\n\n" +
			"module \"pinned\" {\n  source = \"" + pinned + "\"\n}\n"
	}
	t.Setenv("TF_CLI_CONFIG_FILE", filepath.Join(t.TempDir(), "none.tfrc"))
	cacheDir := t.TempDir()

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "main.tf"), config(netSource, pinnedSource))
	for _, step := range [][]string{
		{"-cache-dir", cacheDir, "-explain", dir},
		{"-cache-dir", cacheDir, "-explain", dir},
		{"-cache-dir", cacheDir, "-upgrade", dir},
	} {
		out, code := runLock(t, step...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s", step, code, out)
		}
		check.Text("the output of "+strings.Join(step, " "), out)
		if shown := "git::" + strings.Replace(srv.LoopbackURL(), "://", "://REDACTED@", 1) + "/net.git"; !strings.Contains(out, shown) {
			t.Errorf("%v: the output names no module:\n%s", step, out)
		}
		lock, err := os.ReadFile(filepath.Join(dir, install.LockFileName))
		if err != nil {
			t.Fatal(err)
		}
		check.Text("the lock file", string(lock))
		for _, want := range []string{`"git::` + srv.LoopbackURL() + `/net.git"`, `"git::` + srv.LoopbackURL() + `/pinned.git"`} {
			if !strings.Contains(string(lock), want) {
				t.Errorf("the lock file lacks the source %s:\n%s", want, lock)
			}
		}
		check.Tree(cacheDir)
		check.Tree(filepath.Join(dir, ".terraform"), "modules/"+install.ManifestFile)
		m, err := install.ReadManifest(filepath.Join(dir, ".terraform", "modules", install.ManifestFile))
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, r := range m.Modules {
			got[r.Key] = r.Source
		}
		if got["net"] != netSource || got["pinned"] != pinnedSource {
			t.Errorf("modules.json records %q and %q, want the sources as written (as tofu does)", got["net"], got["pinned"])
		}
	}

	// Failures: a refused token, an unreachable ssh host with a key.
	for name, cfg := range map[string]string{
		"wrong token": config("git::"+srv.LoopbackURLWithCredentials("alice", wrong)+"/net.git", pinnedSource),
		"ssh key":     config(netSource, "git::ssh://git@127.0.0.1:1/pinned.git?ref=v1.0.0&sshkey="+key),
	} {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "main.tf"), cfg)
		out, code := runLock(t, "-cache-dir", cacheDir, dir)
		if code != 1 || !strings.Contains(out, "Error: ") {
			t.Errorf("%s: exit %d, want 1 with an error:\n%s", name, code, out)
		}
		check.Text(name+": the output", out)
		check.Tree(cacheDir)
		check.Tree(dir, "main.tf")
	}
}

// TestSampleDemoTokenNotShown runs the demo with a registry token in the
// environment, which the registry source sends: it appears nowhere.
func TestSampleDemoTokenNotShown(t *testing.T) {
	if err := installtest.HaveGit(); err != nil {
		t.Skip(err)
	}
	token := leaktest.Secret(t, "regTOKEN")
	check := leaktest.New(t, token)
	t.Setenv("TF_TOKEN_registry_example_test", token)
	tmp := t.TempDir()
	work, cacheDir := filepath.Join(tmp, "work"), filepath.Join(tmp, "cache")
	for _, args := range [][]string{
		{"-work", work, "-cache-dir", cacheDir, "-explain"},
		{"-work", work, "-cache-dir", cacheDir, "-upgrade"},
		{"providers-lock", "-work", work, "-cache-dir", cacheDir, "-platform", "linux_amd64", "-platform", "darwin_arm64"},
	} {
		out, code := runLock(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, out)
		}
		check.Text("the output", out)
		check.Tree(work)
		check.Tree(cacheDir)
	}
}
