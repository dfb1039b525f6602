package tflock_test

import (
	"go/ast"
	"go/token"
	"strings"
	"testing"
)

// TestExportedNamesHaveDocComments keeps the developers' guide's "doc
// comments on every exported name" true: it fails, naming file:line and the
// name, for an exported type, function, method of an exported type,
// constant, variable, struct field or interface method of the module's
// public packages (not internal/, examples/ or testdata/) that has no doc
// comment. A comment above a group (a const block, a run of fields on
// consecutive lines) documents its members; so does a trailing line
// comment on a field, constant or variable.
func TestExportedNamesHaveDocComments(t *testing.T) {
	skip := func(path, name string) bool {
		return name == "testdata" || name == "internal" || path == "examples"
	}
	forEachGoFile(t, skip, func(fset *token.FileSet, dir string, f *ast.File) {
		report := func(pos token.Pos, name string) {
			t.Errorf("%s: %s has no doc comment", fset.Position(pos), name)
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Doc == nil && d.Name.IsExported() && exportedRecv(d) {
					report(d.Name.Pos(), dir+"."+funcName(d))
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					checkSpec(spec, d.Doc != nil, dir, report)
				}
			}
		}
	})
}

// exportedRecv reports whether fd is a function or a method of an exported
// type (a method of an unexported type is not in the package's doc).
func exportedRecv(fd *ast.FuncDecl) bool {
	recv, _, isMethod := strings.Cut(funcName(fd), ".")
	return !isMethod || ast.IsExported(recv)
}

// checkSpec reports spec's exported names that have no doc comment;
// grouped says whether the declaration group around spec has one.
func checkSpec(spec ast.Spec, grouped bool, dir string, report func(token.Pos, string)) {
	switch s := spec.(type) {
	case *ast.TypeSpec:
		if !s.Name.IsExported() {
			return
		}
		if s.Doc == nil && s.Comment == nil && !grouped {
			report(s.Name.Pos(), dir+"."+s.Name.Name)
		}
		checkMembers(s.Type, dir+"."+s.Name.Name, report)
	case *ast.ValueSpec:
		for _, n := range s.Names {
			if n.IsExported() && s.Doc == nil && s.Comment == nil && !grouped {
				report(n.Pos(), dir+"."+n.Name)
			}
		}
	}
}

// checkMembers reports the exported fields of a struct type, and the
// methods of an interface type, that have neither a doc comment nor a
// trailing line comment. Embedded fields and interfaces are not named
// members of their own and are not checked, nor is the one method of a
// single-method interface (the type's doc comment describes it).
func checkMembers(typ ast.Expr, owner string, report func(token.Pos, string)) {
	var fields *ast.FieldList
	switch t := typ.(type) {
	case *ast.StructType:
		fields = t.Fields
	case *ast.InterfaceType:
		if len(t.Methods.List) == 1 {
			return
		}
		fields = t.Methods
	default:
		return
	}
	for _, fl := range fields.List {
		for _, n := range fl.Names {
			if n.IsExported() && fl.Doc == nil && fl.Comment == nil {
				report(n.Pos(), owner+"."+n.Name)
			}
		}
	}
}
