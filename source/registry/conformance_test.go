package registry_test

import (
	"testing"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/registry/registrytest"
	"github.com/tflock/tflock/source/sourcetest"
)

func TestConformance(t *testing.T) {
	srv := registrytest.New(t, fixtures, registrytest.Options{Packages: true})
	src, _ := newSource(srv, nil)
	aws := providerPkg(t, "registry.example.test/hashicorp/aws", "5.1.0", "linux_amd64")
	random := providerPkg(t, "registry.example.test/acme/random", "3.6.0", "darwin_arm64")
	awsInfo, _ := srv.ProviderPackage("hashicorp/aws", "5.1.0", "linux_amd64")
	randomInfo, _ := srv.ProviderPackage("acme/random", "3.6.0", "darwin_arm64")
	sourcetest.Run(t, src, sourcetest.Cases{
		Known:           []source.Package{aws, random, modulePkg("3.19.0"), modulePkg("3.18.1")},
		WantH1:          map[string]hash.Hash{aws.String(): awsInfo.H1, random.String(): randomInfo.H1, modulePkg("3.19.0").String(): mustH1(t, srv, "3.19.0")},
		MissingVersion:  providerPkg(t, "registry.example.test/hashicorp/aws", "9.9.9", "linux_amd64"),
		MissingPlatform: providerPkg(t, "registry.example.test/hashicorp/aws", "4.67.0", "windows_amd64"),
	})
}
