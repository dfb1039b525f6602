package mirror_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/mirror"
)

func ExampleFilesystem() {
	root, _ := os.MkdirTemp("", "mirror")
	defer os.RemoveAll(root)
	// One unpacked package: HOST/NAMESPACE/TYPE/VERSION/OS_ARCH/.
	pkgDir := filepath.Join(root, "registry.opentofu.org", "hashicorp", "null", "3.2.0", "linux_amd64")
	_ = os.MkdirAll(pkgDir, 0o755)
	_ = os.WriteFile(filepath.Join(pkgDir, "terraform-provider-null_v3.2.0_x5"), []byte("binary"), 0o755)

	m := mirror.NewFilesystem(root)
	null := tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/null")
	list, err := m.Versions(context.Background(), source.ProviderPackage{Addr: null})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, a := range list {
		fmt.Println(a.Version, a.Platforms)
	}
	// Output:
	// 3.2.0 [linux_amd64]
}

func ExampleDevOverrides_Warning() {
	d := mirror.DevOverrides{
		tfaddr.MustParseProviderSource("registry.opentofu.org/acme/widget"): "/src/widget",
	}
	fmt.Println(d.Overrides(tfaddr.MustParseProviderSource("registry.opentofu.org/acme/widget")))
	fmt.Println(d.Warning())
	// Output:
	// true
	// Provider development overrides are in effect.
	//
	// The following provider development overrides are set in the CLI configuration:
	//  - registry.opentofu.org/acme/widget in /src/widget
	//
	// These providers are used from those directories as they are: they are not installed, not verified against the dependency lock file, and not recorded in it. Their behavior may not match any published release.
}
