package assemble_test

import (
	"archive/zip"
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/assemble"
)

// Build the sources tofu would use from a CLI configuration: here a file
// with a filesystem mirror and a dev override, read with an environment
// of its own. The result serves packages (pass Source to Init), and says
// which providers dev overrides serve and where the plugin cache is.
func ExampleNewSources() {
	dir, err := os.MkdirTemp("", "example-sources-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// A filesystem mirror holding acme/greet 1.2.0 for this platform.
	mirror := filepath.Join(dir, "mirror")
	zipPath := filepath.Join(mirror, "registry.example.test", "acme", "greet",
		"terraform-provider-greet_1.2.0_"+source.CurrentPlatform.String()+".zip")
	if err := os.MkdirAll(filepath.Dir(zipPath), 0o755); err != nil {
		log.Fatal(err)
	}
	f, err := os.Create(zipPath)
	if err != nil {
		log.Fatal(err)
	}
	zw := zip.NewWriter(f)
	if w, err := zw.Create("terraform-provider-greet_v1.2.0"); err == nil {
		fmt.Fprint(w, "greet")
	}
	if err := zw.Close(); err != nil {
		log.Fatal(err)
	}
	f.Close()

	cliConfig := filepath.Join(dir, "tofu.tfrc")
	text := `provider_installation {
  dev_overrides {
    "registry.example.test/acme/hello" = "` + filepath.ToSlash(filepath.Join(dir, "hello")) + `"
  }
  filesystem_mirror {
    path    = "` + filepath.ToSlash(mirror) + `"
    include = ["registry.example.test/acme/*"]
  }
}
`
	if err := os.WriteFile(cliConfig, []byte(text), 0o644); err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	srcs, diags := assemble.NewSources(ctx, assemble.SourcesOptions{
		ConfigFiles: []string{cliConfig},
		Env:         []string{"TF_PLUGIN_CACHE_DIR=plugin-cache"},
	})
	if diags.HasErrors() {
		log.Fatal(diags)
	}
	list, err := srcs.Source.Versions(ctx, source.ProviderPackage{Addr: tfaddr.MustParseProviderSource("registry.example.test/acme/greet")})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("greet:", list[0].Version)
	fmt.Println("dev overrides:", srcs.DevOverrides)
	fmt.Println("plugin cache:", srcs.PluginCacheDir)
	for _, w := range diags { // the warnings
		fmt.Println("warning:", w.Summary)
	}
	// Output:
	// greet: 1.2.0
	// dev overrides: [registry.example.test/acme/hello]
	// plugin cache: plugin-cache
	// warning: Provider development overrides are in effect.
}
