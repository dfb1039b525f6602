package tflock_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportRules enforces the import rules of ARCHITECTURE.md on the
// non-test imports of every package of the module.
func TestImportRules(t *testing.T) {
	const mod = "github.com/tflock/tflock/"
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	concrete := []string{"source/registry", "source/git", "source/oci", "source/mirror", "source/cache", "source/cliconfig", "source/providercache"}
	isConcrete := func(p string) bool {
		for _, c := range concrete {
			if p == c {
				return true
			}
		}
		return false
	}
	// Who may import a concrete source, besides examples and the interop
	// suite.
	mayImport := map[string][]string{
		// The front door: CLI configuration in, one source out.
		"source/assemble": {"source/registry", "source/git", "source/oci", "source/mirror", "source/cliconfig"},
		// The engine: its cache and the installed provider directories,
		// no network source (see the case below).
		"resolve/install":  {"source/cache", "source/providercache"},
		"source/cliconfig": {"source/registry", "source/mirror", "source/oci"},
		// The legacy plugins hint stays where it was, an alias.
		"source/mirror":                {"source/providercache"},
		"source/cache/ocitier":         {"source/cache", "source/cliconfig", "source/oci"},
		"source/git/gittest":           {"source/git"},
		"source/oci/ocitest":           {"source/oci"},
		"source/registry/registrytest": {"source/registry"},
		"resolve/install/installtest":  {"source/registry", "source/git", "source/oci"},
		// The conformance suite checks that what a source hands a cache
		// fill is what a plain Fetch extracts.
		"source/sourcetest": {"source/cache"},
		// Test support: a process killed in the middle of a cache fill.
		"internal/killtest": {"source/cache"},
		// The cache served to stock tofu as a network mirror: it fills the
		// cache and writes the CLI configuration that points tofu at it.
		"source/cache/mirrorserve": {"source/cache", "source/cliconfig"},
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 20 {
		t.Fatalf("implausible package list: %q", lines)
	}
	// Below a concrete source: its own subpackages (test helpers, the
	// cache's remote tier).
	belowConcrete := func(p string) bool {
		for _, c := range concrete {
			if p == c || strings.HasPrefix(p, c+"/") {
				return true
			}
		}
		return false
	}
	for _, line := range lines {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], mod)
		for _, imp := range fields[1:] {
			// The configuration reader opens no connection: no networking
			// (net/url and net/netip are parsers, allowed).
			if pkg == "resolve/config" && (imp == "net" || imp == "crypto/tls" || (strings.HasPrefix(imp, "net/") && imp != "net/url" && imp != "net/netip")) {
				t.Errorf("resolve/config imports %s: the configuration reader does no networking", imp)
			}
			if !strings.HasPrefix(imp, mod) {
				continue
			}
			dep := strings.TrimPrefix(imp, mod)
			top := strings.SplitN(pkg, "/", 2)[0]
			switch {
			case (top == "source" || pkg == "hash" || pkg == "lockfile") && (dep == "resolve" || dep == "resolve/config" || strings.HasPrefix(dep, "resolve/install")):
				t.Errorf("%s imports %s: nothing below the solver may import it", pkg, dep)
			case pkg == "resolve" && isConcrete(dep):
				t.Errorf("resolve imports %s: the solver sees sources through the source interfaces only", dep)
			case pkg == "resolve" && dep == "resolve/config":
				t.Errorf("resolve imports resolve/config: the reader depends on the solver's vocabulary, never the other way")
			case pkg == "resolve/config" && (dep == "resolve/install" || strings.HasPrefix(dep, "resolve/install/") || belowConcrete(dep)):
				t.Errorf("resolve/config imports %s: the configuration reader fetches nothing; resolve/install puts reading and fetching together", dep)
			case pkg == "resolve/install" && (dep == "source/assemble" || isConcrete(dep) && !contains(mayImport[pkg], dep)):
				t.Errorf("resolve/install imports %s: the engine sees sources through the source interfaces only; source/assemble puts them together", dep)
			case isConcrete(dep) && !(top == "examples" || pkg == "internal/interop" || contains(mayImport[pkg], dep)):
				t.Errorf("%s imports the concrete source %s: only source/assemble and programs put sources together", pkg, dep)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
