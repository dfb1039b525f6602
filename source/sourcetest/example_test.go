package sourcetest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/sourcetest"
)

// A Static source serves packages from memory, for tests of code that
// takes a source.Source.
func ExampleStatic() {
	src := &sourcetest.Static{Modules: []sourcetest.StaticModule{
		{Source: "registry.opentofu.org/acme/vpc/aws", Version: versions.MustParse("1.1.0"), Files: map[string]string{"main.tf": "# vpc\n"}},
		{Source: "registry.opentofu.org/acme/vpc/aws", Version: versions.MustParse("1.0.0"), Files: map[string]string{"main.tf": "# old vpc\n"}},
	}}
	ctx := context.Background()
	mod := source.ModulePackage{Source: "registry.opentofu.org/acme/vpc/aws"}
	list, _ := src.Versions(ctx, mod)
	for _, a := range list {
		fmt.Println(a.Version)
	}

	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	mod.Version = versions.MustParse("1.1.0")
	got, err := src.Fetch(ctx, mod, filepath.Join(dir, "vpc"))
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := os.ReadFile(filepath.Join(got.Dir, "main.tf"))
	fmt.Printf("%s", b)
	fmt.Println(got.Hashes[0].Scheme())
	// Output:
	// 1.0.0
	// 1.1.0
	// # vpc
	// h1:
}
