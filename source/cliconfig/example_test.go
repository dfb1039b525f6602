package cliconfig_test

import (
	"context"
	"fmt"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cliconfig"
	tfregistry "github.com/tflock/tflock/source/registry"
	"github.com/tflock/tflock/source/sourcetest"
)

func ExampleParse() {
	cfg, diags := cliconfig.Parse([]byte(`
provider_installation {
  filesystem_mirror {
    path    = "/usr/share/tofu/providers"
    include = ["example.com/*/*"]
  }
  direct {
    exclude = ["example.com/*/*"]
  }
}
`), "example.tfrc")
	if diags.HasErrors() {
		fmt.Println(diags)
		return
	}
	for _, m := range cfg.ProviderInstallation.Methods {
		fmt.Println(m.Kind, m.Location, m.Include, m.Exclude)
	}
	// Output:
	// filesystem_mirror /usr/share/tofu/providers [example.com/*/*] []
	// direct  [] [example.com/*/*]
}

func ExampleConfig_Sources() {
	cfg, _ := cliconfig.Parse([]byte(`
provider_installation {
  network_mirror {
    url     = "https://mirror.example.com/providers/"
    include = ["registry.opentofu.org/hashicorp/*"]
  }
  direct {}
}
`), "example.tfrc")
	inst, diags := cfg.Sources(context.Background(), cliconfig.SourceOptions{
		// A real program passes a constructor of a source/registry source.
		DirectMethod: func(cliconfig.Method, *cliconfig.Config) (source.Source, error) {
			return &sourcetest.Static{Name: "registry"}, nil
		},
	})
	if diags.HasErrors() {
		fmt.Println(diags)
		return
	}
	fmt.Println(inst.Source)
	// Output:
	// multi(network_mirror https://mirror.example.com/providers/, direct)
}

func ExampleConfig_RegistryOptions() {
	cfg, diags := cliconfig.Parse([]byte(`
host "registry.example.com" {
  services = {
    "providers.v1" = "https://registry.example.com/api/providers/"
  }
}
credentials "registry.example.com" {
  token = "example-token"
}
`), "example.tfrc")
	if diags.HasErrors() {
		fmt.Println(diags)
		return
	}
	opts := cfg.RegistryOptions(tfregistry.Options{UserAgent: "my-tool/1.0"})
	fmt.Println(opts.Hosts["registry.example.com"]["providers.v1"])
	_, ok := opts.Credentials.Token("registry.example.com")
	fmt.Println("token:", ok, "user agent:", opts.UserAgent)
	// A registry source built with these options (tfregistry.NewSource)
	// skips service discovery for the host and sends its token.

	// Output:
	// https://registry.example.com/api/providers/
	// token: true user agent: my-tool/1.0
}
