package install_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tflock/tflock/resolve/config"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/resolve/versions"
)

func noEnvLookup(string) (string, bool) { return "", false }

// TestInitEarlyEvaluation: a module source and version built from
// variables, a local and a function are evaluated before the module is
// installed, from terraform.tfvars and -var, against a real registry;
// the lock records the evaluated source and constraint. Run again
// without the -var, the version is not known: Init fails naming the call
// and the variable, and the lock file is left as it was.
func TestInitEarlyEvaluation(t *testing.T) {
	w := startWorld(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"main.tf": `variable "org" {
  default = "nobody"
}
variable "vpc_version" {}
locals {
  host = lower("` + strings.ToUpper(installtest.RegistryHost) + `")
}
module "vpc" {
  source  = "${local.host}/${var.org}/vpc/cloud"
  version = var.vpc_version
}
`,
		"terraform.tfvars": "org = \"acme\"\n",
	})
	c := openCache(t)
	vars := config.Variables{LookupEnv: noEnvLookup, Args: []config.VarArg{{Var: "vpc_version=~> 1.0"}}}
	res := initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: c, Variables: vars})
	ml := res.Lock.Module("vpc")
	if ml == nil {
		t.Fatal("module vpc not locked")
	}
	if want := installtest.RegistryHost + "/acme/vpc/cloud"; ml.Source != want || ml.Constraints != "~> 1.0" || ml.Version != versions.MustParse("1.1.0") {
		t.Errorf("vpc lock = %s %s %s, want %s ~> 1.0 1.1.0", ml.Source, ml.Constraints, ml.Version, want)
	}
	lockPath := filepath.Join(dir, install.LockFileName)
	before, err := os.ReadFile(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(before), "${") || strings.Contains(string(before), "var.") {
		t.Errorf("the lock file holds unevaluated text:\n%s", before)
	}

	// The version comes from -var -var-file order: a later -var-file
	// overrides the -var; the lock keeps 1.1.0 and the constraint
	// recorded is the new one.
	writeFiles(t, dir, map[string]string{"pin.tfvars": "vpc_version = \">= 1.1.0\"\n"})
	vars.Args = append(vars.Args, config.VarArg{File: "pin.tfvars"})
	res = initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: c, Variables: vars})
	if ml := res.Lock.Module("vpc"); ml == nil || ml.Constraints != ">= 1.1.0" || ml.Version != versions.MustParse("1.1.0") {
		t.Errorf("vpc lock after -var-file = %+v, want >= 1.1.0 at 1.1.0", ml)
	}
	before, err = os.ReadFile(lockPath)
	if err != nil {
		t.Fatal(err)
	}

	_, err = install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: c, Variables: config.Variables{LookupEnv: noEnvLookup}})
	var ce *install.ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("Init without a value: %v, want a *ConfigError", err)
	}
	for _, s := range []string{`module "vpc"`, "var.vpc_version", "main.tf:10", "No value for required variable"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not name %q", err, s)
		}
	}
	after, err := os.ReadFile(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Errorf("a failed run changed the lock file:\n%s", after)
	}
}

// TestInitEarlyEvaluationRemoteCaller: a remote module's own module call
// uses its variables, which the root's call sets from a root variable:
// the nested call is evaluated with the caller's arguments once the
// remote module is fetched.
func TestInitEarlyEvaluationRemoteCaller(t *testing.T) {
	static := staticFixtures()
	for i, m := range static.Modules {
		if m.Source == vpcSource {
			static.Modules[i].Files = map[string]string{"main.tf": `variable "sub_org" {
  default = "nobody"
}
variable "sub_version" {
  default = "~> 9.0"
}
module "subnets" {
  source  = "` + host + `/${var.sub_org}/subnets/aws"
  version = var.sub_version
}
`}
		}
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": `variable "org" {}
module "vpc" {
  source      = "` + vpcSource + `"
  version     = "~> 1.0"
  sub_org     = var.org
  sub_version = "~> 2.0"
}
`})
	vars := config.Variables{LookupEnv: func(k string) (string, bool) {
		if k == "TF_VAR_org" {
			return "acme", true
		}
		return "", false
	}}
	res := initAndWrite(t, install.Options{Dir: dir, Source: static, Cache: openCache(t), Variables: vars})
	ml := res.Lock.Module("vpc.subnets")
	if ml == nil || ml.Source != subsSource || ml.Constraints != "~> 2.0" || ml.Version != versions.MustParse("2.0.0") {
		t.Errorf("vpc.subnets lock = %+v, want %s ~> 2.0 at 2.0.0", ml, subsSource)
	}

	// Check reads the installed modules the same way: callers first, each
	// module with its call's arguments; from Dir and from an fs.FS.
	for _, opts := range []install.CheckOptions{
		{Dir: dir, Variables: vars},
		{Dir: dir, FS: os.DirFS(dir), Variables: vars},
	} {
		if _, err := install.Check(context.Background(), opts); err != nil {
			t.Errorf("Check (FS %v): %v", opts.FS != nil, err)
		}
	}
	// Without the root's value the nested call is not known: Check says
	// so rather than checking something else.
	_, err := install.Check(context.Background(), install.CheckOptions{Dir: dir, Variables: config.Variables{LookupEnv: noEnvLookup}})
	if err == nil || !strings.Contains(err.Error(), "var.org") {
		t.Errorf("Check without var.org: %v, want an error naming var.org", err)
	}
}
