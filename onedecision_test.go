package tflock_test

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestOneDecisionEach checks, on the non-test Go code of the module, that
// three decisions of ARCHITECTURE.md are each made in one package:
//
//   - how a provider address is read: only internal/provaddr calls the
//     registry-address library's provider parsers and its IsBuiltIn
//     (which knows terraform.io only, OpenTofu's opentofu.org too);
//   - the default registry host: only internal/provaddr spells it;
//   - one public name each for the provider-address parser and the default
//     registry host (source/address's): the deprecated forwarders
//     resolve.ParseProviderSource, resolve.DefaultRegistryHost and
//     source.DefaultProviderHost are used nowhere, and the legacy-address
//     refusal is internal/provaddr.ParseNotLegacy's;
//   - the HTTP client configuration: only source/internal/httpx builds an
//     http.Client or http.Transport, or uses the standard library's
//     default client.
//
// Test helper packages (gittest, ocitest, registrytest, ...), whose
// clients reach their own test servers, are not checked, nor the interop
// suite's programs (internal/interop/floor measures the protocol with the
// standard library's bare client, on purpose).
func TestOneDecisionEach(t *testing.T) {
	const deprecated = "(nowhere: a deprecated forwarder)"
	owner := map[string]string{
		"tfaddr.ParseProviderSource":  "internal/provaddr",
		"tfaddr.ParseProviderPart":    "internal/provaddr",
		"Provider.IsBuiltIn":          "internal/provaddr",
		`"registry.opentofu.org"`:     "internal/provaddr",
		"resolve.ParseProviderSource": deprecated,
		"resolve.DefaultRegistryHost": deprecated,
		"source.DefaultProviderHost":  deprecated,
		`"legacy provider address %q: give a namespace, such as \"hashicorp/%s\""`: "internal/provaddr",
		"http.Client{}":      "source/internal/httpx",
		"http.Transport{}":   "source/internal/httpx",
		"http.DefaultClient": "source/internal/httpx",
	}
	forEachGoFile(t, func(path, name string) bool {
		return name == "testdata" || strings.HasSuffix(name, "test") || filepath.ToSlash(path) == "internal/interop"
	}, func(fset *token.FileSet, dir string, f *ast.File) {
		ast.Inspect(f, func(n ast.Node) bool {
			var what string
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok {
					what = x.Name + "." + n.Sel.Name
				}
				if n.Sel.Name == "IsBuiltIn" && what != "provaddr.IsBuiltIn" {
					what = "Provider.IsBuiltIn"
				}
			case *ast.CompositeLit:
				if sel, ok := n.Type.(*ast.SelectorExpr); ok {
					if x, ok := sel.X.(*ast.Ident); ok {
						what = x.Name + "." + sel.Sel.Name + "{}"
					}
				}
			case *ast.BasicLit:
				if n.Kind == token.STRING {
					if s, err := strconv.Unquote(n.Value); err == nil {
						what = strconv.Quote(s)
					}
				}
			}
			if want, ok := owner[what]; ok && dir != want {
				t.Errorf("%s: %s outside %s, the one place of that decision", fset.Position(n.Pos()), what, want)
			}
			return true
		})
	})
}
