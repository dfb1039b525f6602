package config_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"

	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/config"
	"github.com/tflock/tflock/source"
)

func diagLines(diags hcl.Diagnostics) []string {
	var out []string
	for _, d := range diags {
		sev := "ERROR"
		if d.Severity == hcl.DiagWarning {
			sev = "WARNING"
		}
		where := "?"
		if d.Subject != nil {
			where = fmt.Sprintf("%s:%d", d.Subject.Filename, d.Subject.Start.Line)
		}
		out = append(out, fmt.Sprintf("%s %s: %s", where, sev, d.Summary))
	}
	slices.Sort(out)
	return out
}

func reqLines(reqs []resolve.Requirement) []string {
	out := make([]string, len(reqs))
	for i, r := range reqs {
		out[i] = r.String()
	}
	return out
}

func TestReadTree(t *testing.T) {
	t.Chdir(filepath.Join("testdata", "config", "tree"))
	cfg, diags := config.ReadTree(".", "", config.ReadOptions{})
	wantDiags := []string{
		"main.tf:17 WARNING: Provider without a required_providers entry",
		"main.tf:18 WARNING: Version constraints inside provider configuration blocks are deprecated",
		"main.tf:21 WARNING: Provider without a required_providers entry",
		"modules/app/main.tf.json:12 WARNING: Provider without a required_providers entry",
		"modules/app/versions.tofu:2 WARNING: Provider without a required_providers entry",
	}
	if diff := cmp.Diff(wantDiags, diagLines(diags)); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
	var calls []string
	for _, m := range cfg.Modules {
		calls = append(calls, m.Call)
	}
	if diff := cmp.Diff([]string{"", "app", "app.shared"}, calls); diff != "" {
		t.Errorf("modules (-want +got):\n%s", diff)
	}
	want := []string{
		`root module (main.tf:7) requires registry.opentofu.org/hashicorp/aws ~> 5.0`,
		`root module (main.tf:17) requires registry.opentofu.org/hashicorp/google any version`,
		`root module (main.tf:9) requires registry.opentofu.org/hashicorp/legacy ~> 1.0`,
		`root module (main.tf:21) requires registry.opentofu.org/hashicorp/random any version`,
		`root module (main.tf:29) requires terraform.io/builtin/terraform any version`,
		`root module (main.tf:10) requires example.com/acme/widget any version`,
		`root module (main.tf:18) requires registry.opentofu.org/hashicorp/google >= 4.0.0`,
		`root module (main.tf:50) requires module "archive" (https://example.com/archive.zip) any version`,
		`root module (main.tf:46) requires module "net" (git::https://example.com/net.git?ref=v1.2.0) any version`,
		`root module (main.tf:42) requires module "vpc" (registry.opentofu.org/terraform-aws-modules/vpc/aws) ~> 3.0`,
		`module "app" (modules/app/main.tf.json:6) requires registry.opentofu.org/hashicorp/aws >= 5.1.0`,
		`module "app" (modules/app/versions.tofu:2) requires registry.opentofu.org/hashicorp/http any version`,
		`module "app" (modules/app/main.tf.json:12) requires registry.opentofu.org/hashicorp/null any version`,
		`module "app" (modules/app/main.tf.json:18) requires module "app.db" (registry.opentofu.org/acme/db/aws) 1.2.0`,
		`module "app.shared" (modules/shared/override.tf:4) requires registry.opentofu.org/hashicorp/aws != 5.5.0`,
		`module "app.shared" (modules/shared/override.tf:10) requires module "app.shared.vpc" (registry.opentofu.org/terraform-aws-modules/vpc/aws) 3.19.0`,
	}
	if diff := cmp.Diff(want, reqLines(cfg.Requirements())); diff != "" {
		t.Errorf("requirements (-want +got):\n%s", diff)
	}
	root := cfg.Modules[0]
	var widget *config.ProviderEntry
	for i := range root.Providers {
		if root.Providers[i].LocalName == "widget" {
			widget = &root.Providers[i]
		}
	}
	if widget == nil || !slices.Equal(widget.Aliases, []string{"widget.east", "widget.west"}) || widget.Implied {
		t.Errorf("widget entry = %+v, want aliases widget.east, widget.west", widget)
	}
	var kinds []string
	for _, c := range root.Calls {
		kinds = append(kinds, c.Name+"="+c.Kind.String())
	}
	if diff := cmp.Diff([]string{"app=local", "archive=remote", "net=remote", "vpc=registry"}, kinds); diff != "" {
		t.Errorf("module calls (-want +got):\n%s", diff)
	}
}

func TestReadModuleDefaultHost(t *testing.T) {
	files := []config.File{{Name: "main.tf", Src: []byte(`
terraform {
  required_providers {
    aws = { source = "hashicorp/aws" }
    own = { source = "other.example/acme/own" }
  }
}
resource "null_resource" "x" {}
`)}}
	m, diags := config.ReadFiles(files, "", config.ReadOptions{DefaultHost: "mirror.example"})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var got []string
	for _, p := range m.Providers {
		got = append(got, p.LocalName+"="+p.Addr.String())
	}
	want := []string{"aws=mirror.example/hashicorp/aws", "null=mirror.example/hashicorp/null", "own=other.example/acme/own"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestReadModuleSources(t *testing.T) {
	files := []config.File{{Name: "main.tf", Src: []byte(`
module "sub" {
  source  = "terraform-aws-modules/vpc/aws//modules/endpoints"
  version = "~> 5.0"
}
module "git" {
  source = "git::https://example.com/net.git//sub?ref=v1.2.0&depth=1"
}
module "gitver" {
  source  = "git::https://example.com/net.git"
  version = ">= 1.0"
}
module "ocitag" {
  source = "oci://example.com/repo/mod?tag=1.0.0"
}
module "ocilatest" {
  source = "oci://example.com/repo/mod"
}
`)}}
	m, diags := config.ReadFiles(files, "root", config.ReadOptions{DefaultHost: "mirror.example"})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var got []string
	for _, r := range m.Requirements {
		p := r.Package.(source.ModulePackage)
		got = append(got, fmt.Sprintf("%s source=%s ref=%s lock=%s c=%s", r.Call, p.Source, p.Ref, r.LockSource, r.Constraints))
	}
	want := []string{
		"root.git source=git::https://example.com/net.git?depth=1 ref=v1.2.0 lock=git::https://example.com/net.git//sub c=",
		"root.gitver source=git::https://example.com/net.git ref= lock=git::https://example.com/net.git c=>= 1.0.0",
		"root.ocilatest source=oci://example.com/repo/mod ref= lock=oci://example.com/repo/mod c=",
		"root.ocitag source=oci://example.com/repo/mod ref=1.0.0 lock=oci://example.com/repo/mod c=",
		"root.sub source=mirror.example/terraform-aws-modules/vpc/aws ref= lock=mirror.example/terraform-aws-modules/vpc/aws//modules/endpoints c=~> 5.0",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

var markerRE = regexp.MustCompile(`(?:#|//) (ERROR|WARNING): ([^"]*)`)

// TestConfigDiagnostics reads each file of testdata/config/errors as a
// module of its own. A "# ERROR: summary" or "# WARNING: summary" comment
// marks the line where that diagnostic is expected; no other diagnostic
// may appear.
func TestConfigDiagnostics(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "config", "errors", "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no files: %v", err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for i, line := range strings.Split(string(src), "\n") {
				if m := markerRE.FindStringSubmatch(line); m != nil {
					want = append(want, fmt.Sprintf("%s:%d %s: %s", path, i+1, m[1], m[2]))
				}
			}
			if len(want) == 0 {
				t.Fatal("no ERROR or WARNING markers")
			}
			slices.Sort(want)
			_, diags := config.ReadFiles([]config.File{{Name: path, Src: src}}, "", config.ReadOptions{})
			if diff := cmp.Diff(want, diagLines(diags)); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s", diff)
				for _, d := range diags {
					t.Log(d)
				}
			}
		})
	}
}

func TestReadModuleMissingDir(t *testing.T) {
	_, diags := config.ReadModule(filepath.Join(t.TempDir(), "absent"), "", config.ReadOptions{})
	if !diags.HasErrors() || diags[0].Summary != "Unreadable module directory" {
		t.Errorf("diags = %v", diags)
	}
}

func TestReadTreeCycle(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte("module \"self\" {\n  source = \"./\"\n}\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	_, diags := config.ReadTree(dir, "", config.ReadOptions{})
	if got := diagLines(diags); len(got) != 1 || !strings.HasSuffix(got[0], "main.tf:2 ERROR: Module call cycle") {
		t.Errorf("diags = %v", got)
	}
}

// A fetched remote module is read under its own call path, with its local
// children below it.
func TestReadTreeAtCallPath(t *testing.T) {
	cfg, diags := config.ReadTree(filepath.Join("testdata", "config", "tree", "modules", "app"), "vpc", config.ReadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var calls []string
	for _, m := range cfg.Modules {
		calls = append(calls, m.Call)
	}
	if diff := cmp.Diff([]string{"vpc", "vpc.shared"}, calls); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	var modReqs []string
	for _, r := range cfg.Requirements() {
		if r.Call != "" {
			modReqs = append(modReqs, r.Call+" from "+r.Origin.Module)
		}
	}
	if diff := cmp.Diff([]string{"vpc.db from vpc", "vpc.shared.vpc from vpc.shared"}, modReqs); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
