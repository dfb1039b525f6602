// Command sources shows how tflock parses module and provider source
// addresses: one tab-separated line per argument.
//
//	go run ./examples/sources 'SOURCE'...
//	go run ./examples/sources -provider 'SOURCE'...
//
// For a module source the columns are: the input, its kind ("local",
// "registry", "remote" or "error"), its canonical form as OpenTofu prints
// it, the package address, the subdirectory, and the error text for a
// rejected one. For a provider source (-provider): the input, its kind
// ("provider", "builtin", "legacy" or "error"), the canonical form, the
// display form, and the error text. Empty columns stay as empty fields.
// With -header a first line names the columns (the default output has no
// header line, so that scripts reading it keep working); the usage message
// (-h) names them too.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tflock/tflock/source/address"
)

func main() {
	provider := flag.Bool("provider", false, "parse provider source addresses instead of module sources")
	header := flag.Bool("header", false, "print a first line naming the columns")
	flag.Usage = func() {
		out := flag.CommandLine.Output()
		fmt.Fprintln(out, "usage: sources [-provider] [-header] SOURCE...")
		fmt.Fprintln(out, "columns (tab-separated):")
		fmt.Fprintln(out, "  module sources:  ", strings.Join(moduleHeader, " "))
		fmt.Fprintln(out, "  provider sources:", strings.Join(providerHeader, " "))
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	if *header {
		h := moduleHeader
		if *provider {
			h = providerHeader
		}
		fmt.Fprintln(os.Stdout, strings.Join(h, "\t"))
	}
	run(os.Stdout, *provider, flag.Args())
}

// The names of the columns, for -header and the usage message.
var (
	moduleHeader   = []string{"input", "kind", "canonical", "package", "subdir", "error"}
	providerHeader = []string{"input", "kind", "canonical", "display", "error"}
)

// run writes one line per source to w.
func run(w io.Writer, provider bool, sources []string) {
	for _, s := range sources {
		var cols []string
		if provider {
			cols = providerColumns(s)
		} else {
			cols = moduleColumns(s)
		}
		fmt.Fprintln(w, strings.Join(cols, "\t"))
	}
}

// clean keeps a field on one line and free of tabs.
func clean(s string) string {
	return strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(s)
}

func moduleColumns(s string) []string {
	src, err := address.ParseModuleSource(s)
	if err != nil {
		return []string{clean(s), "error", "", "", "", clean(err.Error())}
	}
	var kind, subdir string
	switch src := src.(type) {
	case address.Local:
		kind = "local"
	case address.Registry:
		kind, subdir = "registry", src.Subdir
	case address.Remote:
		kind, subdir = "remote", src.Subdir
	}
	return []string{clean(s), kind, clean(src.String()), clean(src.Package()), clean(subdir), ""}
}

func providerColumns(s string) []string {
	p, err := address.ParseProviderSource(s)
	if err != nil {
		return []string{clean(s), "error", "", "", clean(err.Error())}
	}
	return []string{clean(s), string(p.Kind()), p.String(), p.ForDisplay(), ""}
}
