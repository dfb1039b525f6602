package source_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/address"
)

// TestNewModulePackageSameIdentity checks that a module package built by
// the constructor from an address parsed where it was read, and one a
// caller built from the package's Source string alone, have one identity:
// the same Source, String and typed address, of the same kind.
func TestNewModulePackageSameIdentity(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		opts address.Options
		kind string
	}{
		{raw: "registry.example.test/acme/vpc/cloud", kind: "registry"},
		{raw: "acme/vpc/cloud//modules/sub", kind: "registry"},
		{raw: "hashicorp/consul/aws", opts: address.Options{DefaultRegistryHost: "registry.terraform.io"}, kind: "registry"},
		{raw: "git::https://git.example.test/acme/mono.git//modules/a?ref=v1.2.0", kind: "git"},
		{raw: "git::ssh://git@git.example.test/acme/mono.git?ref=main&depth=1", kind: "git"},
		{raw: "github.com/acme/mod", kind: "git"},
		{raw: "oci://oci.example.test/acme/mod?tag=1.0.0", kind: "oci"},
		{raw: "oci://oci.example.test/acme/mod//sub?digest=sha256:" + strings.Repeat("a", 64), kind: "oci"},
		{raw: "https://files.example.test/mod.tar.gz//sub", kind: "http"},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			ms, err := address.ParseModuleSourceWith(tc.raw, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			built, err := source.NewModulePackage(ms)
			if err != nil {
				t.Fatal(err)
			}
			fromString := source.ModulePackage{Source: built.Source}
			a, err := built.Address()
			if err != nil {
				t.Fatal(err)
			}
			b, err := fromString.Address()
			if err != nil {
				t.Fatal(err)
			}
			if a != b || built.String() != fromString.String() || built.Source != ms.Package() {
				t.Errorf("constructor: %#v (%s), from the string: %#v (%s)", a, built, b, fromString)
			}
			if got := kindOf(a); got != tc.kind {
				t.Errorf("kind %s, want %s", got, tc.kind)
			}
			if s := a.LockSource(); strings.Contains(s, "//") && !strings.Contains(s, "://") {
				t.Errorf("the package address keeps a subdirectory: %s", s)
			}
			if r, ok := a.(address.Remote); ok && (r.Ref != "" || r.Digest != "" || r.Subdir != "") {
				t.Errorf("the package address keeps a selector or subdirectory: %#v", r)
			}
		})
	}
}

func kindOf(ms address.ModuleSource) string {
	switch a := ms.(type) {
	case address.Registry:
		return "registry"
	case address.Remote:
		return string(a.Kind)
	}
	return "local"
}

// TestNewModulePackageLocal checks that a local path names no package,
// and that a Source string that does not parse is an error wrapping
// source.ErrNotFound.
func TestNewModulePackageLocal(t *testing.T) {
	if _, err := source.NewModulePackage(address.MustParseModuleSource("./mod")); err == nil {
		t.Error("a local path gave a package")
	}
	if _, err := (source.ModulePackage{Source: "git::"}).Address(); !errors.Is(err, source.ErrNotFound) {
		t.Errorf("got %v, want an error wrapping ErrNotFound", err)
	}
}

// TestModulePackageEventNoCredentials checks that an event's package
// keeps no credential in its typed address either.
func TestModulePackageEventNoCredentials(t *testing.T) {
	pkg, err := source.NewModulePackage(address.MustParseModuleSource("git::https://user:s3cret@git.example.test/acme/mod.git?ref=v1"))
	if err != nil {
		t.Fatal(err)
	}
	var got source.Event
	source.Emit(source.EventsFunc(func(e source.Event) { got = e }), source.Event{Kind: source.EventWarning, Package: pkg})
	m := got.Package.(source.ModulePackage)
	a, err := m.Address()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(m.Source, "s3cret") || strings.Contains(a.String(), "s3cret") {
		t.Errorf("the event's package keeps the password: %q, %#v", m.Source, a)
	}
}

// TestModuleLocationRemote checks that a location's typed address, when
// a locator sets it, is what its Address string reads as.
func TestModuleLocationRemote(t *testing.T) {
	loc := "git::https://git.example.test/acme/mono.git//modules/a?ref=v1"
	r, err := source.ParseLocation(loc)
	if err != nil {
		t.Fatal(err)
	}
	typed, err := source.ModuleLocation{Address: loc, Addr: r}.Remote()
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := source.ModuleLocation{Address: loc}.Remote()
	if err != nil || typed != parsed || parsed.Subdir != "modules/a" || parsed.Ref != "v1" {
		t.Errorf("typed %#v, parsed %#v (%v)", typed, parsed, err)
	}
	if _, err := (source.ModuleLocation{Address: "./local"}).Remote(); err == nil {
		t.Error("a local path read as a remote location")
	}
}

// TestAddressRefusesTwoNames: a package whose Addr and Source name two
// package addresses would be fetched by one (the sources route by Addr)
// and cached, locked and reported by the other (Source); Address refuses
// it, so no source fetches it.
func TestAddressRefusesTwoNames(t *testing.T) {
	good, err := source.NewModulePackage(address.MustParseModuleSource("git::https://example.com/good.git"))
	if err != nil {
		t.Fatal(err)
	}
	evil, err := source.NewModulePackage(address.MustParseModuleSource("git::https://example.com/evil.git"))
	if err != nil {
		t.Fatal(err)
	}
	mixed := source.ModulePackage{Source: good.Source, Addr: evil.Addr}
	if _, err := mixed.Address(); !errors.Is(err, source.ErrNotFound) || !strings.Contains(err.Error(), "two addresses") {
		t.Fatalf("Address of a package naming two addresses: %v, want an error wrapping ErrNotFound", err)
	}
	for _, ok := range []source.ModulePackage{good, {Addr: good.Addr}, {Source: good.Source}} {
		got, err := ok.Address()
		if err != nil || got.Package() != good.Source {
			t.Errorf("Address(%+v) = %v, %v; want %s", ok, got, err, good.Source)
		}
	}
}
