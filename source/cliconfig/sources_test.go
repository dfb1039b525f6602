package cliconfig_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/internal/testdir"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cliconfig"
	"github.com/tflock/tflock/source/mirror"
	"github.com/tflock/tflock/source/sourcetest"
)

var (
	nullAddr   = tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/null")
	randomAddr = tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/random")
	linux      = source.Platform{OS: "linux", Arch: "amd64"}
)

// registry stands in for a registry source: it has versions the mirror
// does not.
func registry() *sourcetest.Static {
	return &sourcetest.Static{Name: "registry", Providers: []sourcetest.StaticProvider{
		{Addr: nullAddr, Version: versions.MustParse("3.2.0"), Platform: linux, Files: map[string]string{"terraform-provider-null": "3.2.0"}},
		{Addr: randomAddr, Version: versions.MustParse("3.6.0"), Platform: linux, Files: map[string]string{"terraform-provider-random": "3.6.0"}},
	}}
}

func versionList(t *testing.T, src source.Lister, addr tfaddr.Provider) string {
	t.Helper()
	list, err := src.Versions(context.Background(), source.ProviderPackage{Addr: addr})
	if err != nil {
		return "error: " + err.Error()
	}
	var out []string
	for _, a := range list {
		out = append(out, a.Version.String())
	}
	return strings.Join(out, " ")
}

func TestSourcesExplicit(t *testing.T) {
	fsMirror := testdir.OpenTofu(t, "internal/getproviders/testdata/filesystem-mirror")
	src := `
provider_installation {
  dev_overrides {
    "hashicorp/beep" = "/src/beep"
  }
  filesystem_mirror {
    path    = "` + filepath.ToSlash(fsMirror) + `"
    include = ["registry.opentofu.org/hashicorp/*"]
  }
  direct {
    exclude = ["registry.opentofu.org/hashicorp/null"]
  }
}
`
	cfg, diags := cliconfig.Parse([]byte(src), "explicit.tfrc")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var gotCfg *cliconfig.Config
	inst, diags := cfg.Sources(context.Background(), cliconfig.SourceOptions{
		Direct: func(c *cliconfig.Config) (source.Source, error) { gotCfg = c; return registry(), nil },
	})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if gotCfg != cfg {
		t.Error("the direct constructor did not get the configuration")
	}
	// null: only the mirror (direct excludes it); random: the union.
	if got := versionList(t, inst.Source, nullAddr); got != "2.0.0 2.1.0" {
		t.Errorf("null versions: %s", got)
	}
	if got := versionList(t, inst.Source, randomAddr); got != "1.2.0 3.6.0" {
		t.Errorf("random versions: %s", got)
	}
	// A provider outside the mirror's include comes from direct only.
	happy := tfaddr.MustParseProviderSource("tfe.example.com/awesomecorp/happycloud")
	if got := versionList(t, inst.Source, happy); !strings.HasPrefix(got, "error:") {
		t.Errorf("happycloud should be found nowhere: %s", got)
	}
	if dir, ok := inst.DevOverrides.Dir(tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/beep")); !ok || dir != filepath.Clean("/src/beep") {
		t.Errorf("dev overrides %v", inst.DevOverrides)
	}
	if inst.Implied {
		t.Error("explicit configuration reported as implied")
	}
}

func TestSourcesMissingConstructors(t *testing.T) {
	cfg, diags := cliconfig.Parse([]byte(`
provider_installation {
  oci_mirror {
    repository_template = "example.com/${namespace}/${type}"
    include             = ["registry.opentofu.org/*/*"]
  }
  network_mirror {
    url = "http://insecure.example.com/"
  }
  network_mirror {
    url = "https://mirror.example.com/"
  }
  direct {}
}
credentials_helper "x" {}
`), "m.tfrc")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if got := cfg.ProviderInstallation.Methods[0].Location; got != "example.com/${namespace}/${type}" {
		t.Errorf("template = %q, want it kept as written", got)
	}
	inst, diags := cfg.Sources(context.Background(), cliconfig.SourceOptions{})
	var summaries []string
	for _, d := range diags {
		summaries = append(summaries, d.Summary)
	}
	want := "Credentials helpers are not supported|OCI mirrors are not available|Invalid URL for provider installation source|Direct installation is not available"
	if got := strings.Join(summaries, "|"); got != want {
		t.Errorf("diagnostics:\n%s\nwant\n%s", got, want)
	}
	if !strings.Contains(diags[2].Detail, "the mirror must be at an https: URL") {
		t.Errorf("detail %q", diags[2].Detail)
	}
	// The usable network mirror is still there.
	if !strings.Contains(inst.Source.String(), "network_mirror https://mirror.example.com/") {
		t.Errorf("source %s", inst.Source)
	}

	var template string
	_, diags = cfg.Sources(context.Background(), cliconfig.SourceOptions{
		OCI:    func(tpl string, _ *cliconfig.Config) (source.Source, error) { template = tpl; return registry(), nil },
		Direct: func(*cliconfig.Config) (source.Source, error) { return nil, errors.New("no registry today") },
	})
	if template != "example.com/${namespace}/${type}" {
		t.Errorf("OCI constructor got %q", template)
	}
	if len(diags) != 3 || !strings.Contains(diags[2].Detail, "no registry today") {
		t.Errorf("diagnostics %v", diags)
	}
}

func TestSourcesImplied(t *testing.T) {
	home := t.TempDir()
	work := t.TempDir()
	// A provider in ~/.terraform.d/plugins (unpacked layout) and one in the
	// working directory's terraform.d/plugins.
	writeFile(t, filepath.Join(home, ".terraform.d", "plugins", "registry.opentofu.org", "hashicorp", "null", "1.0.0", "linux_amd64", "terraform-provider-null"), "local null")
	writeFile(t, filepath.Join(work, "terraform.d", "plugins", "example.com", "acme", "widget", "0.1.0", "linux_amd64", "terraform-provider-widget"), "widget")

	cfg := &cliconfig.Config{}
	inst, diags := cfg.Sources(context.Background(), cliconfig.SourceOptions{
		Direct:  func(*cliconfig.Config) (source.Source, error) { return registry(), nil },
		Implied: mirror.ImpliedDirsEnv{GOOS: "linux", Home: home, WorkDir: work, Getenv: func(string) string { return "" }},
	})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if !inst.Implied || len(inst.ImpliedDirs) != 2 {
		t.Fatalf("implied dirs %v", inst.ImpliedDirs)
	}
	// null is found locally, so direct installation is excluded for it.
	if got := versionList(t, inst.Source, nullAddr); got != "1.0.0" {
		t.Errorf("null versions: %s, want only the local 1.0.0", got)
	}
	if got := versionList(t, inst.Source, randomAddr); got != "3.6.0" {
		t.Errorf("random versions: %s", got)
	}
	if got := versionList(t, inst.Source, tfaddr.MustParseProviderSource("example.com/acme/widget")); got != "0.1.0" {
		t.Errorf("widget versions: %s", got)
	}
	got, err := inst.Source.Fetch(context.Background(), source.ProviderPackage{Addr: randomAddr, Version: versions.MustParse("3.6.0"), Platform: linux}, filepath.Join(t.TempDir(), "r"))
	if err != nil || !strings.HasPrefix(got.Location, "registry:") {
		t.Errorf("fetch random: %v %v", got, err)
	}
}

func TestOCIRepository(t *testing.T) {
	cfg, diags := cliconfig.Parse([]byte(`
provider_installation {
  oci_mirror {
    repository_template = "oci.example.com/mirror/${hostname}/${namespace}/${type}"
  }
}
`), "oci.tfrc")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	m := cfg.ProviderInstallation.Methods[0]
	got, err := m.OCIRepository(nullAddr)
	if err != nil || got != "oci.example.com/mirror/registry.opentofu.org/hashicorp/null" {
		t.Errorf("got %q, %v", got, err)
	}
	if _, err := (cliconfig.Method{Kind: cliconfig.Direct}).OCIRepository(nullAddr); err == nil {
		t.Error("a direct method has an OCI repository")
	}
}

// TestSourcesNetworkMirrorOptions checks that a network_mirror block's
// trust_all_hashes and download_retry_count reach the mirror source, with a
// real mirror over TLS.
func TestSourcesNetworkMirrorOptions(t *testing.T) {
	const prefix = "/registry.opentofu.org/hashicorp/null/"
	var mu sync.Mutex
	fails := 0
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if fails > 0 {
			fails--
			w.Header().Set("Retry-After", "0")
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		switch r.URL.Path {
		case prefix + "index.json":
			fmt.Fprint(w, `{"versions":{"3.2.0":{}}}`)
		case prefix + "3.2.0.json":
			fmt.Fprint(w, `{"archives":{
				"linux_amd64":{"url":"l.zip","hashes":["zh:`+strings.Repeat("a", 64)+`"]},
				"darwin_arm64":{"url":"d.zip","hashes":["zh:`+strings.Repeat("b", 64)+`"]}}}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	pkg := source.ProviderPackage{Addr: nullAddr, Version: versions.MustParse("3.2.0"), Platform: linux}

	for _, tc := range []struct {
		body      string
		fails     int
		wantRecs  int
		wantError bool
	}{
		{body: "trust_all_hashes = true", wantRecs: 2},
		{body: "trust_all_hashes = false", wantRecs: 0},
		{body: "", wantRecs: 0},
		{body: "trust_all_hashes = true\n    download_retry_count = 3", fails: 3, wantRecs: 2},
		{body: "trust_all_hashes = true\n    download_retry_count = 0", fails: 1, wantError: true},
	} {
		cfg, diags := cliconfig.Parse([]byte("provider_installation {\n  network_mirror {\n    url = \""+srv.URL+"/\"\n    "+tc.body+"\n  }\n}\n"), "n.tfrc")
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		inst, diags := cfg.Sources(context.Background(), cliconfig.SourceOptions{HTTPClient: srv.Client()})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		mu.Lock()
		fails = tc.fails
		mu.Unlock()
		recs, err := inst.Source.Checksums(context.Background(), pkg)
		if tc.wantError {
			if err == nil {
				t.Errorf("%q with %d failures: no error", tc.body, tc.fails)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.body, err)
			continue
		}
		if len(recs) != tc.wantRecs {
			t.Errorf("%q: %d checksums %v, want %d (one per platform the mirror lists when trusted)", tc.body, len(recs), recs, tc.wantRecs)
		}
	}

	// A custom factory is given the whole method.
	cfg, diags := cliconfig.Parse([]byte("provider_installation {\n  network_mirror {\n    url = \"https://m.example.com/\"\n    trust_all_hashes = true\n  }\n}\n"), "n.tfrc")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var got cliconfig.Method
	if _, diags := cfg.Sources(context.Background(), cliconfig.SourceOptions{Network: func(m cliconfig.Method, _ *cliconfig.Config) (source.Source, error) {
		got = m
		return registry(), nil
	}}); diags.HasErrors() {
		t.Fatal(diags)
	}
	if got.Location != "https://m.example.com/" || !got.TrustAllHashes {
		t.Errorf("factory got %+v", got)
	}

	// A trust_all_hashes that is not a bool is an error at its line.
	_, diags = cliconfig.Parse([]byte("provider_installation {\n  network_mirror {\n    url = \"https://m.example.com/\"\n    trust_all_hashes = \"yes please\"\n  }\n}\n"), "n.tfrc")
	if !diags.HasErrors() || diags[0].Subject == nil || diags[0].Subject.Start.Line != 4 {
		t.Errorf("diagnostics %v, want an error on line 4", diags)
	}
	// It belongs to network_mirror only.
	_, diags = cliconfig.Parse([]byte("provider_installation {\n  direct {\n    trust_all_hashes = true\n  }\n}\n"), "n.tfrc")
	if !diags.HasErrors() {
		t.Errorf("trust_all_hashes in direct accepted")
	}
}

func TestSourcesDirectMethod(t *testing.T) {
	cfg, diags := cliconfig.Parse([]byte("provider_installation {\n  direct {\n    download_retry_count = 4\n  }\n}\n"), "d.tfrc")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var got cliconfig.Method
	inst, diags := cfg.Sources(context.Background(), cliconfig.SourceOptions{
		Direct: func(*cliconfig.Config) (source.Source, error) {
			t.Error("Direct called although DirectMethod is set")
			return nil, nil
		},
		DirectMethod: func(m cliconfig.Method, c *cliconfig.Config) (source.Source, error) {
			got = m
			return registry(), nil
		},
	})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if got.Kind != cliconfig.Direct || cfg.DownloadRetries(got) != 4 {
		t.Errorf("DirectMethod got %+v (retries %d), want the direct block with 4 retries", got, cfg.DownloadRetries(got))
	}
	if list, err := inst.Source.Versions(context.Background(), source.ProviderPackage{Addr: nullAddr}); err != nil || len(list) != 1 {
		t.Errorf("Versions = %v, %v", list, err)
	}
	// The implied configuration gives DirectMethod a bare direct method.
	got = cliconfig.Method{}
	var empty cliconfig.Config
	if _, diags := empty.Sources(context.Background(), cliconfig.SourceOptions{DirectMethod: func(m cliconfig.Method, c *cliconfig.Config) (source.Source, error) {
		got = m
		return registry(), nil
	}, Implied: mirror.ImpliedDirsEnv{WorkDir: t.TempDir()}}); diags.HasErrors() {
		t.Fatal(diags)
	}
	if got.Kind != cliconfig.Direct || got.DownloadRetryCount != nil {
		t.Errorf("implied DirectMethod got %+v", got)
	}
}

// TestMethods: the installation methods as data, the block's as written or
// the implied ones, which Sources builds its sources from.
func TestMethods(t *testing.T) {
	home := t.TempDir()
	work := t.TempDir()
	writeFile(t, filepath.Join(home, ".terraform.d", "plugins", "registry.opentofu.org", "hashicorp", "null", "1.0.0", "linux_amd64", "terraform-provider-null"), "local null")
	env := mirror.ImpliedDirsEnv{GOOS: "linux", Home: home, WorkDir: work, Getenv: func(string) string { return "" }}

	var empty cliconfig.Config
	methods, implied := empty.Methods(context.Background(), env)
	dir := filepath.Join(home, ".terraform.d", "plugins")
	if !implied || len(methods) != 2 ||
		methods[0].Kind != cliconfig.FilesystemMirror || methods[0].Location != dir ||
		methods[1].Kind != cliconfig.Direct || fmt.Sprint(methods[1].Exclude) != "[registry.opentofu.org/hashicorp/null]" {
		t.Errorf("implied methods = %+v, %v; want filesystem_mirror %s, then direct excluding null", methods, implied, dir)
	}

	cfg, diags := cliconfig.Parse([]byte(`provider_installation {
  filesystem_mirror {
    path    = "/srv/providers"
    include = ["example.com/*/*"]
  }
  direct {
    exclude = ["example.com/*/*"]
  }
}
`), "methods.tfrc")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	methods, implied = cfg.Methods(context.Background(), env)
	if implied || len(methods) != 2 || methods[0].Location != "/srv/providers" || fmt.Sprint(methods[1].Exclude) != "[example.com/*/*]" {
		t.Errorf("block methods = %+v, %v", methods, implied)
	}
	// The data is a copy: changing it changes nothing of the configuration.
	methods[0].Location = "elsewhere"
	if again, _ := cfg.Methods(context.Background(), env); again[0].Location != "/srv/providers" {
		t.Errorf("Methods returned the configuration's own slice")
	}
}
