package install_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tflock/tflock/internal/leaktest"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/assemble"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/git"
	"github.com/tflock/tflock/source/git/gittest"
	"github.com/tflock/tflock/source/oci"
	"github.com/tflock/tflock/source/oci/ocitest"
	"github.com/tflock/tflock/source/registry"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// checkEvents checks every field of every event, and the package's String
// and ForDisplay.
func checkEvents(c *leaktest.Checker, where string, ev []source.Event) {
	for _, e := range ev {
		s := fmt.Sprintf("%#v", e)
		if e.Package != nil {
			s += "\n" + e.Package.String() + "\n" + e.Package.ForDisplay()
		}
		c.Text(where+": "+e.Kind.String()+" event", s)
	}
}

// messages collects warnings from the sources' Warn callbacks.
type messages struct {
	mu   sync.Mutex
	msgs []string
}

func (m *messages) add(s string) {
	m.mu.Lock()
	m.msgs = append(m.msgs, s)
	m.mu.Unlock()
}

func (m *messages) all() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return strings.Join(m.msgs, "\n")
}

// credentialWorld is a git server, a registry and an OCI registry, each
// demanding credentials.
type credentialWorld struct {
	git      *gittest.Server
	registry *registrytest.Server
	oci      *ocitest.Server
	archive  *httptest.Server // a module zip behind basic auth (git's user and token)

	gitUser, gitToken string // the git server's basic auth
	regToken          string // the registry's bearer token
	ociUser, ociPass  string // the OCI registry's basic auth
	sshKey            string // an "sshkey" argument (base64)
	sshKeyText        string // the distinctive part of the key it encodes
	dockerConfig      string // a docker config file with the OCI credentials
}

func startCredentialWorld(t *testing.T) *credentialWorld {
	t.Helper()
	if err := installtest.HaveGit(); err != nil {
		t.Skip(err)
	}
	w := &credentialWorld{
		gitUser:  "alice",
		gitToken: leaktest.Secret(t, "gitTOKEN"),
		regToken: leaktest.Secret(t, "regTOKEN"),
		ociUser:  "bob",
		ociPass:  leaktest.Secret(t, "ociPASS"),
	}
	w.sshKey, w.sshKeyText = leaktest.SSHKey(t)
	w.git = gittest.New(t, gittest.Options{Auth: &gittest.BasicAuth{Username: w.gitUser, Password: w.gitToken}})
	for _, name := range []string{"net", "pinned"} {
		var commits []gittest.Commit
		for _, v := range []string{"1.0.0", "1.1.0"} {
			commits = append(commits, gittest.Commit{Files: map[string]string{"main.tf": "# " + name + ".git " + v + "\n"}, Tags: []string{"v" + v}})
		}
		if _, err := w.git.Repo(name, commits...); err != nil {
			t.Fatal(err)
		}
	}

	var err error
	// A registry module whose download location is the git repository,
	// credentials inline, as a private registry may answer.
	fx := installtest.DefaultFixtures()
	fx.Modules = append(fx.Modules, registrytest.Module{
		Addr:     installtest.RegistryHost + "/acme/private/git",
		Versions: []registrytest.ModuleVersion{{Version: "1.0.0", Location: "git::" + w.gitURL("net.git", w.gitToken) + "?ref=v1.0.0"}},
	})
	w.registry, err = registrytest.Start(fx, registrytest.Options{Hosts: []string{installtest.RegistryHost}, Token: w.regToken})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.registry.Close)

	w.oci = ocitest.NewServer(ocitest.ServerOptions{Username: w.ociUser, Password: w.ociPass})
	t.Cleanup(w.oci.Close)
	repo, err := w.oci.Repository("modules/storage")
	if err != nil {
		t.Fatal(err)
	}
	z, err := ocitest.Zip(map[string]string{"main.tf": "# storage\n"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ocitest.PushModule(context.Background(), repo, z, "1.0.0"); err != nil {
		t.Fatal(err)
	}
	zip, err := ocitest.Zip(map[string]string{"main.tf": "# archive\n"})
	if err != nil {
		t.Fatal(err)
	}
	w.archive = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != w.gitUser || p != w.gitToken {
			rw.Header().Set("WWW-Authenticate", `Basic realm="archive"`)
			http.Error(rw, "authentication required", http.StatusUnauthorized)
			return
		}
		rw.Header().Set("Content-Type", "application/zip")
		_, _ = rw.Write(zip)
	}))
	t.Cleanup(w.archive.Close)
	w.dockerConfig = filepath.Join(t.TempDir(), "config.json")
	w.writeDockerConfig(t, w.ociPass)
	return w
}

// writeDockerConfig writes the docker config file with the OCI user and
// the given password.
func (w *credentialWorld) writeDockerConfig(t *testing.T, password string) {
	t.Helper()
	cfg := map[string]any{"auths": map[string]any{
		w.oci.Host(): map[string]string{"auth": base64.StdEncoding.EncodeToString([]byte(w.ociUser + ":" + password))},
	}}
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(w.dockerConfig, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// gitURL returns the URL of the repository name with the given password.
func (w *credentialWorld) gitURL(name, password string) string {
	return w.git.LoopbackURLWithCredentials(w.gitUser, password) + "/" + name
}

// sources builds the sources of a run: git with its clone cache in
// gitCache, the registry with token regToken, OCI with the docker config.
// Warnings go to warn, events to events.
func (w *credentialWorld) sources(gitCache, regToken string, events source.Events, warn *messages) *assemble.Dispatch {
	d := &assemble.Dispatch{}
	d.Providers = registry.NewSource(registry.Options{
		HTTPClient:  w.registry.Client(),
		DefaultHost: installtest.RegistryHost,
		Credentials: registry.Tokens{installtest.RegistryHost: regToken},
		Events:      events,
		Warn:        warn.add,
	})
	d.Git = git.NewSource(git.Options{CacheDir: gitCache, Events: events, Warn: warn.add})
	ociOpts := w.oci.SourceOptions(nil)
	ociOpts.ConfigFiles = []string{w.dockerConfig}
	ociOpts.Events = events
	d.OCI = oci.NewSource(ociOpts)
	return d
}

// config is a root module calling a git module by version and a pinned
// git module with an "sshkey" argument (both with the git server's
// credentials inline), two registry modules (one whose download location
// is the git repository, credentials inline), an OCI module and a
// registry provider, and an HTTP archive module with credentials inline.
func (w *credentialWorld) config(gitPassword string) (text, netSource, pinnedSource string) {
	netSource = "git::" + w.gitURL("net.git", gitPassword)
	pinnedSource = "git::" + w.gitURL("pinned.git", gitPassword) + "?ref=v1.0.0&sshkey=" + w.sshKey
	text = `terraform {
  required_providers {
    dns = {
      source  = "registry.example.test/acme/dns"
      version = "~> 2.0"
    }
  }
}

module "net" {
  source  = "` + netSource + `"
  version = "~> 1.0"
}

module "pinned" {
  source = "` + pinnedSource + `"
}

module "vpc" {
  source  = "registry.example.test/acme/vpc/cloud"
  version = "1.0.0"
}

module "storage" {
  source = "oci://` + w.oci.Host() + `/modules/storage?tag=1.0.0"
}

module "private" {
  source  = "registry.example.test/acme/private/git"
  version = "1.0.0"
}

module "archive" {
  source = "` + strings.Replace(w.archive.URL, "://", "://"+w.gitUser+":"+gitPassword+"@", 1) + `/m.zip"
}
`
	return text, netSource, pinnedSource
}

// TestCredentialsNeverLeave runs Init against a git server, a registry
// and an OCI registry that all demand credentials, given inline in git
// module sources ("https://user:token@host", "?sshkey="), as a registry
// token and in a docker config file: cold, then warm, then in a fresh
// working directory served by the warm cache. No event, warning, error,
// explanation, lock file, cache file (name or content) or installed file
// holds a credential; modules.json keeps the sources as written, as tofu
// does.
func TestCredentialsNeverLeave(t *testing.T) {
	w := startCredentialWorld(t)
	check := leaktest.New(t, w.gitToken, w.regToken, w.ociPass, w.sshKey, w.sshKeyText)
	cacheRoot := t.TempDir()
	rec := &recorder{}
	warn := &messages{}
	c, err := cache.Open(filepath.Join(cacheRoot, "packages"), cache.Options{Events: rec})
	if err != nil {
		t.Fatal(err)
	}
	src := w.sources(filepath.Join(cacheRoot, "git"), w.regToken, rec, warn)
	text, netSource, pinnedSource := w.config(w.gitToken)

	wantModules := map[string]string{
		"net":     "# net.git 1.1.0\n",
		"pinned":  "# pinned.git 1.0.0\n",
		"private": "# net.git 1.0.0\n",
		"storage": "# storage\n",
		"archive": "# archive\n",
	}
	run := func(name, dir string, opts install.Options) *install.Result {
		t.Helper()
		opts.Dir, opts.Source, opts.Cache, opts.Events = dir, src, c, rec
		res := initAndWrite(t, opts)
		ev := rec.take()
		if len(ev) == 0 {
			t.Fatalf("%s: no events", name)
		}
		checkEvents(check, name, ev)
		check.Text(name+": warnings", warn.all()+"\n"+strings.Join(res.Warnings, "\n"))
		var b strings.Builder
		if err := res.Explain(&b); err != nil {
			t.Fatal(err)
		}
		for _, ch := range res.Changes {
			b.WriteString(ch.String() + "\n")
		}
		check.Text(name+": explanation and changes", b.String())
		lock, err := os.ReadFile(filepath.Join(dir, install.LockFileName))
		if err != nil {
			t.Fatal(err)
		}
		check.Text(name+": lock file", string(lock))
		for _, want := range []string{"git::" + w.git.LoopbackURL() + "/net.git", "git::" + w.git.LoopbackURL() + "/pinned.git"} {
			if !strings.Contains(string(lock), `"`+want+`"`) {
				t.Errorf("%s: the lock file does not record the source %s:\n%s", name, want, lock)
			}
		}
		check.Tree(cacheRoot)
		check.Tree(filepath.Join(dir, ".terraform"), "modules/"+install.ManifestFile)
		checkManifestSources(t, name, dir, map[string]string{"net": netSource, "pinned": pinnedSource})
		for key, want := range wantModules {
			b, err := os.ReadFile(filepath.Join(dir, ".terraform", "modules", key, "main.tf"))
			if err != nil || string(b) != want {
				t.Errorf("%s: module %s has main.tf %q (%v), want %q", name, key, b, err, want)
			}
		}
		return res
	}

	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": text})
	res := run("cold", dir, install.Options{})
	if res.Downloads == 0 {
		t.Fatalf("cold: nothing downloaded")
	}
	// The git server was answered with the credentials (git asks without
	// them first and sends them when challenged).
	if w.git.Requests() <= w.git.Refused() {
		t.Errorf("git server: %d requests, %d refused; want some served", w.git.Requests(), w.git.Refused())
	}

	res = run("warm", dir, install.Options{})
	if res.Downloads != 0 {
		t.Errorf("warm: %d downloads, want 0", res.Downloads)
	}

	// A fresh working directory with the lock file: everything comes from
	// the cache, through the cache-hit paths.
	fresh := t.TempDir()
	lock, err := os.ReadFile(filepath.Join(dir, install.LockFileName))
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, fresh, map[string]string{"main.tf": text, install.LockFileName: string(lock)})
	res = run("fresh directory", fresh, install.Options{})
	if res.Downloads != 0 {
		t.Errorf("fresh directory: %d downloads, want 0", res.Downloads)
	}

	run("upgrade", dir, install.Options{Resolve: resolve.Options{Upgrade: true}})
}

// checkManifestSources checks that modules.json records each call's source
// as written, credentials included, as tofu does: it compares the record
// with the configuration to decide whether a module must be installed
// again.
func checkManifestSources(t *testing.T, name, dir string, want map[string]string) {
	t.Helper()
	m, err := install.ReadManifest(filepath.Join(dir, ".terraform", "modules", install.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range m.Modules {
		got[r.Key] = r.Source
	}
	for key, src := range want {
		if got[key] != src {
			t.Errorf("%s: modules.json records %q for %s, want %q as written (as tofu does)", name, got[key], key, src)
		}
	}
}

// TestCredentialsNotInFailures runs Init where a credential is refused or
// a host cannot be reached: the error, the events and the cache hold no
// credential.
func TestCredentialsNotInFailures(t *testing.T) {
	w := startCredentialWorld(t)
	wrongGit := leaktest.Secret(t, "wrongGIT")
	wrongReg := leaktest.Secret(t, "wrongREG")
	wrongOCI := leaktest.Secret(t, "wrongOCI")
	check := leaktest.New(t, w.gitToken, w.regToken, w.ociPass, w.sshKey, w.sshKeyText, wrongGit, wrongReg, wrongOCI)

	tests := []struct {
		name     string
		module   string // a module block
		regToken string
		ociPass  string
		want     string // in the error
	}{
		{
			name:   "wrong git password",
			module: `module "m" {` + "\n" + `  source  = "git::` + w.gitURL("net.git", wrongGit) + `"` + "\n  version = \"~> 1.0\"\n}\n",
			want:   "REDACTED@",
		},
		{
			name:   "unreachable git host",
			module: `module "m" {` + "\n" + `  source = "git::http://alice:` + w.gitToken + `@127.0.0.1:1/net.git?ref=v1.0.0"` + "\n}\n",
			want:   "REDACTED@127.0.0.1:1",
		},
		{
			name:   "sshkey over an unreachable ssh host",
			module: `module "m" {` + "\n" + `  source = "git::ssh://git@127.0.0.1:1/net.git?ref=v1.0.0&sshkey=` + w.sshKey + `"` + "\n}\n",
			want:   "sshkey=REDACTED",
		},
		{
			name:   "version argument on an HTTP archive",
			module: `module "m" {` + "\n" + `  source  = "https://alice:` + w.gitToken + `@127.0.0.1:1/m.zip"` + "\n  version = \"1.0.0\"\n}\n",
			want:   "REDACTED@127.0.0.1:1",
		},
		{
			name:     "wrong registry token",
			module:   `module "m" {` + "\n" + `  source  = "registry.example.test/acme/vpc/cloud"` + "\n  version = \"1.0.0\"\n}\n",
			regToken: wrongReg,
			want:     "registry.example.test",
		},
		{
			name:    "wrong OCI password",
			module:  `module "m" {` + "\n" + `  source = "oci://` + w.oci.Host() + `/modules/storage?tag=1.0.0"` + "\n}\n",
			ociPass: wrongOCI,
			want:    w.oci.Host(),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check := check.With(t)
			regToken := w.regToken
			if tt.regToken != "" {
				regToken = tt.regToken
			}
			ociPass := w.ociPass
			if tt.ociPass != "" {
				ociPass = tt.ociPass
			}
			w.writeDockerConfig(t, ociPass)
			defer w.writeDockerConfig(t, w.ociPass)
			cacheRoot := t.TempDir()
			rec := &recorder{}
			warn := &messages{}
			c, err := cache.Open(filepath.Join(cacheRoot, "packages"), cache.Options{Events: rec})
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"main.tf": tt.module})
			_, err = install.Init(context.Background(), install.Options{
				Dir: dir, Cache: c, Events: rec,
				Source: w.sources(filepath.Join(cacheRoot, "git"), regToken, rec, warn),
			})
			if err == nil {
				t.Fatal("Init succeeded")
			}
			check.Text("error", err.Error())
			check.Text("error (%+v)", fmt.Sprintf("%+v", err))
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error does not name %q: %v", tt.want, err)
			}
			checkEvents(check, "failed run", rec.take())
			check.Text("warnings", warn.all())
			check.Tree(cacheRoot)
			check.Tree(dir, "main.tf")
		})
	}
}

// TestModulesJSONMatchesTofu runs tofu (named by TFLOCK_TOFU) and Init on
// the same git module calls with credentials inline (a token in the URL,
// an "sshkey" argument) and compares their modules.json records: tflock
// keeps what tofu keeps. Skipped when TFLOCK_TOFU is not set.
func TestModulesJSONMatchesTofu(t *testing.T) {
	tofu := os.Getenv("TFLOCK_TOFU")
	if tofu == "" {
		t.Skip("TFLOCK_TOFU does not name a tofu binary")
	}
	w := startCredentialWorld(t)
	netSource := "git::" + w.gitURL("net.git", w.gitToken) + "?ref=v1.1.0"
	pinnedSource := "git::" + w.gitURL("pinned.git", w.gitToken) + "?ref=v1.0.0&sshkey=" + w.sshKey
	text := "module \"net\" {\n  source = \"" + netSource + "\"\n}\n\nmodule \"pinned\" {\n  source = \"" + pinnedSource + "\"\n}\n"

	tofuDir := t.TempDir()
	writeFiles(t, tofuDir, map[string]string{"main.tf": text})
	cmd := exec.Command(tofu, "init", "-input=false", "-no-color")
	cmd.Dir = tofuDir
	cmd.Env = append(gittest.Env(), "TF_CLI_CONFIG_FILE="+filepath.Join(tofuDir, "none.tfrc"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tofu init: %v\n%s", err, out)
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": text})
	initAndWrite(t, install.Options{Dir: dir, Source: w.sources(t.TempDir(), w.regToken, nil, &messages{})})

	read := func(dir string) map[string]install.ManifestRecord {
		m, err := install.ReadManifest(filepath.Join(dir, ".terraform", "modules", install.ManifestFile))
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]install.ManifestRecord{}
		for _, r := range m.Modules {
			out[r.Key] = r
		}
		return out
	}
	want, got := read(tofuDir), read(dir)
	if want["net"].Source != netSource || want["pinned"].Source != pinnedSource {
		t.Errorf("tofu records %+v; the test expects the sources as written", want)
	}
	for key, w := range want {
		if got[key] != w {
			t.Errorf("module %q: tflock records %+v, tofu %+v", key, got[key], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("tflock records %d modules, tofu %d", len(got), len(want))
	}
}
