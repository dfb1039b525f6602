package lockfile

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencyFence keeps the model free of the installer: lockfile must
// not import the sources, the solver, oras, go-getter or net/http.
func TestDependencyFence(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	forbidden := []string{
		"github.com/tflock/tflock/source",
		"github.com/tflock/tflock/resolve",
		"oras.land/",
		"github.com/hashicorp/go-getter",
		"github.com/google/go-containerregistry",
		"net/http",
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("implausible dependency list: %q", deps)
	}
	for _, dep := range deps {
		if dep == "github.com/tflock/tflock/resolve/versions" || dep == "github.com/tflock/tflock/source/address" {
			continue // the leaf vocabulary packages (versions, source addresses) are allowed
		}
		for _, bad := range forbidden {
			if dep == bad || strings.HasPrefix(dep, bad+"/") || strings.HasPrefix(dep, bad) && strings.HasSuffix(bad, "/") {
				t.Errorf("lockfile depends on %s", dep)
			}
		}
	}
}
