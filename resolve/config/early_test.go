package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/hashicorp/hcl/v2"
	"github.com/tflock/tflock/resolve/config"
)

// earlyHost is the default registry host of these tests.
const earlyHost = "registry.example.test"

// earlyMain is a root module whose module call's source and version
// come from variables.
const earlyMain = `variable "base" {
  type    = string
  default = "defaultns"
}

variable "v" {
  default = "~> 1.0"
}

module "vpc" {
  source  = "${var.base}/vpc/aws"
  version = var.v
}
`

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, src := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// noEnv is an environment with nothing in it.
func noEnv(string) (string, bool) { return "", false }

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// readEarly reads dir as a root module and returns its requirement lines,
// failing on any error.
func readEarly(t *testing.T, dir string, vars config.Variables) []string {
	t.Helper()
	m, diags := config.ReadModule(dir, "", config.ReadOptions{DefaultHost: earlyHost, Variables: vars})
	if diags.HasErrors() {
		t.Fatalf("diagnostics: %s", diags)
	}
	lines := reqLines(m.Requirements)
	for i, l := range lines {
		lines[i] = strings.ReplaceAll(l, dir+string(filepath.Separator), "")
	}
	return lines
}

func wantVPC(ns, constraint string) string {
	return `root module (main.tf:12) requires module "vpc" (registry.example.test/` + ns + `/vpc/aws) ` + constraint
}

// TestEarlyEvalPrecedence gives var.base and var.v values from each kind
// of input, one after the other in one directory, each overriding the
// ones before it as in OpenTofu: defaults < TF_VAR_* < terraform.tfvars
// < terraform.tfvars.json < *.auto.tfvars(.json) in lexical order <
// -var-file and -var in command-line order.
func TestEarlyEvalPrecedence(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": earlyMain})
	env := map[string]string{}
	vars := config.Variables{LookupEnv: envOf(env)}
	step := func(name, want string) {
		t.Helper()
		got := readEarly(t, dir, vars)
		if len(got) != 1 || got[0] != want {
			t.Errorf("%s: requirements %q, want %q", name, got, want)
		}
	}
	step("defaults", wantVPC("defaultns", "~> 1.0"))

	env["TF_VAR_base"] = "envns"
	env["TF_VAR_v"] = "~> 1.1"
	step("environment", wantVPC("envns", "~> 1.1"))

	writeFiles(t, dir, map[string]string{"terraform.tfvars": "base = \"tfvarsns\"\n"})
	step("terraform.tfvars", wantVPC("tfvarsns", "~> 1.1"))

	writeFiles(t, dir, map[string]string{"terraform.tfvars.json": `{"base": "jsonns", "v": "~> 1.2"}`})
	step("terraform.tfvars.json", wantVPC("jsonns", "~> 1.2"))

	writeFiles(t, dir, map[string]string{
		"b.auto.tfvars":      "base = \"bns\"\n",
		"a.auto.tfvars.json": `{"base": "ans", "v": "~> 1.3"}`,
	})
	step("*.auto.tfvars in lexical order", wantVPC("bns", "~> 1.3"))

	writeFiles(t, dir, map[string]string{"envs/prod.tfvars": "base = \"filens\"\nv = \"~> 1.4\"\n"})
	vars.Args = []config.VarArg{{Var: "base=clins"}, {File: "envs/prod.tfvars"}}
	step("-var then -var-file", wantVPC("filens", "~> 1.4"))

	vars.Args = []config.VarArg{{File: "envs/prod.tfvars"}, {Var: "base=clins"}}
	step("-var-file then -var", wantVPC("clins", "~> 1.4"))

	// An absolute -var-file path is read as given; a file not named
	// .tfvars that starts with "{" is JSON.
	abs := filepath.Join(t.TempDir(), "vars")
	writeFiles(t, filepath.Dir(abs), map[string]string{"vars": `{"v": "2.0.0"}`})
	vars.Args = append(vars.Args, config.VarArg{File: abs})
	step("absolute JSON -var-file", wantVPC("clins", "2.0.0"))
}

// TestEarlyEvalLocalsAndFunctions: a local built from a variable and
// functions, and a list variable given by -var as an HCL expression.
func TestEarlyEvalLocalsAndFunctions(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"main.tf": `module "vpc" {
  source  = "${local.ns}/${var.parts[0]}/aws"
  version = format("~> %d.%d", local.major, 2)
}
`,
		"locals.tf": `locals {
  ns    = lower(format("%s-%s", var.org, "Team"))
  major = max(1, 3)
}

variable "org" {}

variable "parts" {
  type = list(string)
}
`,
	})
	vars := config.Variables{LookupEnv: noEnv, Args: []config.VarArg{
		{Var: "org=Acme"},
		{Var: `parts=["vpc", "x"]`},
	}}
	got := readEarly(t, dir, vars)
	want := `root module (main.tf:3) requires module "vpc" (registry.example.test/acme-team/vpc/aws) ~> 3.2`
	if len(got) != 1 || got[0] != want {
		t.Errorf("requirements %q, want %q", got, want)
	}
	m, _ := config.ReadModule(dir, "", config.ReadOptions{DefaultHost: earlyHost, Variables: vars})
	if s := m.Calls[0].Source; s != "acme-team/vpc/aws" {
		t.Errorf("Source = %q, want the evaluated acme-team/vpc/aws", s)
	}
}

// TestEarlyEvalErrors: values not known early, and references that are
// not allowed, are diagnostics naming the call, the variable and the
// line; the call gets no requirement (never one for the literal text).
func TestEarlyEvalErrors(t *testing.T) {
	tests := []struct {
		name      string
		src       string
		args      []config.VarArg
		summary   string
		line      int
		inDetail  []string
		extraFile map[string]string
	}{
		{
			name: "required variable without a value",
			src: `variable "base" {}

module "vpc" {
  source = "${var.base}/vpc/aws"
}
`,
			summary:  "No value for required variable",
			line:     4,
			inDetail: []string{`module "vpc"`, "var.base", "TF_VAR_base", "main.tf:1"},
		},
		{
			name: "through a local",
			src: `variable "v" {}
locals {
  v = "~> ${var.v}"
}
module "vpc" {
  source  = "acme/vpc/aws"
  version = local.v
}
`,
			summary:  "No value for required variable",
			line:     3,
			inDetail: []string{`version of module "vpc"`, "var.v"},
		},
		{
			name:     "undeclared variable",
			src:      "module \"vpc\" {\n  source = var.nope\n}\n",
			summary:  "Reference to undeclared input variable",
			line:     2,
			inDetail: []string{`module "vpc"`, "var.nope"},
		},
		{
			name:     "resource attribute",
			src:      "module \"vpc\" {\n  source = aws_s3_bucket.b.id\n}\n",
			summary:  "Dynamic value in static context",
			line:     2,
			inDetail: []string{`module "vpc"`, "aws_s3_bucket.b.id"},
		},
		{
			name:     "module output",
			src:      "module \"vpc\" {\n  source = module.other.src\n}\n",
			summary:  "Module output not supported in static context",
			line:     2,
			inDetail: []string{`module "vpc"`, "module.other.src"},
		},
		{
			name:    "sensitive variable",
			src:     "variable \"s\" {\n  default = \"acme/vpc/aws\"\n  sensitive = true\n}\nmodule \"vpc\" {\n  source = var.s\n}\n",
			summary: "Sensitive value not allowed",
			line:    6,
		},
		{
			name:    "ephemeral variable",
			src:     "variable \"e\" {\n  default = \"acme/vpc/aws\"\n  ephemeral = true\n}\nmodule \"vpc\" {\n  source = var.e\n}\n",
			summary: "Ephemeral value not allowed",
			line:    6,
		},
		{
			name:     "variable declared const = false",
			src:      "variable \"c\" {\n  default = \"acme/vpc/aws\"\n  const = false\n}\nmodule \"vpc\" {\n  source = var.c\n}\n",
			summary:  "Unable to use variable in static context",
			line:     6,
			inDetail: []string{"var.c", "const = false"},
		},
		{
			name:    "circular locals",
			src:     "locals {\n  a = local.b\n  b = local.a\n}\nmodule \"vpc\" {\n  source = local.a\n}\n",
			summary: "Circular reference",
		},
		{
			name:    "unknown function",
			src:     "module \"vpc\" {\n  source = nosuchfunc(\"x\")\n}\n",
			summary: "Call to unknown function",
			line:    2,
		},
		{
			name:     "bad -var",
			src:      "module \"vpc\" {\n  source = \"acme/vpc/aws\"\n}\n",
			args:     []config.VarArg{{Var: "novalue"}},
			summary:  "Invalid -var option",
			inDetail: []string{"novalue"},
		},
		{
			name:     "missing -var-file",
			src:      "module \"vpc\" {\n  source = \"acme/vpc/aws\"\n}\n",
			args:     []config.VarArg{{File: "nope.tfvars"}},
			summary:  "Failed to read variables file",
			inDetail: []string{"nope.tfvars"},
		},
		{
			name:      "variable block in terraform.tfvars",
			src:       "module \"vpc\" {\n  source = \"acme/vpc/aws\"\n}\n",
			extraFile: map[string]string{"terraform.tfvars": "variable \"x\" {}\n"},
			summary:   "Variable declaration in .tfvars file",
			line:      1,
		},
		{
			name:      "value of the wrong type",
			src:       "variable \"n\" {\n  type = number\n}\nmodule \"vpc\" {\n  source = \"acme/vpc/${var.n}\"\n}\n",
			extraFile: map[string]string{"terraform.tfvars": "n = \"x\"\n"},
			summary:   "Invalid value for input variable",
			line:      5,
			inDetail:  []string{"var.n", "terraform.tfvars:1"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"main.tf": tc.src})
			writeFiles(t, dir, tc.extraFile)
			m, diags := config.ReadModule(dir, "", config.ReadOptions{DefaultHost: earlyHost, Variables: config.Variables{LookupEnv: noEnv, Args: tc.args}})
			var found *hcl.Diagnostic
			for _, d := range diags {
				if d.Severity == hcl.DiagError && d.Summary == tc.summary {
					found = d
				}
			}
			if found == nil {
				t.Fatalf("no %q error in %s", tc.summary, diags)
			}
			if tc.line != 0 && (found.Subject == nil || found.Subject.Start.Line != tc.line) {
				t.Errorf("error at %v, want line %d", found.Subject, tc.line)
			}
			for _, s := range tc.inDetail {
				if !strings.Contains(found.Detail, s) {
					t.Errorf("detail %q does not name %q", found.Detail, s)
				}
			}
			for _, r := range m.Requirements {
				if strings.Contains(r.String(), "${") || strings.Contains(r.String(), "var.") {
					t.Errorf("requirement of the literal text: %s", r)
				}
			}
		})
	}
}

// TestEarlyEvalNullVersion: a version that evaluates to null is no
// version, as in OpenTofu.
func TestEarlyEvalNullVersion(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": `variable "v" {
  default = null
}
module "vpc" {
  source  = "acme/vpc/aws"
  version = var.v
}
`})
	got := readEarly(t, dir, config.Variables{LookupEnv: noEnv})
	want := `root module (main.tf:5) requires module "vpc" (registry.example.test/acme/vpc/aws) any version`
	if len(got) != 1 || got[0] != want {
		t.Errorf("requirements %q, want %q", got, want)
	}
	got = readEarly(t, dir, config.Variables{LookupEnv: noEnv, Args: []config.VarArg{{Var: "v=1.2.3"}}})
	want = `root module (main.tf:6) requires module "vpc" (registry.example.test/acme/vpc/aws) 1.2.3`
	if len(got) != 1 || got[0] != want {
		t.Errorf("requirements %q, want %q", got, want)
	}
	// An override file's version that is null removes the version.
	writeFiles(t, dir, map[string]string{"override.tf": "module \"vpc\" {\n  version = null\n}\n"})
	got = readEarly(t, dir, config.Variables{LookupEnv: noEnv, Args: []config.VarArg{{Var: "v=1.2.3"}}})
	want = `root module (main.tf:5) requires module "vpc" (registry.example.test/acme/vpc/aws) any version`
	if len(got) != 1 || got[0] != want {
		t.Errorf("with a null override: requirements %q, want %q", got, want)
	}
}

// TestEarlyEvalFS: ReadTreeFS reads the automatic variables files and
// -var-file paths from the file system it is given.
func TestEarlyEvalFS(t *testing.T) {
	fsys := fstest.MapFS{
		"root/main.tf":          {Data: []byte(earlyMain)},
		"root/terraform.tfvars": {Data: []byte("base = \"fsns\"\n")},
		"root/prod.tfvars":      {Data: []byte("v = \"3.0.0\"\n")},
	}
	cfg, diags := config.ReadTreeFS(fsys, "root", "", config.ReadOptions{DefaultHost: earlyHost, Variables: config.Variables{LookupEnv: noEnv, Args: []config.VarArg{{File: "prod.tfvars"}}}})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	got := reqLines(cfg.Requirements())
	want := `root module (root/main.tf:12) requires module "vpc" (registry.example.test/fsns/vpc/aws) 3.0.0`
	if len(got) != 1 || got[0] != want {
		t.Errorf("requirements %q, want %q", got, want)
	}
}

// TestEarlyEvalChildModule: a local child module's variables come from
// its caller's arguments, evaluated in the caller (where they may use the
// caller's own variables and locals), else from their defaults; never
// from the root's values of the same name.
func TestEarlyEvalChildModule(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"main.tf": `variable "org" {}
locals {
  ns = "${var.org}-net"
}
module "child" {
  source = "./child"
  ns     = local.ns
}
module "defaulted" {
  source = "./child"
}
`,
		"child/main.tf": `variable "ns" {
  default = "defaultns"
}
variable "v" {
  default = "1.0.0"
}
module "vpc" {
  source  = "${var.ns}/vpc/aws"
  version = var.v
}
`,
	})
	vars := config.Variables{LookupEnv: envOf(map[string]string{"TF_VAR_org": "acme", "TF_VAR_v": "9.9.9"})}
	cfg, diags := config.ReadTree(dir, "", config.ReadOptions{DefaultHost: earlyHost, Variables: vars})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var got []string
	for _, r := range cfg.Requirements() {
		got = append(got, strings.ReplaceAll(r.String(), dir+string(filepath.Separator), ""))
	}
	want := []string{
		`module "child" (child/main.tf:9) requires module "child.vpc" (registry.example.test/acme-net/vpc/aws) 1.0.0`,
		`module "defaulted" (child/main.tf:9) requires module "defaulted.vpc" (registry.example.test/defaultns/vpc/aws) 1.0.0`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requirements\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// A required variable the call does not set is an error naming the
	// call; so is one whose argument is not known early.
	writeFiles(t, dir, map[string]string{"child/main.tf": `variable "ns" {}
module "vpc" {
  source = "${var.ns}/vpc/aws"
}
`})
	_, diags = config.ReadTree(dir, "", config.ReadOptions{DefaultHost: earlyHost, Variables: vars})
	if !strings.Contains(diags.Error(), "Missing required variable in module call") || !strings.Contains(diags.Error(), `module "defaulted"`) {
		t.Errorf("diagnostics %s, want a missing variable naming module \"defaulted\"", diags)
	}
	writeFiles(t, dir, map[string]string{"main.tf": `module "child" {
  source = "./child"
  ns     = aws_s3_bucket.b.id
}
`})
	_, diags = config.ReadTree(dir, "", config.ReadOptions{DefaultHost: earlyHost, Variables: vars})
	if !strings.Contains(diags.Error(), "Dynamic value in static context") || !strings.Contains(diags.Error(), `argument ns of the call of module "child"`) {
		t.Errorf("diagnostics %s, want a dynamic value error naming the argument", diags)
	}

	// Read on its own, with no caller, the variable is not known.
	_, diags = config.ReadModule(filepath.Join(dir, "child"), "child", config.ReadOptions{DefaultHost: earlyHost, Variables: vars})
	if !strings.Contains(diags.Error(), "Variable not known early") {
		t.Errorf("diagnostics %s, want \"Variable not known early\"", diags)
	}
}

// TestEarlyEvalWorkspaceAndJSON: terraform.workspace is TF_WORKSPACE, else
// the workspace recorded in the data directory, else "default"; a JSON
// configuration file's templates are evaluated the same way.
func TestEarlyEvalWorkspaceAndJSON(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"main.tf.json": `{
  "variable": {"org": {"default": "acme"}},
  "locals": {"name": "vpc-${terraform.workspace}"},
  "module": {"net": {"source": "${var.org}/${local.name}/aws", "version": "${upper(\"1.0.0\")}"}}
}`,
	})
	env := map[string]string{}
	read := func() string {
		t.Helper()
		got := readEarly(t, dir, config.Variables{LookupEnv: envOf(env)})
		if len(got) != 1 {
			t.Fatalf("requirements %q", got)
		}
		return got[0]
	}
	want := func(ws string) string {
		return `root module (main.tf.json:4) requires module "net" (registry.example.test/acme/vpc-` + ws + `/aws) 1.0.0`
	}
	if got := read(); got != want("default") {
		t.Errorf("no workspace: %s, want %s", got, want("default"))
	}
	writeFiles(t, dir, map[string]string{".terraform/environment": "staging"})
	if got := read(); got != want("staging") {
		t.Errorf("selected workspace: %s, want %s", got, want("staging"))
	}
	env["TF_WORKSPACE"] = "prod"
	if got := read(); got != want("prod") {
		t.Errorf("TF_WORKSPACE: %s, want %s", got, want("prod"))
	}
	delete(env, "TF_WORKSPACE")
	env["TF_DATA_DIR"] = filepath.Join(t.TempDir(), "data")
	writeFiles(t, env["TF_DATA_DIR"], map[string]string{"environment": "qa\n"})
	if got := read(); got != want("qa") {
		t.Errorf("TF_DATA_DIR: %s, want %s", got, want("qa"))
	}
}

// TestEarlyEvalSensitiveThroughCaller: a sensitive root variable passed
// to a local module's variable (an object with optional attributes) and
// used in its call's source is refused there, and its value is not in
// the message.
func TestEarlyEvalSensitiveThroughCaller(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"main.tf": `variable "token" {
  sensitive = true
}
module "child" {
  source = "./child"
  conf   = { token = var.token }
}
`,
		"child/main.tf": `variable "conf" {
  type = object({ token = string, ns = optional(string, "acme") })
}
module "vpc" {
  source = "git::https://${var.conf.token}@example.com/${var.conf.ns}/vpc.git"
}
`,
	})
	_, diags := config.ReadTree(dir, "", config.ReadOptions{DefaultHost: earlyHost, Variables: config.Variables{LookupEnv: envOf(map[string]string{"TF_VAR_token": "s3cr3t"})}})
	if !strings.Contains(diags.Error(), "Sensitive value not allowed") {
		t.Errorf("diagnostics %s, want Sensitive value not allowed", diags)
	}
	if strings.Contains(diags.Error(), "s3cr3t") {
		t.Errorf("the secret is in the diagnostics: %s", diags)
	}
	// Not sensitive: the object's optional attribute takes its default.
	writeFiles(t, dir, map[string]string{"main.tf": `variable "token" {}
module "child" {
  source = "./child"
  conf   = { token = var.token }
}
`})
	cfg, diags := config.ReadTree(dir, "", config.ReadOptions{DefaultHost: earlyHost, Variables: config.Variables{LookupEnv: envOf(map[string]string{"TF_VAR_token": "s3cr3t"})}})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if got := cfg.Modules[1].Calls[0].Source; got != "git::https://s3cr3t@example.com/acme/vpc.git" {
		t.Errorf("child's vpc source = %q", got)
	}
}

// TestEarlyEvalPathModule: path.module is "." in the root module, as in
// OpenTofu run in the root module's directory, so that
// "${path.module}/modules/x" is a local module there; in a local child it
// is the child's directory relative to the root's.
func TestEarlyEvalPathModule(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"main.tf": "module \"app\" {\n  source = \"${path.module}/modules/app\"\n}\n",
		"modules/app/main.tf": `module "vpc" {
  source  = "acme/${replace(path.module, "/", "-")}/aws"
  version = "1.0.0"
}
`,
	})
	cfg, diags := config.ReadTree(dir, "", config.ReadOptions{DefaultHost: earlyHost, Variables: config.Variables{LookupEnv: noEnv}})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if len(cfg.Modules) != 2 || cfg.Modules[0].Calls[0].Source != "./modules/app" {
		t.Fatalf("root call source = %q, want ./modules/app", cfg.Modules[0].Calls[0].Source)
	}
	if got := cfg.Modules[1].Calls[0].Source; got != "acme/modules-app/aws" {
		t.Errorf("child call source = %q, want acme/modules-app/aws", got)
	}
}

// TestEarlyEvalFunctions: functions with OpenTofu's meaning, in a source.
func TestEarlyEvalFunctions(t *testing.T) {
	for expr, want := range map[string]string{
		`replace("acme.corp", ".", "-")`:          "acme-corp",
		`replace("acme42", "/[0-9]+/", "")`:       "acme",
		`"acme${length("abc")}${length([1, 2])}"`: "acme32",
		`join("", split("-", "ac-me"))`:           "acme",
		`coalescelist([], ["acme"])[0]`:           "acme",
		`trimsuffix(lower("ACME-x"), "-x")`:       "acme",
		`try(tostring(nosuch.attr), "acme")`:      "",
		`format("%s", substr("xacme", 1, 4))`:     "acme",
		`lookup({ a = "acme" }, "a", "other")`:    "acme",
		`element(concat(["acme"], ["b"]), 0)`:     "acme",
	} {
		src := "module \"vpc\" {\n  source = \"${" + expr + "}/vpc/aws\"\n}\n"
		m, diags := config.ReadFiles([]config.File{{Name: "main.tf", Src: []byte(src)}}, "", config.ReadOptions{DefaultHost: earlyHost, Variables: config.Variables{LookupEnv: noEnv}})
		if want == "" {
			// A reference not allowed early is an error even inside try.
			if !diags.HasErrors() {
				t.Errorf("%s: no error", expr)
			}
			continue
		}
		if diags.HasErrors() {
			t.Errorf("%s: %s", expr, diags)
			continue
		}
		if got := m.Calls[0].Source; got != want+"/vpc/aws" {
			t.Errorf("%s: source %q, want %q", expr, got, want+"/vpc/aws")
		}
	}
}
