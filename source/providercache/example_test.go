package providercache_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/providercache"
	"github.com/tflock/tflock/source/sourcetest"
)

func ExampleDir_Install() {
	work, _ := os.MkdirTemp("", "config")
	defer os.RemoveAll(work)

	null := tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/null")
	pkg := source.ProviderPackage{Addr: null, Version: versions.MustParse("3.2.0"), Platform: source.Platform{OS: "linux", Arch: "amd64"}}
	src := &sourcetest.Static{Providers: []sourcetest.StaticProvider{
		{Addr: null, Version: pkg.Version, Platform: pkg.Platform, Files: map[string]string{"terraform-provider-null_v3.2.0_x5": "binary"}},
	}}

	dir := providercache.NewDir(filepath.Join(work, providercache.DefaultDir))
	inst, _, err := dir.Install(context.Background(), src, pkg)
	if err != nil {
		fmt.Println(err)
		return
	}
	rel, _ := filepath.Rel(work, inst.Dir)
	fmt.Println(filepath.ToSlash(rel))
	exe, _ := inst.Executable()
	fmt.Println(filepath.Base(exe))
	// Output:
	// .terraform/providers/registry.opentofu.org/hashicorp/null/3.2.0/linux_amd64
	// terraform-provider-null_v3.2.0_x5
}
