package tflock_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencyFence keeps the model packages light: a program that
// imports only lockfile, or only hash, links no networking, no OCI library,
// no source and no solver. Allowed: resolve/versions (the vocabulary), and
// source/address with its display helpers, the address parser that the
// module-lock forms of OpenTofu's RFCs need (it parses strings; it opens no
// connection).
// The imports of such a program are the package's own dependencies, which
// go list -deps prints.
func TestDependencyFence(t *testing.T) {
	forbidden := []string{
		"net", // the package itself, and net/http, net/netip... below
		"crypto/tls",
		"oras.land/",
		"github.com/google/go-containerregistry",
		"github.com/opencontainers/",
		"github.com/hashicorp/go-getter",
		"github.com/tflock/tflock/source",
		"github.com/tflock/tflock/resolve",
	}
	allowed := map[string]bool{
		"net/url":   true, // parsing only, no networking
		"net/netip": true, // address values only, no networking
		"github.com/tflock/tflock/resolve/versions":        true,
		"github.com/tflock/tflock/source/address":          true,
		"github.com/tflock/tflock/source/internal/display": true,
	}
	for _, pkg := range []string{"github.com/tflock/tflock/lockfile", "github.com/tflock/tflock/hash"} {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 10 || deps[len(deps)-1] != pkg {
			t.Fatalf("implausible dependency list for %s: %q", pkg, deps)
		}
		for _, dep := range deps {
			if allowed[dep] {
				continue
			}
			for _, bad := range forbidden {
				if dep == bad || strings.HasPrefix(dep, strings.TrimSuffix(bad, "/")+"/") {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
}

// TestCheckLinksNoNetwork keeps the engine apart from the front door: a
// program that only checks an installation (install.Check, reading the
// lock file) imports resolve/install and lockfile, and links no HTTP
// client, no networking, no OCI or go-getter library and no concrete
// network source: the sources are put together in source/assemble, which
// only a program that installs imports.
func TestCheckLinksNoNetwork(t *testing.T) {
	pkgs := []string{"github.com/tflock/tflock/resolve/install", "github.com/tflock/tflock/lockfile"}
	out, err := exec.Command("go", append([]string{"list", "-deps"}, pkgs...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %v: %v\n%s", pkgs, err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 20 || !contains(deps, pkgs[0]) || !contains(deps, pkgs[1]) {
		t.Fatalf("implausible dependency list: %q", deps)
	}
	forbidden := []string{
		"net", // the package itself, and net/http, net/netip... below
		"crypto/tls",
		"oras.land/",
		"github.com/google/go-containerregistry",
		"github.com/hashicorp/go-getter",
		"github.com/tflock/tflock/source/assemble",
		"github.com/tflock/tflock/source/registry",
		"github.com/tflock/tflock/source/mirror",
		"github.com/tflock/tflock/source/git",
		"github.com/tflock/tflock/source/oci",
		"github.com/tflock/tflock/source/cliconfig",
		"github.com/tflock/tflock/source/internal/httpx",
	}
	allowed := map[string]bool{
		"net/url":   true, // parsing only, no networking
		"net/netip": true, // address values only, no networking
	}
	for _, dep := range deps {
		if allowed[dep] {
			continue
		}
		for _, bad := range forbidden {
			if dep == bad || strings.HasPrefix(dep, strings.TrimSuffix(bad, "/")+"/") {
				t.Errorf("a program that only checks links %s (go list -deps resolve/install lockfile)", dep)
			}
		}
	}
}
