package tflock_test

import (
	"os/exec"
	"strings"
	"testing"
)

// fence fails t for every dependency of a program importing pkgs (what go
// list -deps prints) that is forbidden: equal to an entry, or below one,
// unless allowed.
func fence(t *testing.T, pkgs []string, forbidden []string, allowed map[string]bool) {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list", "-deps"}, pkgs...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %v: %v\n%s", pkgs, err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 || !contains(deps, pkgs[len(pkgs)-1]) || !contains(deps, pkgs[0]) {
		t.Fatalf("implausible dependency list for %v: %q", pkgs, deps)
	}
	for _, dep := range deps {
		if allowed[dep] {
			continue
		}
		for _, bad := range forbidden {
			if dep == bad || strings.HasPrefix(dep, strings.TrimSuffix(bad, "/")+"/") {
				t.Errorf("%v depends on %s", pkgs, dep)
			}
		}
	}
}

// noNetwork are the packages of networking and of the OCI and go-getter
// libraries; netParsers, those of them that only parse.
var (
	noNetwork = []string{
		"net", // the package itself, and net/http, net/netip... below
		"crypto/tls",
		"oras.land/",
		"github.com/google/go-containerregistry",
		"github.com/opencontainers/",
		"github.com/hashicorp/go-getter",
	}
	netParsers = map[string]bool{
		"net/url":   true, // parsing only, no networking
		"net/netip": true, // address values only, no networking
	}
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
	forbidden := append(noNetwork[:len(noNetwork):len(noNetwork)],
		"github.com/tflock/tflock/source",
		"github.com/tflock/tflock/resolve",
	)
	allowed := map[string]bool{
		"github.com/tflock/tflock/resolve/versions":        true,
		"github.com/tflock/tflock/source/address":          true,
		"github.com/tflock/tflock/source/internal/display": true,
	}
	for p := range netParsers {
		allowed[p] = true
	}
	for _, pkg := range []string{"github.com/tflock/tflock/lockfile", "github.com/tflock/tflock/hash"} {
		fence(t, []string{pkg}, forbidden, allowed)
	}
}

// TestCheckLinksNoNetwork keeps the engine apart from the front door: a
// program that only checks an installation (install.Check, reading the
// lock file) imports resolve/install and lockfile, and links no HTTP
// client, no networking, no OCI or go-getter library and no concrete
// network source: the sources are put together in source/assemble, which
// only a program that installs imports.
func TestCheckLinksNoNetwork(t *testing.T) {
	forbidden := append(noNetwork[:len(noNetwork):len(noNetwork)],
		"github.com/tflock/tflock/source/assemble",
		"github.com/tflock/tflock/source/registry",
		"github.com/tflock/tflock/source/mirror",
		"github.com/tflock/tflock/source/git",
		"github.com/tflock/tflock/source/oci",
		"github.com/tflock/tflock/source/cliconfig",
		"github.com/tflock/tflock/source/internal/httpx",
	)
	fence(t, []string{"github.com/tflock/tflock/resolve/install", "github.com/tflock/tflock/lockfile"}, forbidden, netParsers)
}
