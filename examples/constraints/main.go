// Command constraints shows how OpenTofu reads a version constraint: its
// canonical lock-file form, which of the given versions it allows, and the
// newest of them it allows.
//
//	go run ./examples/constraints [-module] 'CONSTRAINT' VERSION...
//
// prints the canonical form of CONSTRAINT on the first line, then
// "VERSION true|false" for each VERSION, then "newest: VERSION" (or
// "newest: none"). With -module the constraint and the versions are read in
// the module dialect (hashicorp/go-version) instead of the provider one. An
// invalid constraint or version prints the error and exits with status 1.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/tflock/tflock/resolve/versions"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole program, taking its arguments and writers, and
// returning the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("constraints", flag.ContinueOnError)
	fs.SetOutput(stderr)
	module := fs.Bool("module", false, "read the constraint and versions in the module dialect")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: constraints [-module] 'CONSTRAINT' VERSION...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() < 1 {
		fs.Usage()
		return 2
	}
	parseC, parseV := versions.ParseConstraints, versions.Parse
	if *module {
		parseC, parseV = versions.ParseModuleConstraints, versions.ParseModuleVersion
	}
	c, err := parseC(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	list := make([]versions.Version, 0, fs.NArg()-1)
	for _, s := range fs.Args()[1:] {
		v, err := parseV(s)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		list = append(list, v)
	}
	fmt.Fprintln(stdout, c)
	for i, v := range list {
		fmt.Fprintln(stdout, fs.Arg(i+1), c.Allows(v))
	}
	if newest, ok := versions.Newest(list, c); ok {
		fmt.Fprintln(stdout, "newest:", newest)
	} else {
		fmt.Fprintln(stdout, "newest: none")
	}
	return 0
}
