package oci_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/oci"
	"github.com/tflock/tflock/source/oci/ocitest"
)

// A module published to an OCI registry under semver tags is selected by a
// version constraint, fetched, and locked by its manifest digest.
func Example() {
	srv := ocitest.NewServer(ocitest.ServerOptions{})
	defer srv.Close()
	ctx := context.Background()

	// Publish four versions, and a "latest" tag that is not a version.
	repo, err := srv.Repository("modules/network")
	if err != nil {
		log.Fatal(err)
	}
	for _, v := range []string{"1.1.0", "1.2.0", "1.2.3", "2.0.0"} {
		zip, err := ocitest.Zip(map[string]string{"main.tf": "# network module " + v + "\n"})
		if err != nil {
			log.Fatal(err)
		}
		tags := []string{v}
		if v == "2.0.0" {
			tags = append(tags, "latest")
		}
		if _, err := ocitest.PushModule(ctx, repo, zip, tags...); err != nil {
			log.Fatal(err)
		}
	}

	src := oci.NewSource(srv.SourceOptions(nil))
	mod := source.ModulePackage{Source: "oci://" + srv.Host() + "/modules/network"}
	avail, err := src.Versions(ctx, mod)
	if err != nil {
		log.Fatal(err)
	}
	var list []versions.Version
	for _, a := range avail {
		list = append(list, a.Version)
	}
	fmt.Println("versions:", list)

	// version = "~> 1.2" on an oci:// source.
	v, ok := versions.Newest(list, versions.MustParseModuleConstraints("~> 1.2"))
	if !ok {
		log.Fatal("no version matches")
	}
	mod.Version = v
	fmt.Println("selected:", v)

	dir, err := os.MkdirTemp("", "oci-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	got, err := src.Fetch(ctx, mod, filepath.Join(dir, "network"))
	if err != nil {
		log.Fatal(err)
	}
	main, err := os.ReadFile(filepath.Join(got.Dir, "main.tf"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print("main.tf: ", string(main))
	fmt.Println("digest:", strings.HasPrefix(got.Pin, "sha256:"), len(got.Pin))
	fmt.Println("hashes:", len(got.Hashes), got.Hashes[0].Scheme())
	// Output:
	// versions: [1.1.0 1.2.0 1.2.3 2.0.0]
	// selected: 1.2.3
	// main.tf: # network module 1.2.3
	// digest: true 71
	// hashes: 1 h1:
}

// An OCI provider mirror vouches for every platform's zh: hash: the
// digests of the per-platform zip layers, read without downloading them.
func ExampleSource_Checksums() {
	srv := ocitest.NewServer(ocitest.ServerOptions{})
	defer srv.Close()
	ctx := context.Background()

	repo, err := srv.Repository("mirror/hashicorp-random")
	if err != nil {
		log.Fatal(err)
	}
	zips := map[source.Platform][]byte{}
	for _, p := range []string{"linux_amd64", "darwin_arm64"} {
		plat, _ := source.ParsePlatform(p)
		if zips[plat], err = ocitest.Zip(map[string]string{"terraform-provider-random": "build for " + p}); err != nil {
			log.Fatal(err)
		}
	}
	if _, err := ocitest.PushProvider(ctx, repo, "3.7.2", zips); err != nil {
		log.Fatal(err)
	}

	// Like repository_template = "mirror/${namespace}-${type}".
	opts := srv.SourceOptions(func(addr string) string {
		p := tfaddr.MustParseProviderSource(addr)
		return "mirror/" + p.Namespace + "-" + p.Type
	})
	opts.AllPlatformChecksums = true
	src := oci.NewSource(opts)
	recs, err := src.Checksums(ctx, source.ProviderPackage{
		Addr:    tfaddr.MustParseProviderSource("hashicorp/random"),
		Version: versions.MustParse("3.7.2"),
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range recs {
		fmt.Println(r.Provenance.Platforms, r.Hash.Scheme(), len(r.Hash.Value()), r.Provenance.Mirrors[0] == srv.Host()+"/mirror/hashicorp-random")
	}
	// Output:
	// [darwin_arm64] zh: 64 true
	// [linux_amd64] zh: 64 true
}
