package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/tflock/tflock/resolve/config"
)

var fsTree = map[string]string{
	"main.tf": `
terraform {
  required_providers {
    aws = { source = "hashicorp/aws", version = ">= 5.0" }
  }
}
module "net" { source = "./modules/net" }
module "vpc" {
  source  = "example.test/acme/vpc/aws"
  version = "~> 1.2"
}
`,
	"modules/net/net.tf": `
terraform {
  required_providers {
    random = { source = "hashicorp/random", version = "3.6.0" }
  }
}
module "inner" { source = "../inner" }
`,
	"modules/inner/main.tofu": `
module "sg" {
  source = "git::https://git.example.test/sg.git?ref=v1.0.0"
}
`,
}

// The same tree read from disk and from an fs.FS gives the same modules
// and requirements; only the file names differ (OS paths vs FS paths).
func TestReadTreeFSMatchesDisk(t *testing.T) {
	dir := t.TempDir()
	mfs := fstest.MapFS{}
	for name, src := range fsTree {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		mfs[name] = &fstest.MapFile{Data: []byte(src)}
	}
	onDisk, diags := config.ReadTree(dir, "", config.ReadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	inFS, diags := config.ReadTreeFS(mfs, ".", "", config.ReadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	strip := func(lines []string) []string {
		for i, l := range lines {
			l = strings.ReplaceAll(l, filepath.ToSlash(dir)+"/", "")
			lines[i] = strings.ReplaceAll(l, dir+string(filepath.Separator), "")
		}
		return lines
	}
	got, want := strip(reqLines(inFS.Requirements())), strip(reqLines(onDisk.Requirements()))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requirements differ (-disk +fs):\n%s", diff)
	}
	if len(got) != 4 {
		t.Errorf("got %d requirements, want 4 (aws, vpc, random, sg): %q", len(got), got)
	}
	var calls []string
	for _, m := range inFS.Modules {
		calls = append(calls, m.Call+"@"+m.Dir)
	}
	if diff := cmp.Diff([]string{"@.", "net@modules/net", "net.inner@modules/inner"}, calls); diff != "" {
		t.Errorf("modules (-want +got):\n%s", diff)
	}
}

// A local call that leads outside the file system is an error naming the
// call and its file and line, not a read of the disk.
func TestReadTreeFSOutside(t *testing.T) {
	mfs := fstest.MapFS{"main.tf": {Data: []byte("module \"up\" {\n  source = \"../up\"\n}\n")}}
	_, diags := config.ReadTreeFS(mfs, ".", "", config.ReadOptions{})
	if !diags.HasErrors() {
		t.Fatal("no error for a call outside the file system")
	}
	if got := diagLines(diags); !cmp.Equal(got, []string{"main.tf:2 ERROR: Unreadable module directory"}) {
		t.Errorf("diagnostics = %q", got)
	}
	if !strings.Contains(diags[0].Detail, `"up"`) || !strings.Contains(diags[0].Detail, "outside the file system") {
		t.Errorf("detail = %q", diags[0].Detail)
	}
}
