package cliconfig_test

import (
	"context"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/source/cliconfig"
)

func TestOCIRepositoryFunc(t *testing.T) {
	f := cliconfig.OCIRepositoryFunc("oci.example.test/mirror/${namespace}/${type}")
	got, err := f(context.Background(), tfaddr.MustParseProviderSource("example.test/acme/tool"))
	if err != nil || got != "oci.example.test/mirror/acme/tool" {
		t.Errorf("got %q, %v", got, err)
	}
	if _, err := cliconfig.OCIRepositoryFunc("${nope}")(context.Background(), tfaddr.MustParseProviderSource("example.test/acme/tool")); err == nil {
		t.Error("a template with an unknown symbol mapped a provider")
	}
}
