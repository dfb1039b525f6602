package install_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneHandOverToTheSolver checks that the solver's options are built
// in one place: every call of resolve.Resolve in the package takes
// r.resolveOptions(...), which documents what install changes of the
// caller's Options.Resolve.
func TestOneHandOverToTheSolver(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	calls := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Resolve" {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "resolve" {
				return true
			}
			calls++
			last := call.Args[len(call.Args)-1]
			if c, ok := last.(*ast.CallExpr); ok {
				if s, ok := c.Fun.(*ast.SelectorExpr); ok && s.Sel.Name == "resolveOptions" {
					return true
				}
			}
			t.Errorf("%s: resolve.Resolve called without r.resolveOptions: the solver's options are built in one place", fset.Position(call.Pos()))
			return true
		})
	}
	if calls == 0 {
		t.Error("no call of resolve.Resolve found")
	}
}
