package lockfile_test

import (
	"testing"

	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/source/address"
)

// TestModuleLockAddress: the reader reads a module lock's source once,
// typed (kind, package address, the source's own "//subdir"), and carries
// it on the lock; a lock whose Source a program set or changed is read
// from that Source; a source that is no module package address is kept
// as written and its Address says why it cannot be used.
func TestModuleLockAddress(t *testing.T) {
	f := mustParse(t, `module "app" {
  source  = "registry.example.test/acme/app/cloud//good"
  subdir  = "modules"
  version = "1.0.0"
}

module "img" {
  source = "oci://oci.example.test/modules/img"
  tag    = "v1"
}

module "net" {
  source = "git::https://git.example.test/net.git//vpc"
  ref    = "v1.2.0"
}

module "odd" {
  source = "example.com/x"
}
`)
	addr, err := f.Module("app").Address()
	if r, ok := addr.(address.Registry); err != nil || !ok || r.Package() != "registry.example.test/acme/app/cloud" || r.Subdir != "good" {
		t.Errorf("app: %#v, %v", addr, err)
	}
	if f.Module("app").Subdir != "modules" {
		t.Errorf("app: Subdir %q", f.Module("app").Subdir)
	}
	addr, err = f.Module("img").Address()
	if r, ok := addr.(address.Remote); err != nil || !ok || r.Kind != address.KindOCI || r.Package() != "oci://oci.example.test/modules/img" {
		t.Errorf("img: %#v, %v", addr, err)
	}
	addr, err = f.Module("net").Address()
	if r, ok := addr.(address.Remote); err != nil || !ok || r.Kind != address.KindGit || r.Package() != "git::https://git.example.test/net.git" || r.Subdir != "vpc" || r.Ref != "" {
		t.Errorf("net: %#v, %v", addr, err)
	}
	if addr, err := f.Module("odd").Address(); err == nil {
		t.Errorf("odd: %#v, want an error", addr)
	}

	// Changed by a program: Address reads the new Source.
	m := f.Module("app")
	m.Source = "oci://oci.example.test/modules/app"
	if addr, err := m.Address(); err != nil || addr.Package() != m.Source {
		t.Errorf("changed: %#v, %v", addr, err)
	}
	built := &lockfile.ModuleLock{Path: "b", Source: "ns/name/sys"}
	if addr, err := built.Address(); err != nil || addr.Package() != address.DefaultRegistryHost+"/ns/name/sys" {
		t.Errorf("built: %#v, %v", addr, err)
	}
	if err := f.SetModule(built); err != nil {
		t.Fatal(err)
	}
	if addr, err := f.Module("b").Address(); err != nil || addr.Package() != address.DefaultRegistryHost+"/ns/name/sys" {
		t.Errorf("set: %#v, %v", addr, err)
	}
	if _, err := (&lockfile.ModuleLock{Path: "l", Source: "./local"}).Address(); err == nil {
		t.Error("a local path: no error")
	}

	// The RFC forms carry it too, without the pin or credentials.
	rfc := mustParse(t, `module "foo" {
  source  = "git::https://example.com/foo.git//subdir?ref=v1"
  package = "git::https://example.com/foo.git?ref=5632352e8042c13b2da684ad5895525f2aeb0f98"
}
`)
	addr, err = rfc.Module("foo").Address()
	if r, ok := addr.(address.Remote); err != nil || !ok || r.Kind != address.KindGit || r.Ref != "" || r.Subdir != "subdir" {
		t.Errorf("RFC form: %#v, %v", addr, err)
	}
}
