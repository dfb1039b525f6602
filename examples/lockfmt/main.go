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
//
// The canonical form has no comments but the two header lines: when it
// drops comments of FILE, lockfmt says so on standard error, naming their
// lines. A program that edits a lock file people annotate keeps the
// comments with lockfile.Patch instead.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

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
	if lines := droppedComments(src, out); len(lines) > 0 && !*check {
		fmt.Fprintf(stderr, "lockfmt: the canonical form drops the comments of %s at %s (lockfile.Patch keeps them)\n", name, lineList(lines))
	}
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

// droppedComments returns the lines of src holding a comment that out does
// not have.
func droppedComments(src, out []byte) []int {
	kept := map[string]int{}
	for _, c := range comments(out) {
		kept[c.text]++
	}
	var lines []int
	for _, c := range comments(src) {
		if kept[c.text] > 0 {
			kept[c.text]--
			continue
		}
		lines = append(lines, c.line)
	}
	return lines
}

type comment struct {
	text string
	line int
}

// comments returns the comments of an HCL source, trimmed, with their line.
func comments(src []byte) []comment {
	toks, _ := hclsyntax.LexConfig(src, "", hcl.InitialPos)
	var out []comment
	for _, t := range toks {
		if t.Type == hclsyntax.TokenComment {
			out = append(out, comment{text: strings.TrimSpace(string(t.Bytes)), line: t.Range.Start.Line})
		}
	}
	return out
}

// lineList writes lines as "line 3" or "lines 3, 7 and 9".
func lineList(lines []int) string {
	s := make([]string, len(lines))
	for i, l := range lines {
		s[i] = strconv.Itoa(l)
	}
	if len(s) == 1 {
		return "line " + s[0]
	}
	return "lines " + strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
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
