package ocitest_test

import (
	"context"
	"testing"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/oci"
	"github.com/tflock/tflock/source/oci/ocitest"
)

// TestStableHost: a registry started with New and a host name is
// addressed by that name (pushing and fetching, with basic auth), and
// two registries with the same content give the same digests.
func TestStableHost(t *testing.T) {
	ctx := context.Background()
	var digests []string
	for range 2 {
		srv := ocitest.New(t, ocitest.ServerOptions{Host: "oci.example.test", Username: "u", Password: "p"})
		if srv.Host() != "oci.example.test" {
			t.Fatalf("Host() = %q", srv.Host())
		}
		repo, err := srv.Repository("modules/storage")
		if err != nil {
			t.Fatal(err)
		}
		z, err := ocitest.Zip(map[string]string{"main.tf": "# storage\n"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ocitest.PushModule(ctx, repo, z, "1.0.0"); err != nil {
			t.Fatal(err)
		}
		opts := srv.SourceOptions(nil)
		src := oci.NewSource(opts)
		pkg := source.ModulePackage{Source: "oci://oci.example.test/modules/storage"}
		if _, err := src.Versions(ctx, pkg); err == nil {
			t.Error("listed without credentials")
		}
		opts.Credentials = func(context.Context, string) (oci.Credential, error) {
			return oci.Credential{Username: "u", Password: "p"}, nil
		}
		src = oci.NewSource(opts)
		av, err := src.Versions(ctx, pkg)
		if err != nil || len(av) != 1 || av[0].Version.String() != "1.0.0" {
			t.Fatalf("versions = %v, %v; want 1.0.0", av, err)
		}
		pkg.Version = av[0].Version
		f, err := src.Fetch(ctx, pkg, t.TempDir()+"/pkg")
		if err != nil {
			t.Fatal(err)
		}
		digests = append(digests, f.Pin)
	}
	if digests[0] == "" || digests[0] != digests[1] {
		t.Errorf("digests %q, want two equal", digests)
	}
}
