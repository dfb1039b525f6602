package tflock_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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

// installFuncs parses the non-test files of resolve/install and returns
// each function and method declared there by name (a method by its name
// alone: the check below over-approximates, which only makes it
// stricter), with the file it is declared in.
func installFuncs(t *testing.T) (map[string][]*ast.FuncDecl, map[*ast.FuncDecl]string) {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join("resolve", "install", "*.go"))
	if err != nil || len(files) < 10 {
		t.Fatalf("resolve/install files: %v, %v", files, err)
	}
	byName := map[string][]*ast.FuncDecl{}
	fileOf := map[*ast.FuncDecl]string{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				byName[fd.Name.Name] = append(byName[fd.Name.Name], fd)
				fileOf[fd] = filepath.Base(name)
			}
		}
	}
	return byName, fileOf
}

// calledNames returns the names n calls (a selector's last name for
// pkg.F and x.M), in the order they appear.
func calledNames(n ast.Node) []string {
	var out []string
	ast.Inspect(n, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			switch fn := c.Fun.(type) {
			case *ast.Ident:
				out = append(out, fn.Name)
			case *ast.SelectorExpr:
				out = append(out, fn.Sel.Name)
			}
		}
		return true
	})
	return out
}

// TestRecordStageDoesNotFetch enforces ARCHITECTURE.md's stage table in
// resolve/install: the record stage (record.go) writes what the fetch
// stages brought and fetches nothing itself. No function of record.go
// reaches, through the calls of the package, the trust seam
// (voucher.vouch, bring), the fetch stages (walk, fetchModule,
// fetchProviders, lockProvider), a question to the origin (checksums) or
// a source or cache method that fetches.
func TestRecordStageDoesNotFetch(t *testing.T) {
	byName, fileOf := installFuncs(t)
	// The fetch path's own functions, which must exist (a rename updates
	// this test and ARCHITECTURE.md's walk-through), and the methods of
	// sources and the cache that fetch.
	own := []string{"vouch", "bring", "walk", "fetchModule", "fetchProviders", "lockProvider", "checksums"}
	fetching := map[string]bool{"FetchArchive": true, "Fetch": true, "Fill": true, "Versions": true, "Checksums": true}
	for _, name := range own {
		if len(byName[name]) == 0 {
			t.Errorf("resolve/install declares no %s: update this test and ARCHITECTURE.md's walk-through", name)
		}
		fetching[name] = true
	}
	var roots []*ast.FuncDecl
	for _, fds := range byName {
		for _, fd := range fds {
			if fileOf[fd] == "record.go" {
				roots = append(roots, fd)
			}
		}
	}
	if len(roots) == 0 {
		t.Fatal("record.go declares no function")
	}
	for _, root := range roots {
		seen := map[*ast.FuncDecl]bool{root: true}
		path := map[*ast.FuncDecl]string{root: root.Name.Name}
		queue := []*ast.FuncDecl{root}
		for len(queue) > 0 {
			fd := queue[0]
			queue = queue[1:]
			for _, name := range calledNames(fd.Body) {
				if fetching[name] {
					t.Errorf("the record stage fetches: %s -> %s", path[fd], name)
					continue
				}
				for _, next := range byName[name] {
					if !seen[next] {
						seen[next] = true
						path[next] = path[fd] + " -> " + name
						queue = append(queue, next)
					}
				}
			}
		}
	}
}

// TestStageOrder enforces the order of ARCHITECTURE.md's stage table in
// the runs of resolve/install: Init reads and fetches the module tree
// (walk), solves, fetches the providers through the trust seam, records
// the new lock file, decides a read-only run's verdict on its changes,
// then installs; a bot's relock fetches, then records.
func TestStageOrder(t *testing.T) {
	byName, fileOf := installFuncs(t)
	for _, tc := range []struct {
		fn, file string
		order    []string
	}{
		{"Init", "init.go", []string{"walk", "Resolve", "fetchProviders", "lockSelection", "readOnlyVerdict", "install"}},
		{"relock", "bot.go", []string{"fetchProviders", "lockSelection"}},
	} {
		var fd *ast.FuncDecl
		for _, d := range byName[tc.fn] {
			if fileOf[d] == tc.file {
				fd = d
			}
		}
		if fd == nil {
			t.Errorf("%s declares no %s", tc.file, tc.fn)
			continue
		}
		calls := calledNames(fd.Body)
		at := -1
		for _, want := range tc.order {
			i := -1
			for j, c := range calls {
				if c == want {
					i = j
					break
				}
			}
			if i < 0 {
				t.Errorf("%s calls no %s", tc.fn, want)
				continue
			}
			if i < at {
				t.Errorf("%s calls %s out of the stage order %v", tc.fn, want, tc.order)
			}
			at = i
		}
	}
}

// TestWalkThroughNamesExist keeps ARCHITECTURE.md's "How a package
// travels" true to the code: every function, method or type it names in
// backquotes (`pkg.Name`, `Type.Method` or `name`) is declared by a
// non-test Go file of the module.
func TestWalkThroughNamesExist(t *testing.T) {
	b, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "## How a package travels")
	if !ok {
		t.Fatal(`ARCHITECTURE.md has no section "How a package travels"`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	declared := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^(?:func (?:\([^)]*\) )?|type )([A-Za-z_][A-Za-z0-9_]*)`)
	err = filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllStringSubmatch(string(src), -1) {
			declared[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ident := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)
	names := 0
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(section, -1) {
		name := strings.TrimPrefix(m[1], "r.")
		if !ident.MatchString(name) || strings.HasSuffix(name, ".go") || strings.HasPrefix(name, "Test") || name == "r" || name == "SHA256SUMS" || name == "KEY" {
			continue // a path, a file, a hash scheme, the run, a test
		}
		names++
		last := name[strings.LastIndex(name, ".")+1:]
		if !declared[last] {
			t.Errorf("ARCHITECTURE.md's walk-through names %s, which no Go file of the module declares", m[1])
		}
	}
	if names < 20 {
		t.Errorf("the walk-through names %d functions, want the whole way", names)
	}
}
