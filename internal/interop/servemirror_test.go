package interop

import (
	"bytes"
	"context"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/assemble"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/cache/mirrorserve"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// mirror is tflock's cache served to stock tools by mirrorserve, over the
// world's registry as the user's CLI configuration reaches it.
type mirror struct {
	h       *mirrorserve.Handler
	srv     *mirrorserve.Server
	cache   *cache.Cache
	sources *assemble.Sources
	token   string
	tc      *mirrorserve.ToolConfig
	env     []string // the world's environment pointed at the mirror
}

// getenv reads a variable of the world's environment.
func (w *world) getenv(name string) string {
	for _, kv := range w.env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

// startMirror starts a mirror over the world's sources (the CLI
// configuration of the world, its registry) with the cache and archive
// directory every startMirror of the test shares.
func (w *world) startMirror(opts mirrorserve.ToolConfigOptions) *mirror {
	return w.startMirrorStore("", opts)
}

// startMirrorStore is startMirror with a cache and an archive directory of
// its own (their names end in store).
func (w *world) startMirrorStore(store string, opts mirrorserve.ToolConfigOptions) *mirror {
	w.t.Helper()
	return w.serveMirror(assemble.SourcesOptions{Env: w.env, Home: w.home, WorkDir: w.dir, HTTPClient: w.w.Registry.Client()}, store, opts)
}

// serveMirror serves a mirror, with a token, over the sources so gives,
// through the cache and archive directory named by store in HOME, and
// writes the tool's configuration (with the CLI configuration of the
// sources as the user's, and the world's certificates).
func (w *world) serveMirror(so assemble.SourcesOptions, store string, opts mirrorserve.ToolConfigOptions) *mirror {
	w.t.Helper()
	ctx := context.Background()
	srcs, diags := assemble.NewSources(ctx, so)
	if diags.HasErrors() {
		w.t.Fatal(diags)
	}
	c, err := cache.Open(filepath.Join(w.home, "mirror-cache"+store), cache.Options{})
	if err != nil {
		w.t.Fatal(err)
	}
	token := mirrorserve.NewToken()
	h, err := mirrorserve.New(mirrorserve.Options{Source: srcs.Source, Cache: c, Dir: filepath.Join(w.home, "mirror-archives"+store), Token: token})
	if err != nil {
		w.t.Fatal(err)
	}
	srv, err := mirrorserve.Start(ctx, h, mirrorserve.ServeOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { _ = srv.Close() })
	m := &mirror{h: h, srv: srv, cache: c, sources: srcs, token: token}
	m.tc = w.toolConfig(m, opts)
	m.env = m.tc.Environ(w.env)
	return m
}

// toolConfig writes, into a new directory, a tool configuration for m.
func (w *world) toolConfig(m *mirror, opts mirrorserve.ToolConfigOptions) *mirrorserve.ToolConfig {
	w.t.Helper()
	opts.User, opts.Token, opts.RootsFile = m.sources.Config, m.token, w.getenv("SSL_CERT_FILE")
	tc, err := mirrorserve.WriteToolConfig(w.t.TempDir(), m.srv.URL, m.srv.CertPEM, opts)
	if err != nil {
		w.t.Fatal(err)
	}
	return tc
}

// runEnv is run in another directory with another environment.
func (w *world) runIn(dir string, env []string, wantCode int, bin string, args ...string) string {
	w.t.Helper()
	saved, savedEnv := w.dir, w.env
	w.dir, w.env = dir, env
	defer func() { w.dir, w.env = saved, savedEnv }()
	return w.run(wantCode, bin, args...)
}

// unit makes another configuration directory with the world's main.tf and
// the lock file given.
func (w *world) unit(name string, lock []byte) string {
	w.t.Helper()
	dir := filepath.Join(filepath.Dir(w.dir), name)
	writeFile(w.t, filepath.Join(dir, "main.tf"), providersTF)
	if lock != nil {
		writeFile(w.t, filepath.Join(dir, ".terraform.lock.hcl"), string(lock))
	}
	return dir
}

// lockedWorld is a world whose configuration (providersTF) tflock has
// locked and installed; it returns the lock file.
func lockedWorld(t *testing.T) (*world, []byte) {
	t.Helper()
	w := newWorld(t)
	w.config(map[string]string{"main.tf": providersTF})
	w.tflock(0)
	return w, w.read(".terraform.lock.hcl")
}

func readFile(t testing.TB, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestInteropServedMirror: stock tofu (and terraform) install through
// tflock's served mirror: with the lock file tflock wrote for the
// configuration, each keeps it byte for byte (its own checksum check
// against it passes); the first unit has each package downloaded from the
// origin once, a second unit downloads nothing from the origin. The tool
// is given no credential and no address of the origin.
func TestInteropServedMirror(t *testing.T) {
	tofu := tool(t, "TFLOCK_TOFU", "tofu")
	w, lock := lockedWorld(t)
	base := w.providerDownloads()

	m := w.startMirror(mirrorserve.ToolConfigOptions{TrustAllHashes: true})
	cfg := readFile(t, m.tc.ConfigFile)
	if strings.Contains(string(cfg), "registry.example.test/acme") || strings.Count(string(cfg), "provider_installation") != 1 {
		t.Errorf("the tool configuration:\n%s", cfg)
	}

	tools := []struct{ name, bin string }{{"tofu", tofu}}
	if tf := os.Getenv("TFLOCK_TERRAFORM"); tf != "" {
		tools = append(tools, struct{ name, bin string }{"terraform", tool(t, "TFLOCK_TERRAFORM", "terraform")})
	}
	for i, tl := range tools {
		// terraform does not know trust_all_hashes (it ignores it).
		tm := m
		if tl.name == "terraform" {
			tm = w.startMirror(mirrorserve.ToolConfigOptions{})
		}
		env := tm.env
		for _, unit := range []string{"first", "second"} {
			dir := w.unit(fmt.Sprintf("%s-%s", tl.name, unit), lock)
			before := w.providerDownloads()
			out := w.runIn(dir, env, 0, tl.bin, "init", "-input=false", "-no-color")
			if got := readFile(t, filepath.Join(dir, ".terraform.lock.hcl")); !bytes.Equal(got, lock) {
				t.Errorf("%s %s unit changed the lock file tflock wrote\n--- tflock\n%s\n--- after\n%s\n%s", tl.name, unit, lock, got, out)
			}
			served := tm.h.Stats().Served
			if !strings.Contains(out, "Installed registry.example.test/acme/cloud") || served == 0 {
				t.Errorf("%s %s unit: %d archives served by the mirror; output:\n%s", tl.name, unit, served, out)
			}
			t.Logf("%s %s unit: mirror stats %+v", tl.name, unit, tm.h.Stats())
			got := w.providerDownloads() - before
			want := 0
			if unit == "first" && i == 0 {
				want = 2 // each provider's package for this platform, once
			}
			if got != want {
				t.Errorf("%s %s unit: the origin served %d package downloads, want %d\n%s", tl.name, unit, got, want, out)
			}
		}
	}
	if n := w.providerDownloads() - base; n != 2 {
		t.Errorf("the origin served %d package downloads in all, want 2", n)
	}

	// Without a lock file, tofu writes one through the mirror: its hashes
	// are among those tflock recorded.
	dir := w.unit("tofu-nolock", nil)
	w.runIn(dir, m.env, 0, tofu, "init", "-input=false", "-no-color")
	theirs := parseLock(t, readFile(t, filepath.Join(dir, ".terraform.lock.hcl")))
	mine := parseLock(t, lock)
	for pl := range theirs.Providers() {
		ml := mine.Provider(pl.Addr)
		if ml == nil || ml.Version != pl.Version {
			t.Errorf("tofu locked %s %s, tflock %v", pl.Addr, pl.Version, ml)
			continue
		}
		for _, h := range pl.Hashes {
			if !containsHash(ml.Hashes, h) {
				t.Errorf("tofu recorded %s for %s, which tflock did not", h, pl.Addr)
			}
		}
	}
}

func containsHash[T comparable](list []T, h T) bool {
	for _, v := range list {
		if v == h {
			return true
		}
	}
	return false
}

// TestInteropMirrorDirectory: a directory written by WriteDir from the
// lock file tflock wrote is a filesystem mirror and, served as static
// files, a network mirror for stock tofu: either way it keeps the lock
// file byte for byte and nothing is downloaded from the origin.
func TestInteropMirrorDirectory(t *testing.T) {
	tofu := tool(t, "TFLOCK_TOFU", "tofu")
	w, lock := lockedWorld(t)

	mdir := filepath.Join(w.home, "mirror-dir")
	w.run(0, tflockBinary(t), "mirror", "-cache-dir", filepath.Join(w.home, "tflock-cache"), "-platform", source.CurrentPlatform.String(), mdir, w.dir)
	for _, name := range []string{"index.json", "2.1.0.json"} {
		if _, err := os.Stat(filepath.Join(mdir, "registry.example.test/acme/dns", name)); err != nil {
			t.Errorf("the mirror directory has no %s: %v", name, err)
		}
	}
	before := w.providerDownloads()

	fsConfig := filepath.Join(w.home, "fs-mirror.tfrc")
	writeFile(t, fsConfig, fmt.Sprintf("provider_installation {\n  filesystem_mirror {\n    path = %q\n  }\n}\n", mdir))
	static := httptest.NewTLSServer(http.StripPrefix("/m", http.FileServer(http.Dir(mdir))))
	t.Cleanup(static.Close)
	netConfig := filepath.Join(w.home, "net-mirror.tfrc")
	writeFile(t, netConfig, fmt.Sprintf("provider_installation {\n  network_mirror {\n    url = %q\n  }\n}\n", static.URL+"/m/"))
	certs := filepath.Join(w.home, "static-certs.pem")
	var pemBuf bytes.Buffer
	pemBuf.Write(readFile(t, w.getenv("SSL_CERT_FILE")))
	pemBuf.WriteString(string(pemEncode(static.Certificate().Raw)))
	writeFile(t, certs, pemBuf.String())

	for _, c := range []struct{ name, cfg string }{{"filesystem", fsConfig}, {"network", netConfig}} {
		var env []string
		for _, kv := range w.env {
			if !strings.HasPrefix(kv, "TF_CLI_CONFIG_FILE=") && !strings.HasPrefix(kv, "SSL_CERT_FILE=") {
				env = append(env, kv)
			}
		}
		env = append(env, "TF_CLI_CONFIG_FILE="+c.cfg, "SSL_CERT_FILE="+certs)
		dir := w.unit("dir-"+c.name, lock)
		out := w.runIn(dir, env, 0, tofu, "init", "-input=false", "-no-color")
		if got := readFile(t, filepath.Join(dir, ".terraform.lock.hcl")); !bytes.Equal(got, lock) {
			t.Errorf("%s mirror: tofu changed the lock file\n--- tflock\n%s\n--- after\n%s\n%s", c.name, lock, got, out)
		}
	}

	// The directory as the user's own installation method (a CLI
	// configuration with its provider_installation block) behind the
	// served mirror: tofu gets one block, the mirror's, and the packages
	// come from the directory.
	fm := w.serveMirror(assemble.SourcesOptions{ConfigFiles: []string{fsConfig}, Env: []string{}, Home: w.home}, "-fs", mirrorserve.ToolConfigOptions{})
	tc, h := fm.tc, fm.h
	if cfg := string(readFile(t, tc.ConfigFile)); strings.Count(cfg, "provider_installation") != 1 || strings.Contains(cfg, "filesystem_mirror") {
		t.Errorf("the tool's configuration:\n%s", cfg)
	}
	dir := w.unit("dir-served", lock)
	out := w.runIn(dir, tc.Environ(w.env), 0, tofu, "init", "-input=false", "-no-color")
	if got := readFile(t, filepath.Join(dir, ".terraform.lock.hcl")); !bytes.Equal(got, lock) {
		t.Errorf("served from the user's filesystem mirror: tofu changed the lock file\n--- tflock\n%s\n--- after\n%s\n%s", lock, got, out)
	}
	if st := h.Stats(); st.Fetched != 2 || st.Served != 2 {
		t.Errorf("served from the user's filesystem mirror: %+v, want 2 fetched (from the directory) and served\n%s", st, out)
	}
	if n := w.providerDownloads() - before; n != 0 {
		t.Errorf("the origin served %d package downloads through the mirror directory", n)
	}
}

func pemEncode(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// TestInteropServedMirrorCompleteLock: for a provider of OpenTofu's default
// registry, a tofu told to trust the mirror's hashes (trust_all_hashes,
// which the served configuration can set) writes, through the mirror and
// without a lock file, a lock that is not partial: the zh: and h1: of
// every platform, as the mirror's VERSION.json lists them (a superset of
// what tflock records installing from the registry).
func TestInteropServedMirrorCompleteLock(t *testing.T) {
	tofu := tool(t, "TFLOCK_TOFU", "tofu")
	w := newWorld(t)
	const host = "registry.opentofu.org"
	plats := []string{"linux_amd64", "darwin_arm64", "windows_amd64"}
	fx := registrytest.Fixtures{Providers: []registrytest.Provider{{Addr: host + "/acme/cloud", Unsigned: true, Versions: []registrytest.ProviderVersion{{Version: "1.4.0", Platforms: plats}}}}}
	reg := registrytest.New(t, fx, registrytest.Options{Hosts: []string{host}, Packages: true})
	cli := filepath.Join(w.home, "default-registry.tfrc")
	writeFile(t, cli, fmt.Sprintf("host %q {\n  services = {\n    \"providers.v1\" = \"%s/v1/providers/\"\n  }\n}\n", host, reg.URL))
	const tf = "terraform {\n  required_providers {\n    cloud = {\n      source = \"acme/cloud\"\n    }\n  }\n}\n"

	// The mirror, and tflock, over the CLI configuration that reaches
	// the registry, through one cache.
	m := w.serveMirror(assemble.SourcesOptions{ConfigFiles: []string{cli}, Env: []string{}, Home: w.home, HTTPClient: reg.Client()}, "", mirrorserve.ToolConfigOptions{TrustAllHashes: true})
	ctx := context.Background()
	// tflock's lock file for the configuration.
	mine := filepath.Join(w.home, "tflock-unit")
	writeFile(t, filepath.Join(mine, "main.tf"), tf)
	res, err := install.Init(ctx, install.Options{Dir: mine, Source: m.sources.Source, Cache: m.cache})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := install.WriteLock(filepath.Join(mine, ".terraform.lock.hcl"), res); err != nil {
		t.Fatal(err)
	}

	dir := filepath.Join(w.home, "tofu-unit")
	writeFile(t, filepath.Join(dir, "main.tf"), tf)
	out := w.runIn(dir, m.env, 0, tofu, "init", "-input=false", "-no-color")
	if strings.Contains(out, "Incomplete lock file information") {
		t.Errorf("tofu warned that its lock file is incomplete:\n%s", out)
	}
	theirs := readFile(t, filepath.Join(dir, ".terraform.lock.hcl"))
	lf := parseLock(t, theirs)
	for pl := range lf.Providers() {
		var zh, h1 int
		for _, x := range pl.Hashes {
			switch {
			case strings.HasPrefix(string(x), "zh:"):
				zh++
			case strings.HasPrefix(string(x), "h1:"):
				h1++
			}
		}
		if zh != len(plats) || h1 != len(plats) {
			t.Errorf("tofu's lock file records %d zh: and %d h1: for %s, want %d of each (every platform):\n%s", zh, h1, pl.Addr, len(plats), theirs)
		}
	}
	// tflock's own lock (from the registry: the installed package's h1:,
	// every platform's signed zh:) is a part of it.
	ml := readFile(t, filepath.Join(mine, ".terraform.lock.hcl"))

	// With tflock's lock file, a tofu trusting the mirror's hashes adds the
	// h1: of the other platforms to it; without trust_all_hashes it keeps
	// it byte for byte.
	for _, trust := range []bool{true, false} {
		env := m.env
		if !trust {
			env = w.toolConfig(m, mirrorserve.ToolConfigOptions{}).Environ(w.env)
		}
		u := filepath.Join(w.home, fmt.Sprintf("tofu-locked-%v", trust))
		writeFile(t, filepath.Join(u, "main.tf"), tf)
		writeFile(t, filepath.Join(u, ".terraform.lock.hcl"), string(ml))
		out := w.runIn(u, env, 0, tofu, "init", "-input=false", "-no-color")
		got := readFile(t, filepath.Join(u, ".terraform.lock.hcl"))
		switch {
		case !trust && !bytes.Equal(got, ml):
			t.Errorf("without trust_all_hashes tofu changed tflock's lock file\n--- tflock\n%s\n--- after\n%s\n%s", ml, got, out)
		case trust && !bytes.Equal(got, theirs):
			t.Errorf("with trust_all_hashes, tofu on tflock's lock file wrote\n%s\nwant what it writes without one\n%s", got, theirs)
		}
	}
	for pl := range parseLock(t, ml).Providers() {
		for _, x := range pl.Hashes {
			if !containsHash(lf.ProviderHashes(pl.Addr), x) {
				t.Errorf("tofu's lock file through the mirror lacks %s, which tflock records\n--- tflock\n%s\n--- tofu\n%s", x, ml, theirs)
			}
		}
	}
}

// TestInteropMirrorManyAtOnce: stock tofu processes started together
// against one served mirror, each in a unit of its own without a lock
// file: every one succeeds (tofu's checksum verification of what the
// mirror serves passes), each package is downloaded from the origin once,
// and the lock files they write are identical. The same number of
// "tofu init" with a shared TF_PLUGIN_CACHE_DIR straight from the registry
// is run for comparison, and the figures (wall time, origin requests,
// bytes on disk) logged. TFLOCK_MIRROR_FLEET=N sets the number of
// processes (default 4; the measurement used 50) and the size of
// each package (8 MiB of program-like bytes then, else small).
func TestInteropMirrorManyAtOnce(t *testing.T) {
	tofu := tool(t, "TFLOCK_TOFU", "tofu")
	n, size := 4, 0
	if s := os.Getenv("TFLOCK_MIRROR_FLEET"); s != "" {
		if _, err := fmt.Sscan(s, &n); err != nil || n < 1 {
			t.Fatalf("TFLOCK_MIRROR_FLEET=%q: want a number of processes", s)
		}
		size = 8 << 20
	}
	plats := installtest.Platforms()
	fx := registrytest.Fixtures{Providers: []registrytest.Provider{
		{Addr: "registry.example.test/acme/cloud", Versions: []registrytest.ProviderVersion{{Version: "1.0.0", Platforms: plats, Size: size, Binary: size > 0}}},
		{Addr: "registry.example.test/acme/dns", Versions: []registrytest.ProviderVersion{{Version: "2.1.0", Platforms: plats, Size: size, Binary: size > 0}}},
	}}
	w := newWorldWith(t, fx, registrytest.Options{})
	downloads := func() int {
		d := 0
		for _, p := range fx.Providers {
			for _, v := range p.Versions {
				for _, pl := range v.Platforms {
					info, _ := w.w.Registry.ProviderPackage(p.Addr, v.Version, pl)
					d += w.w.Registry.RequestsTo(fmt.Sprintf("/files/providers/%s/%s/%s", p.Addr, v.Version, info.Filename))
				}
			}
		}
		return d
	}

	// fleet runs n "tofu init" at once in new units named prefix-I with
	// env, and returns the wall time, the units and the exit errors.
	fleet := func(prefix string, env []string) (time.Duration, []string, []error) {
		units := make([]string, n)
		for i := range units {
			units[i] = w.unit(fmt.Sprintf("%s-%d", prefix, i), nil)
		}
		errs := make([]error, n)
		outs := make([][]byte, n)
		var wg sync.WaitGroup
		start := time.Now()
		for i := range units {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
				defer cancel()
				cmd := exec.CommandContext(ctx, tofu, "init", "-input=false", "-no-color")
				cmd.Dir, cmd.Env = units[i], env
				outs[i], errs[i] = cmd.CombinedOutput()
				if errs[i] != nil {
					errs[i] = fmt.Errorf("%w\n%s", errs[i], outs[i])
				}
			}()
		}
		wg.Wait()
		return time.Since(start), units, errs
	}

	// Through the mirror.
	m := w.startMirror(mirrorserve.ToolConfigOptions{})
	reqs, dl := w.w.Registry.Requests(), downloads()
	wall, units, errs := fleet("mirror", m.env)
	mirrorReqs, mirrorDL := w.w.Registry.Requests()-reqs, downloads()-dl
	failed := 0
	for i, err := range errs {
		if err != nil {
			failed++
			t.Errorf("unit %d: %v", i, err)
		}
	}
	if mirrorDL != len(fx.Providers) {
		t.Errorf("%d tofu processes through the mirror: the origin served %d package downloads, want %d (one per package)", n, mirrorDL, len(fx.Providers))
	}
	first := readFile(t, filepath.Join(units[0], ".terraform.lock.hcl"))
	for _, u := range units[1:] {
		if got := readFile(t, filepath.Join(u, ".terraform.lock.hcl")); !bytes.Equal(got, first) {
			t.Errorf("lock files differ:\n--- %s\n%s\n--- %s\n%s", units[0], first, u, got)
		}
	}
	mirrorBytes := diskBytes(t, append(units, filepath.Join(w.home, "mirror-cache"), filepath.Join(w.home, "mirror-archives"))...)
	t.Logf("mirror: %d tofu init at once: %v wall, %d failed, %d origin requests (%d package downloads), %d bytes on disk (units, cache, archives)", n, wall.Round(time.Millisecond), failed, mirrorReqs, mirrorDL, mirrorBytes)

	// Straight from the registry with a shared plugin cache directory.
	pc := filepath.Join(w.home, "plugin-cache")
	if err := os.MkdirAll(pc, 0o755); err != nil {
		t.Fatal(err)
	}
	reqs, dl = w.w.Registry.Requests(), downloads()
	wall, units, errs = fleet("plugincache", append(append([]string{}, w.env...), "TF_PLUGIN_CACHE_DIR="+pc))
	failed = 0
	for _, err := range errs {
		if err != nil {
			failed++
		}
	}
	t.Logf("TF_PLUGIN_CACHE_DIR: %d tofu init at once: %v wall, %d failed, %d origin requests (%d package downloads), %d bytes on disk (units, plugin cache)", n, wall.Round(time.Millisecond), failed, w.w.Registry.Requests()-reqs, downloads()-dl, diskBytes(t, append(units, pc)...))

	// Both: a cold mirror, and a plugin cache directory that the units
	// link to instead of each extracting its own copy.
	m = w.startMirrorStore("-both", mirrorserve.ToolConfigOptions{})
	pc2 := filepath.Join(w.home, "plugin-cache-mirror")
	if err := os.MkdirAll(pc2, 0o755); err != nil {
		t.Fatal(err)
	}
	reqs, dl = w.w.Registry.Requests(), downloads()
	wall, units, errs = fleet("both", append(append([]string{}, m.env...), "TF_PLUGIN_CACHE_DIR="+pc2))
	failed = 0
	for i, err := range errs {
		if err != nil {
			failed++
			t.Errorf("mirror and plugin cache, unit %d: %v", i, err)
		}
	}
	if d := downloads() - dl; d != len(fx.Providers) {
		t.Errorf("mirror and plugin cache: the origin served %d package downloads, want %d", d, len(fx.Providers))
	}
	t.Logf("mirror and TF_PLUGIN_CACHE_DIR: %d tofu init at once: %v wall, %d failed, %d origin requests (%d package downloads), %d archives served, %d bytes on disk (units, plugin cache, mirror's cache and archives)", n, wall.Round(time.Millisecond), failed, w.w.Registry.Requests()-reqs, downloads()-dl, m.h.Stats().Served, diskBytes(t, append(units, pc2, filepath.Join(w.home, "mirror-cache-both"), filepath.Join(w.home, "mirror-archives-both"))...))
}

// diskBytes is the size of the regular files under the directories given,
// each file (inode) once: hard links are not counted twice, symbolic links
// not at all.
func diskBytes(t testing.TB, dirs ...string) int64 {
	t.Helper()
	seen := map[[2]uint64]bool{}
	var total int64
	for _, d := range dirs {
		err := filepath.Walk(d, func(p string, info os.FileInfo, err error) error {
			if err != nil || !info.Mode().IsRegular() {
				return err
			}
			if id, ok := fileID(info); ok {
				if seen[id] {
					return nil
				}
				seen[id] = true
			}
			total += info.Size()
			return nil
		})
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	return total
}

// TestInteropServedMirrorPrivateRegistry: the origin needs a token, which
// the user's CLI configuration holds; the mirror fetches with it, and
// stock tofu installs through the mirror without it: the token is in
// neither the configuration nor the environment tofu gets, nor in the
// files it writes.
func TestInteropServedMirrorPrivateRegistry(t *testing.T) {
	tofu := tool(t, "TFLOCK_TOFU", "tofu")
	const secret = "s3cr3t-origin-token"
	w := newWorldWith(t, installtest.DefaultFixtures(), registrytest.Options{Token: secret})
	cli := w.getenv("TF_CLI_CONFIG_FILE")
	f, err := os.OpenFile(cli, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Fprintf(f, "\ncredentials %q {\n  token = %q\n}\n", installtest.RegistryHost, secret); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	w.config(map[string]string{"main.tf": providersTF})
	w.tflock(0)
	lock := w.read(".terraform.lock.hcl")

	m := w.startMirror(mirrorserve.ToolConfigOptions{})
	dir := w.unit("private", lock)
	out := w.runIn(dir, m.env, 0, tofu, "init", "-input=false", "-no-color")
	if got := readFile(t, filepath.Join(dir, ".terraform.lock.hcl")); !bytes.Equal(got, lock) {
		t.Errorf("tofu changed the lock file\n--- tflock\n%s\n--- after\n%s\n%s", lock, got, out)
	}
	if m.h.Stats().Served == 0 {
		t.Errorf("nothing served by the mirror:\n%s", out)
	}
	for _, kv := range m.env {
		if strings.Contains(kv, secret) {
			t.Errorf("the tool's environment holds the origin's token: %s", kv)
		}
		if p, ok := strings.CutPrefix(kv, "TF_CLI_CONFIG_FILE="); ok && strings.Contains(string(readFile(t, p)), secret) {
			t.Errorf("the tool's CLI configuration holds the origin's token")
		}
	}
	_ = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() && strings.HasSuffix(p, ".json") && strings.Contains(string(readFile(t, p)), secret) {
			t.Errorf("%s holds the origin's token", p)
		}
		return nil
	})
}

// TestInteropServeCommand: "lock serve -- tofu init", the program a
// wrapper runs: tofu installs through the mirror the command serves over
// the user's CLI configuration, keeps the lock file tflock wrote, and a
// second unit has nothing downloaded from the origin.
func TestInteropServeCommand(t *testing.T) {
	tofu := tool(t, "TFLOCK_TOFU", "tofu")
	w, lock := lockedWorld(t)
	before := w.providerDownloads()
	for _, unit := range []string{"serve-first", "serve-second"} {
		dir := w.unit(unit, lock)
		out := w.runIn(dir, w.env, 0, tflockBinary(t), "serve", "-cache-dir", filepath.Join(w.home, "serve-cache"), "--", tofu, "init", "-input=false", "-no-color")
		if got := readFile(t, filepath.Join(dir, ".terraform.lock.hcl")); !bytes.Equal(got, lock) {
			t.Errorf("%s: tofu changed the lock file\n--- tflock\n%s\n--- after\n%s\n%s", unit, lock, got, out)
		}
		if !strings.Contains(out, "Serving the provider mirror at https://127.0.0.1:") || !strings.Contains(out, "2 archives served") {
			t.Errorf("%s: output:\n%s", unit, out)
		}
		// Each package once, by the first unit's mirror.
		if d := w.providerDownloads() - before; d != 2 {
			t.Errorf("after %s: the origin served %d package downloads in all, want 2\n%s", unit, d, out)
		}
	}
}
