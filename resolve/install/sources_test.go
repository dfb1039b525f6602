package install_test

import (
	"archive/zip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/hcl/v2"
	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/assemble"
	"github.com/tflock/tflock/source/cliconfig"
	"github.com/tflock/tflock/source/oci/ocitest"
	"github.com/tflock/tflock/source/registry"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// sourcesWorld is a registry that wants a token, a network mirror, an OCI
// mirror and a filesystem mirror, each holding its own version of its own
// provider, so that a listing shows which installation method served it.
type sourcesWorld struct {
	reg        *registrytest.Server
	netMirror  *httptest.Server
	oci        *ocitest.Server
	fsMirror   string
	netH1      hash.Hash
	token      string
	mu         sync.Mutex
	mirrorAuth []string // Authorization headers the network mirror saw
}

const (
	frontHost   = "registry.example.test"
	frontToken  = "front-door-secret-token"
	devOverride = frontHost + "/acme/devtool"
)

// writeProviderZip writes a provider zip holding one executable.
func writeProviderZip(t *testing.T, path, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	w, err := zw.Create(name)
	if err == nil {
		_, err = w.Write([]byte(content))
	}
	if err == nil {
		err = zw.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}

func startSourcesWorld(t *testing.T) *sourcesWorld {
	t.Helper()
	plat := source.CurrentPlatform.String()
	w := &sourcesWorld{token: frontToken}
	only := func(v string) []registrytest.ProviderVersion {
		return []registrytest.ProviderVersion{{Version: v, Platforms: []string{plat}}}
	}
	w.reg = registrytest.New(t, registrytest.Fixtures{
		Providers: []registrytest.Provider{
			{Addr: frontHost + "/acme/cloud", Versions: append(only("1.0.0"), only("1.1.0")...)},
			{Addr: frontHost + "/acme/local", Versions: only("1.0.0")},
			{Addr: frontHost + "/acme/netprov", Versions: only("1.0.0")},
			{Addr: frontHost + "/acme/ociprov", Versions: only("1.0.0")},
		},
		Modules: []registrytest.Module{{Addr: frontHost + "/acme/vpc/cloud", Versions: []registrytest.ModuleVersion{{Version: "2.0.0"}}}},
	}, registrytest.Options{Token: frontToken})

	// A filesystem mirror in the packed layout: acme/local 9.0.0.
	w.fsMirror = t.TempDir()
	writeProviderZip(t, filepath.Join(w.fsMirror, frontHost, "acme", "local", "terraform-provider-local_9.0.0_"+plat+".zip"), "terraform-provider-local_v9.0.0", "local 9.0.0")

	// A network mirror: acme/netprov 8.0.0.
	zipDir := t.TempDir()
	zipName := "terraform-provider-netprov_8.0.0_" + plat + ".zip"
	writeProviderZip(t, filepath.Join(zipDir, zipName), "terraform-provider-netprov_v8.0.0", "netprov 8.0.0")
	h1, err := hash.H1Zip(filepath.Join(zipDir, zipName))
	if err != nil {
		t.Fatal(err)
	}
	w.netH1 = h1
	base := "/" + frontHost + "/acme/netprov/"
	mux := http.NewServeMux()
	mux.HandleFunc(base+"index.json", func(rw http.ResponseWriter, r *http.Request) {
		_, _ = rw.Write([]byte(`{"versions":{"8.0.0":{}}}`))
	})
	mux.HandleFunc(base+"8.0.0.json", func(rw http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(rw).Encode(map[string]any{"archives": map[string]any{
			plat: map[string]any{"url": zipName, "hashes": []string{h1.String()}},
		}})
	})
	mux.Handle(base, http.StripPrefix(base, http.FileServer(http.Dir(zipDir))))
	w.netMirror = httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.mu.Lock()
		w.mirrorAuth = append(w.mirrorAuth, r.Header.Get("Authorization"))
		w.mu.Unlock()
		mux.ServeHTTP(rw, r)
	}))
	t.Cleanup(w.netMirror.Close)

	// An OCI mirror: acme/ociprov 7.0.0.
	w.oci = ocitest.New(t, ocitest.ServerOptions{})
	repo, err := w.oci.Repository("mirror/acme/ociprov")
	if err != nil {
		t.Fatal(err)
	}
	z, err := ocitest.Zip(map[string]string{"terraform-provider-ociprov_v7.0.0": "ociprov 7.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ocitest.PushProvider(context.Background(), repo, "7.0.0", map[source.Platform][]byte{source.CurrentPlatform: z}); err != nil {
		t.Fatal(err)
	}
	return w
}

// cliConfig is a CLI configuration with every installation method, each
// with include or exclude patterns, and a dev override.
func (w *sourcesWorld) cliConfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "front.tfrc")
	text := fmt.Sprintf(`provider_installation {
  dev_overrides {
    %q = %q
  }
  filesystem_mirror {
    path    = %q
    include = ["%s/acme/local"]
  }
  network_mirror {
    url     = "%s/"
    include = ["%s/acme/netprov"]
  }
  oci_mirror {
    repository_template = "%s/mirror/${namespace}/${type}"
    include             = ["%s/acme/ociprov"]
  }
  direct {
    exclude = ["%s/acme/local", "%s/acme/netprov", "%s/acme/ociprov"]
  }
}
`, devOverride, filepath.ToSlash(t.TempDir()), filepath.ToSlash(w.fsMirror), frontHost,
		w.netMirror.URL, frontHost, w.oci.Host(), frontHost, frontHost, frontHost, frontHost)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// options are NewSources options reaching this world, with env as the
// whole environment.
func (w *sourcesWorld) options(cfgFile string, env []string, events source.Events) assemble.SourcesOptions {
	ociOpts := w.oci.SourceOptions(nil)
	return assemble.SourcesOptions{
		ConfigFiles: []string{cfgFile},
		Env:         env,
		Registry:    registry.Options{HTTPClient: w.reg.Client()},
		HTTPClient:  w.netMirror.Client(),
		OCI:         &ociOpts,
		Events:      events,
	}
}

type eventLog struct {
	mu     sync.Mutex
	events []source.Event
}

func (l *eventLog) Event(e source.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

func (l *eventLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, e := range l.events {
		fmt.Fprintf(&b, "%#v\n", e)
	}
	return b.String()
}

// TestNewSources builds the sources from a CLI configuration file written
// here, with a TF_TOKEN_ variable of the given environment, against a
// real registry, network mirror, OCI mirror and filesystem mirror: every
// provider comes from the method its include and exclude patterns give
// it, the dev override is reported and warned about, the plugin cache
// directory comes from the environment given, and the token reaches the
// registry but never an event, an error, or another host.
func TestNewSources(t *testing.T) {
	w := startSourcesWorld(t)
	cfgFile := w.cliConfig(t)
	pluginCache := t.TempDir()
	// The process's environment is not read: a wrong token there changes
	// nothing.
	t.Setenv("TF_TOKEN_registry_example_test", "wrong-process-token")
	env := []string{"TF_TOKEN_registry_example_test=" + frontToken, "TF_PLUGIN_CACHE_DIR=" + pluginCache, "HOME=" + t.TempDir()}
	events := &eventLog{}
	ctx := context.Background()
	srcs, diags := assemble.NewSources(ctx, w.options(cfgFile, env, events))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if srcs.PluginCacheDir != pluginCache {
		t.Errorf("PluginCacheDir %q, want %q (TF_PLUGIN_CACHE_DIR of Env)", srcs.PluginCacheDir, pluginCache)
	}
	if want := []tfaddr.Provider{tfaddr.MustParseProviderSource(devOverride)}; !slices.Equal(srcs.DevOverrides, want) {
		t.Errorf("DevOverrides %v, want %v", srcs.DevOverrides, want)
	}
	if !slices.ContainsFunc(diags, func(d *hcl.Diagnostic) bool {
		return d.Severity == hcl.DiagWarning && strings.Contains(d.Summary, "development overrides") && strings.Contains(d.Detail, devOverride[len(frontHost)+1:])
	}) {
		t.Errorf("diagnostics %v lack the dev overrides warning", diags)
	}
	//lint:ignore SA1019 the deprecated field stays filled: this checks it
	warnings := srcs.Warnings
	if !slices.Equal(warnings, diags) {
		t.Errorf("Sources.Warnings %v, want the diagnostics' warnings %v", warnings, diags)
	}

	for name, want := range map[string]string{
		"cloud":   "1.0.0 1.1.0", // direct, with the token
		"local":   "9.0.0",       // filesystem_mirror only
		"netprov": "8.0.0",       // network_mirror only
		"ociprov": "7.0.0",       // oci_mirror only
	} {
		addr := tfaddr.MustParseProviderSource(frontHost + "/acme/" + name)
		list, err := srcs.Source.Versions(ctx, source.ProviderPackage{Addr: addr})
		var got []string
		for _, a := range list {
			got = append(got, a.Version.String())
		}
		if err != nil || strings.Join(got, " ") != want {
			t.Errorf("versions of %s = %v, %v; want %s", name, got, err, want)
		}
	}

	// Packages come from the same places: the network mirror's with the
	// h1: it vouches for, the registry's and the registry module's with
	// the token.
	fetch := func(pkg source.Package) *source.Fetched {
		t.Helper()
		f, err := srcs.Source.Fetch(ctx, pkg, filepath.Join(t.TempDir(), "pkg"))
		if err != nil {
			t.Fatalf("Fetch %v: %v", pkg, err)
		}
		return f
	}
	net := fetch(source.ProviderPackage{Addr: tfaddr.MustParseProviderSource(frontHost + "/acme/netprov"), Version: mustV("8.0.0"), Platform: source.CurrentPlatform})
	if !slices.Contains(net.Hashes, w.netH1) {
		t.Errorf("network mirror package hashes %v lack %s", net.Hashes, w.netH1)
	}
	fetch(source.ProviderPackage{Addr: tfaddr.MustParseProviderSource(frontHost + "/acme/cloud"), Version: mustV("1.1.0"), Platform: source.CurrentPlatform})
	mod := fetch(source.ModulePackage{Source: frontHost + "/acme/vpc/cloud", Version: mustV("2.0.0")})
	if want, _ := w.reg.ModuleH1("acme/vpc/cloud", "2.0.0"); !slices.Contains(mod.Hashes, want) {
		t.Errorf("registry module hashes %v, want %s", mod.Hashes, want)
	}

	// A provider no method serves, and one the registry does not know.
	_, err := srcs.Source.Versions(ctx, source.ProviderPackage{Addr: tfaddr.MustParseProviderSource("other.example.test/acme/none")})
	if err == nil {
		t.Error("a provider of an unknown host was listed")
	}
	_, err2 := srcs.Source.Versions(ctx, source.ProviderPackage{Addr: tfaddr.MustParseProviderSource(frontHost + "/acme/none")})
	if !errors.Is(err2, source.ErrNotFound) {
		t.Errorf("unknown provider: %v, want ErrNotFound", err2)
	}
	for _, e := range []error{err, err2} {
		if e != nil && strings.Contains(e.Error(), frontToken) {
			t.Errorf("error shows the token: %v", e)
		}
	}
	if log := events.String(); strings.Contains(log, frontToken) || len(log) == 0 {
		t.Errorf("events (%d bytes) show the token, or there are none", len(log))
	}
	w.mu.Lock()
	for _, a := range w.mirrorAuth {
		if strings.Contains(a, frontToken) {
			t.Errorf("the network mirror, another host, got the registry's token: %q", a)
		}
	}
	w.mu.Unlock()

	// The same configuration without the token in the environment given:
	// the registry refuses, though the process's environment now has the
	// right token.
	t.Setenv("TF_TOKEN_registry_example_test", frontToken)
	bare, diags := assemble.NewSources(ctx, w.options(cfgFile, []string{}, nil))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if _, err := bare.Source.Versions(ctx, source.ProviderPackage{Addr: tfaddr.MustParseProviderSource(frontHost + "/acme/cloud")}); !errors.Is(err, source.ErrUnauthorized) {
		t.Errorf("without TF_TOKEN_ in Env: %v, want ErrUnauthorized", err)
	}
	if bare.PluginCacheDir != "" {
		t.Errorf("PluginCacheDir %q from an empty environment", bare.PluginCacheDir)
	}
}

// TestNewSourcesImplied: without a provider_installation block, the
// implied local directory under the home directory given serves the
// providers it holds, and only those are not installed directly.
func TestNewSourcesImplied(t *testing.T) {
	w := startSourcesWorld(t)
	home := t.TempDir()
	plat := source.CurrentPlatform
	implied := filepath.Join(home, ".terraform.d", "plugins")
	writeProviderZip(t, filepath.Join(implied, frontHost, "acme", "local", "terraform-provider-local_5.0.0_"+plat.String()+".zip"), "terraform-provider-local_v5.0.0", "local 5.0.0")
	cfgFile := filepath.Join(t.TempDir(), "empty.tfrc")
	if err := os.WriteFile(cfgFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	opts := w.options(cfgFile, []string{"TF_TOKEN_registry_example_test=" + frontToken}, nil)
	opts.Home, opts.WorkDir = home, t.TempDir()
	srcs, diags := assemble.NewSources(context.Background(), opts)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if srcs.Installation == nil || !srcs.Installation.Implied || !slices.Contains(srcs.Installation.ImpliedDirs, implied) {
		t.Fatalf("Installation %+v, want the implied one with %s", srcs.Installation, implied)
	}
	for name, want := range map[string]string{"local": "5.0.0", "cloud": "1.0.0 1.1.0"} {
		list, err := srcs.Source.Versions(context.Background(), source.ProviderPackage{Addr: tfaddr.MustParseProviderSource(frontHost + "/acme/" + name)})
		var got []string
		for _, a := range list {
			got = append(got, a.Version.String())
		}
		if err != nil || strings.Join(got, " ") != want {
			t.Errorf("versions of %s = %v, %v; want %s", name, got, err, want)
		}
	}
}

// TestNewSourcesBadConfig: an error in the CLI configuration names its
// file and line, and no sources are built.
func TestNewSourcesBadConfig(t *testing.T) {
	cfgFile := filepath.Join(t.TempDir(), "bad.tfrc")
	text := "provider_installation {\n  network_mirror {\n    url = \"http://mirror.example.test/\"\n  }\n}\n"
	if err := os.WriteFile(cfgFile, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	srcs, diags := assemble.NewSources(context.Background(), assemble.SourcesOptions{ConfigFiles: []string{cfgFile}, Env: []string{}})
	if !diags.HasErrors() || srcs != nil {
		t.Fatalf("NewSources = %v, %v; want an error and no sources", srcs, diags)
	}
	if msg := diags.Error(); !strings.Contains(msg, "bad.tfrc:2") || !strings.Contains(msg, "https") {
		t.Errorf("error %q: want the file and line of the block and the reason", msg)
	}
}

// A host program that parsed its CLI configuration itself hands tflock the
// parsed methods, host blocks and credentials (issue 28 item 5): no file
// is read, no discovery document is asked for a host with a host block,
// the tokens are the host's alone (neither a credentials block nor a
// TF_TOKEN_ variable), and its credentials helper draws no warning.
func TestNewSourcesHostConfig(t *testing.T) {
	w := startSourcesWorld(t)
	const mirrorToken = "mirror-secret-token"
	cfg := &cliconfig.Config{
		ProviderInstallation: &cliconfig.ProviderInstallation{Methods: []cliconfig.Method{
			{Kind: cliconfig.NetworkMirror, Location: w.netMirror.URL + "/", Include: []string{frontHost + "/acme/netprov"}},
			{Kind: cliconfig.Direct, Exclude: []string{frontHost + "/acme/netprov"}},
		}},
		Hosts:             map[string]*cliconfig.Host{frontHost: {Services: map[string]any{"providers.v1": "/v1/providers/"}}},
		Credentials:       map[string]*cliconfig.Credentials{frontHost: {Token: "wrong-block-token"}},
		CredentialsHelper: &cliconfig.CredentialsHelper{Name: "vault"},
	}
	mirrorHost := strings.TrimPrefix(w.netMirror.URL, "https://")
	mirrorHost = mirrorHost[:strings.LastIndex(mirrorHost, ":")]
	opts := w.options(filepath.Join(t.TempDir(), "never-read.tfrc"), []string{"TF_TOKEN_registry_example_test=wrong-env-token", "HOME=" + t.TempDir()}, nil)
	opts.ConfigFiles = nil
	opts.Config = cfg
	opts.Credentials = registry.Tokens{frontHost: frontToken, mirrorHost: mirrorToken}
	srcs, diags := assemble.NewSources(context.Background(), opts)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for _, d := range diags {
		if strings.Contains(d.Summary, "Credentials helpers") {
			t.Errorf("warning about the host's credentials helper: %v", d)
		}
	}
	ctx := context.Background()
	for _, addr := range []string{frontHost + "/acme/cloud", frontHost + "/acme/netprov"} {
		if _, err := srcs.Source.Versions(ctx, source.ProviderPackage{Addr: tfaddr.MustParseProviderSource(addr)}); err != nil {
			t.Errorf("%s: %v", addr, err)
		}
	}
	if n := w.reg.RequestsTo("/.well-known/terraform.json"); n != 0 {
		t.Errorf("discovery asked %d times despite the host block", n)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !slices.Contains(w.mirrorAuth, "Bearer "+mirrorToken) {
		t.Errorf("the network mirror saw %q, not the host's token", w.mirrorAuth)
	}
}

// TestNewSourcesMissingConfigWarns: a CLI configuration file that does not
// exist is a warning among the diagnostics NewSources returns (it was only
// in the separate Warnings field), and the sources are built.
func TestNewSourcesMissingConfigWarns(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.tfrc")
	srcs, diags := assemble.NewSources(context.Background(), assemble.SourcesOptions{ConfigFiles: []string{missing}, Env: []string{}, Home: t.TempDir()})
	if diags.HasErrors() || srcs == nil {
		t.Fatalf("NewSources = %v, %v; want sources and no error", srcs, diags)
	}
	if !slices.ContainsFunc(diags, func(d *hcl.Diagnostic) bool {
		return d.Severity == hcl.DiagWarning && strings.Contains(d.Summary+d.Detail, "missing.tfrc")
	}) {
		t.Errorf("diagnostics %v: want a warning naming missing.tfrc", diags)
	}
}

// A provider installation holding only dev_overrides has no method to
// search: the providers it does not override are not found with
// NotFoundError.NoSources set, which OpenTofu answers with an empty
// version list (its e2e test TestProviderDevOverrides, run by
// internal/opentofu, expects "Failed to resolve provider packages").
func TestNewSourcesDevOverridesOnly(t *testing.T) {
	cfgFile := filepath.Join(t.TempDir(), "dev.tfrc")
	text := fmt.Sprintf("provider_installation {\n  dev_overrides {\n    \"example.com/test/test\" = %q\n  }\n}\n", filepath.ToSlash(t.TempDir()))
	if err := os.WriteFile(cfgFile, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	srcs, diags := assemble.NewSources(context.Background(), assemble.SourcesOptions{ConfigFiles: []string{cfgFile}, Env: []string{}, Home: t.TempDir()})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	_, err := srcs.Source.Versions(context.Background(), source.ProviderPackage{Addr: tfaddr.MustParseProviderSource("example.com/other/other")})
	var nf *source.NotFoundError
	if !errors.As(err, &nf) || !nf.NoSources {
		t.Errorf("Versions = %v (%+v), want a NotFoundError with NoSources", err, nf)
	}
}
