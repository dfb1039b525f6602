// Command pkghash prints the lock-file hashes of provider and module
// packages, and checks them against a lock file.
//
// Usage:
//
//	pkghash [-module] PATH...
//	pkghash [-module] -verify LOCKFILE -provider ADDRESS PATH...
//
// For each zip archive or directory, pkghash prints one line per hash in
// the form "<hash> <path>", like sha256sum, spelled as a lock file spells
// it: for a zip its h1: hash then its zh: hash, for a directory its h1:
// hash. With -module, a directory or zip is hashed as a module package: VCS
// metadata is left out, by the one rule hash.IsVCSMetadata states (.git,
// .hg, .svn, .bzr at any depth, in any letter case).
//
// With -verify, pkghash instead checks each package against the hashes that
// LOCKFILE records for the provider ADDRESS (a fully-qualified address such
// as registry.opentofu.org/hashicorp/aws): a package passes if one of its
// hashes is recorded. It prints "ok <path>" for each package that passes,
// and exits with status 1, naming the package, on a mismatch.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/source/address"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pkghash", flag.ContinueOnError)
	fs.SetOutput(stderr)
	module := fs.Bool("module", false, "hash directories and zips as module packages (leave out .git, .hg, .svn, .bzr)")
	verify := fs.String("verify", "", "check the packages against the hashes recorded in this lock file")
	provider := fs.String("provider", "", "with -verify: the provider's fully-qualified address, as the lock file spells it")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: pkghash [-module] [-verify LOCKFILE -provider ADDRESS] PATH...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	opts := hash.Options{Module: *module}
	if *verify == "" {
		if *provider != "" {
			fmt.Fprintln(stderr, "pkghash: -provider needs -verify")
			return 2
		}
		status := 0
		for _, p := range fs.Args() {
			hs, err := hashes(ctx, opts, p)
			if err != nil {
				fmt.Fprintf(stderr, "pkghash: %v\n", err)
				status = 1
				continue
			}
			for _, h := range hs {
				fmt.Fprintf(stdout, "%s %s\n", h, p)
			}
		}
		return status
	}

	if strings.Count(*provider, "/") != 2 {
		fmt.Fprintf(stderr, "pkghash: -provider %q: give the fully-qualified address as the lock file spells it, such as registry.opentofu.org/hashicorp/aws\n", *provider)
		return 2
	}
	parsed, err := address.ParseProviderSource(*provider)
	addr := parsed.Addr
	if err != nil {
		fmt.Fprintf(stderr, "pkghash: -provider: %v\n", err)
		return 2
	}
	// lockfile.ParseFile reads a missing file as an empty lock file; here a
	// missing file is a mistake in the command line.
	if _, err := os.Stat(*verify); err != nil {
		fmt.Fprintf(stderr, "pkghash: -verify: %v\n", err)
		return 1
	}
	lf, err := lockfile.ParseFile(*verify)
	if err != nil {
		fmt.Fprintf(stderr, "pkghash: %v\n", err)
		return 1
	}
	want := lf.ProviderHashes(addr)
	if len(want) == 0 {
		fmt.Fprintf(stderr, "pkghash: %s records no hashes for provider %s\n", *verify, addr)
		return 1
	}
	status := 0
	for _, p := range fs.Args() {
		if err := check(ctx, opts, p, want); err != nil {
			var me *hash.MismatchError
			if errors.As(err, &me) {
				fmt.Fprintf(stderr, "pkghash: %s does not match provider %s in %s: computed %s; recorded %s\n",
					p, addr, *verify, strings.Join(strs(me.Got), ", "), strings.Join(strs(me.Want), ", "))
			} else {
				fmt.Fprintf(stderr, "pkghash: cannot verify %s against provider %s in %s: %v\n", p, addr, *verify, err)
			}
			status = 1
			continue
		}
		fmt.Fprintf(stdout, "ok %s\n", p)
	}
	return status
}

// hashes returns the lock-file hashes of the zip or directory at p.
func hashes(ctx context.Context, opts hash.Options, p string) ([]hash.Hash, error) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if info.IsDir() {
		h1, err := opts.H1Dir(ctx, p)
		if err != nil {
			return nil, err
		}
		return []hash.Hash{h1}, nil
	}
	sum, err := opts.HashZip(ctx, p)
	if err != nil {
		return nil, err
	}
	return sum.Hashes(), nil
}

// check verifies the zip or directory at p against the recorded hashes.
func check(ctx context.Context, opts hash.Options, p string, want []hash.Hash) error {
	info, err := os.Stat(p)
	if err != nil {
		return err
	}
	if info.IsDir() {
		_, err = opts.VerifyDir(ctx, p, want)
	} else {
		_, err = opts.VerifyZip(ctx, p, want)
	}
	return err
}

func strs(hs []hash.Hash) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = string(h)
	}
	return out
}
