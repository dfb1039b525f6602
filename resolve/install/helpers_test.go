package install_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/sourcetest"
)

// counting counts the calls a source receives.
type counting struct {
	src                       source.Source
	versions, fetches, checks atomic.Int64
}

func (c *counting) Versions(ctx context.Context, pkg source.Package) ([]source.Available, error) {
	c.versions.Add(1)
	return c.src.Versions(ctx, pkg)
}

func (c *counting) Fetch(ctx context.Context, pkg source.Package, dir string) (*source.Fetched, error) {
	c.fetches.Add(1)
	return c.src.Fetch(ctx, pkg, dir)
}

func (c *counting) Checksums(ctx context.Context, pkg source.Package) ([]hash.Record, error) {
	c.checks.Add(1)
	if cr, ok := c.src.(source.ChecksumReporter); ok {
		return cr.Checksums(ctx, pkg)
	}
	return nil, nil
}

func (c *counting) total() int64 { return c.versions.Load() + c.fetches.Load() + c.checks.Load() }

const host = "registry.example.test"

var (
	awsAddr    = tfaddr.MustParseProviderSource(host + "/hashicorp/aws")
	randAddr   = tfaddr.MustParseProviderSource(host + "/hashicorp/random")
	nullAddr   = tfaddr.MustParseProviderSource(host + "/hashicorp/null")
	testPlats  = []source.Platform{source.CurrentPlatform, {OS: "plan9", Arch: "arm"}}
	vpcSource  = host + "/acme/vpc/aws"
	subsSource = host + "/acme/subnets/aws"
)

func provider(addr tfaddr.Provider, v string) []sourcetest.StaticProvider {
	var out []sourcetest.StaticProvider
	for _, p := range testPlats {
		out = append(out, sourcetest.StaticProvider{
			Addr: addr, Version: versions.MustParse(v), Platform: p,
			Files: map[string]string{"terraform-provider-" + addr.Type + "_v" + v: addr.String() + " " + v + " " + p.String()},
		})
	}
	return out
}

// staticFixtures is a small world: three providers, a vpc module (which
// requires the null provider and calls the subnets module) in two versions.
func staticFixtures() *sourcetest.Static {
	s := &sourcetest.Static{Name: host}
	for _, v := range []string{"5.0.0", "5.1.0"} {
		s.Providers = append(s.Providers, provider(awsAddr, v)...)
	}
	s.Providers = append(s.Providers, provider(randAddr, "3.6.0")...)
	s.Providers = append(s.Providers, provider(nullAddr, "3.2.0")...)
	for _, v := range []string{"1.0.0", "1.1.0"} {
		s.Modules = append(s.Modules, sourcetest.StaticModule{Source: vpcSource, Version: versions.MustParse(v), Files: map[string]string{
			"main.tf": `terraform {
  required_providers {
    null = { source = "` + host + `/hashicorp/null", version = ">= 3.0" }
  }
}
module "subnets" {
  source  = "` + subsSource + `"
  version = "~> 2.0"
}
module "local" {
  source = "./modules/local"
}
# vpc ` + v + `
`,
			"modules/local/main.tf": "# nothing\n",
		}})
	}
	s.Modules = append(s.Modules, sourcetest.StaticModule{Source: subsSource, Version: versions.MustParse("2.0.0"), Files: map[string]string{"main.tf": "# subnets\n"}})
	return s
}

const rootConfig = `terraform {
  required_providers {
    aws    = { source = "` + host + `/hashicorp/aws", version = "~> 5.0" }
    random = { source = "` + host + `/hashicorp/random" }
  }
}
module "vpc" {
  source  = "` + host + `/acme/vpc/aws"
  version = "~> 1.0"
}
module "app" {
  source = "./modules/app"
}
`

// writeFiles writes files (slash-separated name → content) under dir.
func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func newConfig(t testing.TB) string {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"main.tf": rootConfig,
		"modules/app/main.tf": `terraform {
  required_providers {
    random = { source = "` + host + `/hashicorp/random", version = ">= 3.0" }
  }
}
resource "random_id" "x" {}
`,
	})
	return dir
}

// snapshot lists every file under dir with its contents, for comparing a
// tree before and after a failed run.
func snapshot(t testing.TB, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.Type()&fs.ModeSymlink != 0 {
			l, _ := os.Readlink(p)
			lines = append(lines, rel+" -> "+l)
			return nil
		}
		if d.IsDir() {
			lines = append(lines, rel+"/")
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		lines = append(lines, rel+": "+string(b))
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func mustV(s string) versions.Version { return versions.MustParse(s) }

func openCacheIn(dir string) *cache.Cache {
	c, err := cache.Open(dir, cache.Options{})
	if err != nil {
		panic(err)
	}
	return c
}

// freshMachine removes the install directory of the configuration in dir,
// as on a machine that has the lock file and nothing else: an installed
// package that matches the lock file is kept without a download, so tests
// that mean to download again start from here.
func freshMachine(t testing.TB, dir string) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(dir, ".terraform")); err != nil {
		t.Fatal(err)
	}
}
