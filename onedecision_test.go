package tflock_test

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestOneDecisionEach checks, on the non-test Go code of the module, that
// four decisions of ARCHITECTURE.md are each made in one place:
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
//     default client;
//   - how a module source string is read: the module-source parsers of
//     source/address are called only where an address is read (the
//     configuration reader resolve/config, the lock-file reader
//     lockfile) and by package source, whose ModulePackage.Address and
//     ModuleLocation.Remote read a package's or a location's string for
//     every other stage (dispatch, git, registry, solver, installer),
//     which carry the typed value; the registry-address library's module
//     parser only inside source/address. The example program
//     examples/sources, which shows the parser to users, may call it.
//     Nor does any package but source/address decide a module's kind by
//     its string's prefix (strings.HasPrefix with "oci://", "git::", ...).
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
	moduleReaders := []string{"source", "resolve/config", "lockfile", "examples/sources"}
	owners := map[string][]string{
		"address.ParseModuleSource":     moduleReaders,
		"address.ParseModuleSourceWith": moduleReaders,
		"address.MustParseModuleSource": moduleReaders,
		"address.ParseRemote":           moduleReaders,
		"tfaddr.ParseModuleSource":      {"source/address"},
	}
	// The prefixes that name a module source's kind (a forced getter, the
	// OCI scheme): only source/address classifies by them.
	kindPrefixes := []string{"oci://", "git::", "hg::", "s3::", "gcs::", "http::", "https::"}
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
			case *ast.CallExpr:
				// strings.HasPrefix(s, "oci://") and the like decide a
				// module's kind by its string: a reading of the source.
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && len(n.Args) == 2 && dir != "source/address" {
					if x, ok := sel.X.(*ast.Ident); ok && x.Name == "strings" && sel.Sel.Name == "HasPrefix" {
						if lit, ok := n.Args[1].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							if s, err := strconv.Unquote(lit.Value); err == nil && slices.Contains(kindPrefixes, s) {
								t.Errorf("%s: strings.HasPrefix(..., %q) outside source/address: a module's kind is decided once, where its source is read (ask its typed address: source.ModulePackage.Address, lockfile.ModuleLock.Address)", fset.Position(n.Pos()), s)
							}
						}
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
			if want, ok := owners[what]; ok && !slices.Contains(want, dir) {
				t.Errorf("%s: %s outside %s, the places that read module source strings (elsewhere: source.ModulePackage.Address, ModuleLocation.Remote)", fset.Position(n.Pos()), what, strings.Join(want, ", "))
			}
			return true
		})
	})
}
