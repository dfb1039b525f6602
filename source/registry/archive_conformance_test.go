package registry_test

import (
	"testing"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/sourcetest"
)

// TestArchiveSourceConformance runs the source conformance suite on
// ArchiveSource, whose packages are fetched by URL and never listed.
func TestArchiveSourceConformance(t *testing.T) {
	srv := startArchiveServer(t)
	src := newArchiveSource(srv, nil)
	want := archiveH1(t, archiveFiles)
	known := []source.Package{
		source.ModulePackage{Source: srv.URL + "/mod.zip"},
		source.ModulePackage{Source: srv.URL + "/mod.tar.gz"},
		source.ModulePackage{Source: srv.URL + "/download?id=zip&archive=zip"},
		source.ModulePackage{Source: srv.URL + "/page"},
	}
	wantH1 := map[string]hash.Hash{}
	for _, p := range known {
		wantH1[p.String()] = want
	}
	sourcetest.Run(t, src, sourcetest.Cases{Known: known, WantH1: wantH1, Unlisted: true})
}
