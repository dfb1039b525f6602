package cliconfig_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cliconfig"
	"github.com/tflock/tflock/source/internal/testdir"
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
