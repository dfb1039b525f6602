package tflock_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines is the length, in lines from "func" to the closing brace,
// above which a function of the module's non-test code is too long for a
// reader to hold in their head: split it into named steps with doc
// comments (most of tflock's functions are under 70 lines).
const maxFuncLines = 100

// longFuncs are the functions allowed over maxFuncLines, and why. Keep the
// list short: a function split below the limit leaves it (the test logs
// an entry that no longer applies).
var longFuncs = map[string]string{
	// The inflater's per-symbol loops: left whole, since a split puts
	// calls on the hottest path of hash, which would have to be measured
	// first (hash/BENCHMARKS.md).
	"hash/internal/flate.fastLoop":     "hot loop",
	"hash/internal/flate.Decoder.huff": "hot loop",
}

// TestFunctionSize fails for a function of the module's non-test code
// longer than maxFuncLines that longFuncs does not list.
func TestFunctionSize(t *testing.T) {
	seen := map[string]bool{}
	forEachGoFile(t, func(path, name string) bool { return name == "testdata" }, func(fset *token.FileSet, dir string, f *ast.File) {
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
			if n <= maxFuncLines {
				continue
			}
			name := dir + "." + funcName(fd)
			seen[name] = true
			if _, ok := longFuncs[name]; !ok {
				t.Errorf("%s: %s is %d lines long, more than %d: split it into named steps", fset.Position(fd.Pos()), name, n, maxFuncLines)
			}
		}
	})
	for name := range longFuncs {
		if !seen[name] {
			t.Logf("longFuncs lists %s, which is no longer over %d lines (or is gone): remove it from the list", name, maxFuncLines)
		}
	}
}

// funcName is "Name" for a function and "Type.Name" for a method.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

// forEachGoFile parses every non-test Go file of the module, but for those
// in hidden directories and the directories skip(path, name) names, and
// calls fn with the file's directory (slash-separated, relative to the
// module's root). The files keep their comments (doc comments included).
func forEachGoFile(t *testing.T, skip func(path, name string) bool, fn func(fset *token.FileSet, dir string, f *ast.File)) {
	t.Helper()
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || skip(path, name)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		fn(fset, filepath.ToSlash(filepath.Dir(path)), f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
