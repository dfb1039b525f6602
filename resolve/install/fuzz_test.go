package install_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/tflock/tflock/resolve/install"
)

// FuzzParseManifest checks that ParseManifest never panics and that what
// it accepts survives MarshalManifest unchanged (up to the sort by key).
func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(`{"Modules":[{"Key":"","Source":"","Dir":"."},{"Key":"vpc","Source":"registry.opentofu.org/ns/name/sys","Version":"1.2.0","Dir":".terraform/modules/vpc"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := install.ParseManifest(b)
		if err != nil {
			return
		}
		out, err := install.MarshalManifest(m.Modules)
		if err != nil {
			t.Fatal(err)
		}
		m2, err := install.ParseManifest(out)
		if err != nil {
			t.Fatalf("re-parse of %s: %v", out, err)
		}
		want := slices.Clone(m.Modules)
		slices.SortFunc(want, func(a, b install.ManifestRecord) int { return strings.Compare(a.Key, b.Key) })
		if !slices.Equal(want, m2.Modules) {
			t.Fatalf("round trip changed the records:\n%v\n%v", want, m2.Modules)
		}
	})
}

func TestMarshalManifestFormat(t *testing.T) {
	// The format of OpenTofu's internal/modsdir: records sorted by key,
	// compact JSON, Version omitted when empty.
	got, err := install.MarshalManifest([]install.ManifestRecord{
		{Key: "vpc.sub", Source: "./sub", Dir: ".terraform/modules/vpc/sub"},
		{Key: "vpc", Source: "registry.opentofu.org/ns/name/sys", Version: "1.2.0", Dir: ".terraform/modules/vpc"},
		{Key: "", Source: "", Dir: "."},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"Modules":[{"Key":"","Source":"","Dir":"."},{"Key":"vpc","Source":"registry.opentofu.org/ns/name/sys","Version":"1.2.0","Dir":".terraform/modules/vpc"},{"Key":"vpc.sub","Source":"./sub","Dir":".terraform/modules/vpc/sub"}]}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if _, err := install.ParseManifest([]byte(`{"Modules":[{"Key":"a"},{"Key":"a"}]}`)); err == nil {
		t.Error("a manifest with a duplicate key was accepted")
	}
}
