package oci_test

import (
	"testing"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/oci"
	"github.com/tflock/tflock/source/oci/ocitest"
	"github.com/tflock/tflock/source/sourcetest"
)

func TestConformance(t *testing.T) {
	s := newServer(t, ocitest.ServerOptions{})
	publishModule(t, s, "mods/net")
	zips := publishProvider(t, s, "3.7.2", linuxAMD64, darwinARM64)
	addr := "oci://" + s.Host() + "/mods/net"
	mod := source.ModulePackage{Source: addr, Version: versions.MustParse("1.2.0")}
	prov := source.ProviderPackage{Addr: randomAddr, Version: versions.MustParse("3.7.2"), Platform: linuxAMD64}
	opts := s.SourceOptions(mirrorRepo)
	opts.AllPlatformChecksums = true
	sourcetest.Run(t, oci.NewSource(opts), sourcetest.Cases{
		Known: []source.Package{
			mod,
			source.ModulePackage{Source: addr, Ref: "stable"},
			prov,
			source.ProviderPackage{Addr: randomAddr, Version: versions.MustParse("3.7.2"), Platform: darwinARM64},
		},
		WantH1: map[string]hash.Hash{
			prov.String(): h1OfZip(t, zips[linuxAMD64]),
		},
		MissingVersion:  source.ModulePackage{Source: addr, Version: versions.MustParse("7.0.0")},
		MissingPlatform: source.ProviderPackage{Addr: randomAddr, Version: versions.MustParse("3.7.2"), Platform: windows386},
	})
}
