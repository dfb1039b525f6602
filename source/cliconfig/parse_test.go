package cliconfig_test

import (
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/source/cliconfig"
)

func parseFile(t *testing.T, name string) (*cliconfig.Config, hcl.Diagnostics) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return cliconfig.Parse(src, name)
}

func TestParseFull(t *testing.T) {
	cfg, diags := parseFile(t, "full.tfrc")
	if diags.HasErrors() || len(diags) != 0 {
		t.Fatalf("diagnostics: %v", diags)
	}
	if cfg.PluginCacheDir != "$HOME/.cache/tofu-plugins" {
		t.Errorf("plugin_cache_dir = %q (Parse must not expand variables)", cfg.PluginCacheDir)
	}
	host := cfg.Hosts["registry.example.com"]
	if host == nil {
		t.Fatalf("hosts = %v; the host name must be normalized", cfg.Hosts)
	}
	wantServices := map[string]any{
		"providers.v1": "https://registry.example.com/providers/v1/",
		"modules.v1":   "/modules/v1/",
		"login.v1":     map[string]any{"client": "tofu-cli", "ports": []any{big.NewFloat(10000), big.NewFloat(10010)}},
	}
	if diff := cmp.Diff(wantServices, host.Services, cmp.Comparer(func(a, b *big.Float) bool { return a.Cmp(b) == 0 })); diff != "" {
		t.Errorf("services (-want +got):\n%s", diff)
	}
	if svc, ok := cfg.Services("REGISTRY.EXAMPLE.COM"); !ok || svc["modules.v1"] != "/modules/v1/" {
		t.Errorf("Services = %v, %v", svc, ok)
	}
	if _, ok := cfg.Services("other.example.com"); ok {
		t.Error("services for a host without a host block")
	}
	if got := cfg.Token("REGISTRY.example.com"); got != "example-token-not-secret" {
		t.Errorf("Token = %q", got)
	}
	if cfg.Token("other.example.com") != "" {
		t.Error("token for a host without credentials")
	}
	if cfg.CredentialsHelper == nil || cfg.CredentialsHelper.Name != "example" || !slices.Equal(cfg.CredentialsHelper.Args, []string{"--verbose"}) {
		t.Errorf("credentials helper = %+v", cfg.CredentialsHelper)
	}
	pi := cfg.ProviderInstallation
	if pi == nil {
		t.Fatal("no provider_installation")
	}
	wantDev := map[tfaddr.Provider]string{
		tfaddr.MustParseProviderSource("registry.opentofu.org/acme/widget"): filepath.Clean("/src/widget"),
		tfaddr.MustParseProviderSource("example.com/acme/gadget"):           filepath.Clean("/src/gadget"),
	}
	if diff := cmp.Diff(wantDev, pi.DevOverrides); diff != "" {
		t.Errorf("dev_overrides (-want +got):\n%s", diff)
	}
	var got []string
	for _, m := range pi.Methods {
		got = append(got, fmt.Sprintf("%s %q include=%q exclude=%q", m.Kind, m.Location, m.Include, m.Exclude))
	}
	want := []string{
		`filesystem_mirror "/mirror/one" include=["example.com/*/*"] exclude=[]`,
		`network_mirror "https://mirror.example.com/providers/" include=["registry.opentofu.org/*/*"] exclude=["registry.OpenTofu.org/acme/*"]`,
		`oci_mirror "oci.example.com/tofu/${namespace}/${type}" include=["registry.opentofu.org/acme/*"] exclude=[]`,
		`direct "" include=[] exclude=["example.com/*/*"]`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("methods (-want +got):\n%s", diff)
	}
	if pi.Methods[0].DeclRange.Start.Line != 29 {
		t.Errorf("first method declared at line %d, want 29", pi.Methods[0].DeclRange.Start.Line)
	}
}

func TestParseJSON(t *testing.T) {
	cfg, diags := parseFile(t, "full.tfrc.json")
	if diags.HasErrors() {
		t.Fatalf("diagnostics: %v", diags)
	}
	if cfg.PluginCacheDir != "/cache" || cfg.Token("registry.example.com") != "json-token" {
		t.Errorf("cache %q token %q", cfg.PluginCacheDir, cfg.Token("registry.example.com"))
	}
	pi := cfg.ProviderInstallation
	if pi == nil || len(pi.Methods) != 2 || len(pi.DevOverrides) != 1 {
		t.Fatalf("provider_installation = %+v", pi)
	}
}

func TestParseDiagnostics(t *testing.T) {
	tests := map[string]struct {
		src     string
		summary string // of the first diagnostic
		line    int
		warning bool
	}{
		"syntax error":            {src: "plugin_cache_dir = \n", summary: "Invalid expression", line: 1},
		"bad host":                {src: "host \"not a host!\" {\n}\n", summary: "Invalid hostname", line: 1},
		"bad credentials host":    {src: "\ncredentials \"a b\" {\n  token = \"x\"\n}\n", summary: "Invalid hostname", line: 2},
		"token not a string":      {src: "credentials \"example.com\" {\n  token = [\"x\"]\n}\n", summary: "Invalid token", line: 2},
		"mirror without path":     {src: "provider_installation {\n  filesystem_mirror {\n  }\n}\n", summary: "Missing required argument", line: 2},
		"empty url":               {src: "provider_installation {\n  network_mirror {\n    url = \"\"\n  }\n}\n", summary: "Invalid network_mirror block", line: 3},
		"bad include":             {src: "provider_installation {\n  direct {\n    include = [\"a/b/c/d\"]\n  }\n}\n", summary: "Invalid provider source inclusion patterns", line: 3},
		"bad exclude":             {src: "provider_installation {\n  direct {\n    exclude = [\"*/aws\"]\n  }\n}\n", summary: "Invalid provider source exclusion patterns", line: 3},
		"include not a list":      {src: "provider_installation {\n  direct {\n    include = \"hashicorp/*\"\n  }\n}\n", summary: "Invalid include", line: 3},
		"unknown method":          {src: "provider_installation {\n  ftp_mirror {\n  }\n}\n", summary: "Unsupported block type", line: 2},
		"unknown method arg":      {src: "provider_installation {\n  direct {\n    url = \"x\"\n  }\n}\n", summary: "Unsupported argument", line: 3},
		"bad dev override":        {src: "provider_installation {\n  dev_overrides {\n    \"not/a/valid/addr\" = \"/x\"\n  }\n}\n", summary: "Invalid provider installation dev overrides", line: 2},
		"dev_overrides not first": {src: "provider_installation {\n  direct {}\n  dev_overrides {\n    \"a/b\" = \"/x\"\n  }\n}\n", summary: "Invalid provider_installation method block", line: 3},
		"retry count":             {src: "provider_installation {\n  direct {\n    download_retry_count = 1.5\n  }\n}\n", summary: "Invalid download_retry_count", line: 3},
		"retry count on mirror":   {src: "provider_installation {\n  filesystem_mirror {\n    path = \"/x\"\n    download_retry_count = 1\n  }\n}\n", summary: "Unsupported argument", line: 4},
		"oci unknown symbol":      {src: "provider_installation {\n  oci_mirror {\n    repository_template = \"r.example.com/${foo}/${namespace}/${type}\"\n  }\n}\n", summary: "Invalid oci_mirror repository template", line: 3},
		"oci ambiguous":           {src: "provider_installation {\n  oci_mirror {\n    repository_template = \"r.example.com/${type}\"\n    include = [\"example.com/*/*\"]\n  }\n}\n", summary: "Invalid oci_mirror repository template", line: 3},
		"two installs":            {src: "provider_installation {\n}\nprovider_installation {\n}\n", summary: "Duplicate provider_installation block", line: 3},
		"two helpers":             {src: "credentials_helper \"a\" {\n}\ncredentials_helper \"b\" {\n}\n", summary: "Duplicate credentials_helper block", line: 3},
		"unknown top level":       {src: "\nfoo = 1\n", summary: "Unsupported argument", line: 2, warning: true},
		"unknown block":           {src: "bar {\n}\n", summary: "Unsupported block type", line: 1, warning: true},
		"bool":                    {src: "plugin_cache_may_break_dependency_lock_file = \"maybe\"\n", summary: "Invalid plugin_cache_may_break_dependency_lock_file", line: 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, diags := cliconfig.Parse([]byte(tc.src), "test.tfrc")
			if len(diags) == 0 {
				t.Fatal("no diagnostics")
			}
			d := diags[0]
			if d.Summary != tc.summary {
				t.Errorf("summary %q, want %q (%v)", d.Summary, tc.summary, diags)
			}
			if d.Subject == nil || d.Subject.Start.Line != tc.line || d.Subject.Filename != "test.tfrc" {
				t.Errorf("subject %v, want test.tfrc line %d", d.Subject, tc.line)
			}
			if (d.Severity == hcl.DiagWarning) != tc.warning {
				t.Errorf("severity %v", d.Severity)
			}
		})
	}
}

func TestTokenNeverShown(t *testing.T) {
	const secret = "s3cr3t-t0ken-value"
	cfg, diags := cliconfig.Parse([]byte("credentials \"example.com\" {\n  token = \""+secret+"\"\n}\n"), "c.tfrc")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	c := cfg.Credentials["example.com"]
	for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%v %+v %#v", c, c, c), fmt.Sprintf("%+v", cfg)} {
		if strings.Contains(s, secret) {
			t.Errorf("token shown in %q", s)
		}
	}
	_, diags = cliconfig.Parse([]byte("credentials \"example.com\" {\n  token = [\""+secret+"\"]\n}\n"), "c.tfrc")
	if !diags.HasErrors() || strings.Contains(diags.Error(), secret) {
		t.Errorf("diagnostics %v", diags)
	}
}

func TestDevOverridesRewriteKeepsLines(t *testing.T) {
	// The dev_overrides block is accepted with and without a space before
	// its brace; a later error still points at the right line.
	src := "provider_installation {\n  dev_overrides{\n    \"acme/widget\" = \"/w\"\n  }\n  direct {\n    include = [\"a/b/c/d\"]\n  }\n}\n"
	cfg, diags := cliconfig.Parse([]byte(src), "t.tfrc")
	if len(diags) != 1 || diags[0].Subject.Start.Line != 6 {
		t.Fatalf("diagnostics %v, want one on line 6", diags)
	}
	if len(cfg.ProviderInstallation.DevOverrides) != 1 {
		t.Errorf("dev overrides %v", cfg.ProviderInstallation.DevOverrides)
	}
}
