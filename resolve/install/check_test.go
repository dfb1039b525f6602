package install_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/tflock/tflock/resolve/config"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
)

// TestCheckProblemsTyped: Check's result lists every problem typed (kind,
// package, call, file and line of the requirement), in the order of its
// error's lines, and the error text is OpenTofu's, line for line.
func TestCheckProblemsTyped(t *testing.T) {
	dir := newConfig(t)
	initAndWrite(t, install.Options{Dir: dir, Source: staticFixtures(), Cache: openCache(t)})
	cfg := strings.Replace(rootConfig, `version = "~> 5.0"`, `version = "~> 4.0"`, 1)
	cfg = strings.Replace(cfg, `version = "~> 1.0"`, `version = "~> 2.0"`, 1)
	cfg = strings.Replace(cfg, "  }\n}\n", "    tls = { source = \""+host+"/hashicorp/tls\" }\n  }\n}\n", 1)
	writeFiles(t, dir, map[string]string{"main.tf": cfg})
	if err := os.RemoveAll(filepath.Join(dir, ".terraform", "providers", host, "hashicorp", "random")); err != nil {
		t.Fatal(err)
	}
	res, err := install.Check(context.Background(), install.CheckOptions{Dir: dir})
	if err == nil {
		t.Fatal("Check found nothing wrong")
	}
	type row struct {
		Kind    install.ProblemKind
		Package string
		Call    string
		Where   string
	}
	var got []row
	for _, p := range res.Problems {
		where := ""
		if p.Range.Filename != "" {
			where = fmt.Sprintf("%s:%d", filepath.Base(p.Range.Filename), p.Range.Start.Line)
		}
		got = append(got, row{p.Kind, p.Package.String(), p.Call, where})
		if p.String() != p.Message || p.Message == "" {
			t.Errorf("problem %+v: String() = %q", p, p.String())
		}
	}
	aws := source.ProviderPackage{Addr: awsAddr, Version: versions.MustParse("5.1.0")}
	tls := source.ProviderPackage{Addr: mustAddr(t, host+"/hashicorp/tls").Addr}
	random := source.ProviderPackage{Addr: randAddr, Version: versions.MustParse("3.6.0"), Platform: source.CurrentPlatform}
	vpc := source.ModulePackage{Source: host + "/acme/vpc/aws", Version: versions.MustParse("1.1.0")}
	want := []row{
		{install.ProblemConstraintsChanged, vpc.String(), "vpc", "main.tf:10"},
		{install.ProblemConstraintsChanged, aws.String(), "", "main.tf:3"},
		{install.ProblemNotSelected, tls.String(), "", "main.tf:5"},
		{install.ProblemNotInstalled, random.String(), "", ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	// The error: the same problems, OpenTofu's text.
	var ie *install.InconsistentLockError
	if !errors.As(err, &ie) || len(ie.Problems) != 3 {
		t.Fatalf("Check = %v, want three inconsistencies", err)
	}
	wantText := "Inconsistent dependency lock file: the following dependency selections recorded in the lock file are inconsistent with the current configuration:\n" +
		"  - module \"vpc\": locked version selection 1.1.0 doesn't match the updated version constraints \"~> 2.0\"\n" +
		"  - provider " + awsAddr.String() + ": locked version selection 5.1.0 doesn't match the updated version constraints \"~> 4.0\"\n" +
		"  - provider " + host + "/hashicorp/tls: required by this configuration but no version is selected\n\n" +
		"To update the locked dependency selections to match a changed configuration, run:\n  tofu init -upgrade"
	if ie.Error() != wantText {
		t.Errorf("message\n got %q\nwant %q", ie.Error(), wantText)
	}
	var ni *install.NotInstalledError
	if !errors.As(err, &ni) || res.Problems[3].Err != error(ni) {
		t.Errorf("the not-installed problem's Err is not the error's *NotInstalledError: %v", res.Problems[3].Err)
	}
}

// TestCheckFSAndConfig: Check reads the root module from an fs.FS or takes
// a parsed configuration, and still reads the installed remote modules
// from the install directory.
func TestCheckFSAndConfig(t *testing.T) {
	dir := newConfig(t)
	initAndWrite(t, install.Options{Dir: dir, Source: staticFixtures(), Cache: openCache(t)})
	if _, err := install.Check(context.Background(), install.CheckOptions{Dir: dir, FS: os.DirFS(dir)}); err != nil {
		t.Errorf("Check with the same configuration as an fs.FS: %v", err)
	}
	mfs := fstest.MapFS{
		"main.tf":             {Data: []byte(strings.Replace(rootConfig, `version = "~> 5.0"`, `version = "~> 4.0"`, 1))},
		"modules/app/main.tf": {Data: readFile(t, filepath.Join(dir, "modules", "app", "main.tf"))},
	}
	cfg, diags := config.ReadTreeFS(mfs, ".", "", config.ReadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for name, opts := range map[string]install.CheckOptions{
		"fs":     {Dir: dir, FS: mfs},
		"config": {Dir: dir, Config: cfg},
	} {
		res, err := install.Check(context.Background(), opts)
		var ie *install.InconsistentLockError
		if !errors.As(err, &ie) || len(res.Problems) != 1 || res.Problems[0].Kind != install.ProblemConstraintsChanged || res.Problems[0].Range.Filename != "main.tf" {
			t.Errorf("%s: Check = %v, problems %+v; want the aws constraint change in main.tf", name, err, res.Problems)
		}
	}
	if _, err := install.Check(context.Background(), install.CheckOptions{Dir: dir, Config: &config.Config{}}); err == nil {
		t.Error("an empty Config is accepted")
	}
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
