// Command lockfmt validates a dependency lock file and prints it in
// canonical form.
//
// Usage:
//
//	lockfmt [-w | -check] [-lenient] FILE
//
// FILE is a path, or "-" for standard input. If the file is invalid,
// lockfmt prints the diagnostics with source snippets to standard error and
// exits 1. Otherwise it writes the canonical form to standard output, or
// with -w back to FILE (atomically); with -check it writes nothing and
// exits 1 if FILE is not already canonical, for CI.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/hashicorp/hcl/v2"

	"github.com/tflock/tflock/lockfile"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is the whole program; it returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("lockfmt", flag.ContinueOnError)
	fs.SetOutput(stderr)
	write := fs.Bool("w", false, "write the canonical form back to the file")
	check := fs.Bool("check", false, "exit 1 if the file is not in canonical form")
	lenient := fs.Bool("lenient", false, "keep unknown blocks and arguments, with a warning")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: lockfmt [-w | -check] [-lenient] FILE (or - for standard input)")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 || (*write && *check) {
		fs.Usage()
		return 2
	}
	path := fs.Arg(0)
	if path == "-" && *write {
		fmt.Fprintln(stderr, "lockfmt: -w cannot write to standard input")
		return 2
	}
	var src []byte
	var err error
	name := path
	if path == "-" {
		name = "<stdin>"
		src, err = io.ReadAll(stdin)
	} else {
		src, err = os.ReadFile(path)
	}
	if err != nil {
		fmt.Fprintf(stderr, "lockfmt: %v\n", err)
		return 1
	}
	f, err := lockfile.ParseOptions{Lenient: *lenient}.Parse(src, name)
	var pe *lockfile.ParseError
	if errors.As(err, &pe) {
		printDiagnostics(stderr, name, src, pe.Diagnostics)
		return 1
	} else if err != nil {
		fmt.Fprintf(stderr, "lockfmt: %v\n", err)
		return 1
	}
	printDiagnostics(stderr, name, src, f.Warnings())
	out := f.Bytes()
	switch {
	case *check:
		if !bytes.Equal(out, src) {
			fmt.Fprintf(stderr, "lockfmt: %s is not in canonical form\n", name)
			return 1
		}
	case *write:
		if bytes.Equal(out, src) {
			return 0
		}
		if err := lockfile.WriteFile(path, f); err != nil {
			fmt.Fprintf(stderr, "lockfmt: %v\n", err)
			return 1
		}
	default:
		if _, err := stdout.Write(out); err != nil {
			fmt.Fprintf(stderr, "lockfmt: %v\n", err)
			return 1
		}
	}
	return 0
}

// printDiagnostics writes diagnostics with source snippets, as HCL tools do.
func printDiagnostics(w io.Writer, name string, src []byte, diags hcl.Diagnostics) {
	if len(diags) == 0 {
		return
	}
	files := map[string]*hcl.File{name: {Bytes: src}}
	tw := hcl.NewDiagnosticTextWriter(w, files, 78, false)
	_ = tw.WriteDiagnostics(diags)
}
