package tflock_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencyFence keeps the model packages light: a program that
// imports only lockfile, or only hash, links no networking, no OCI library,
// no source and no solver (resolve/versions, the vocabulary, is allowed).
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
		"net/url": true, // parsing only, no networking
		"github.com/tflock/tflock/resolve/versions": true,
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
