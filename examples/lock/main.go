// Command lock locks the providers and modules of an OpenTofu configuration,
// as "tofu init" does for dependencies, with modules locked too. It is
// tflock's main demo.
//
//	go run ./examples/lock [-upgrade] [-lockfile=readonly] [-var NAME=VALUE]... [-var-file FILE]... [-reset] [DIR]
//	go run ./examples/lock providers-lock [-platform=OS_ARCH]... [-fs-mirror=DIR] [-net-mirror=URL] [DIR]
//	go run ./examples/lock serve [-cache-dir=DIR] [-archives=DIR] [-tool-config=DIR] [-trust-all-hashes] [-- COMMAND [ARGS...]]
//	go run ./examples/lock mirror [-platform=OS_ARCH]... [-lock-file=FILE] DIR [CONFIG]
//
// Without DIR it works on a copy of the sample configuration shipped in
// examples/lock/sample (two registry providers, a registry module, a git
// module selected by a version constraint and an OCI module, with a lock
// file that holds older versions), made in the directory named by -work
// (default: tflock-lock-demo in the system's temporary directory). Every
// source is served in-process: a registry over HTTPS, a git repository
// created on the fly with the git binary, and an OCI registry. It works
// offline. Run it twice: the second run changes nothing and contacts no
// registry. With -upgrade it shows the upgrades. -reset starts again from
// the sample.
//
// With DIR it works on that configuration like tofu: sources come from the
// CLI configuration (TF_CLI_CONFIG_FILE, ~/.tofurc, ...; every
// provider_installation method, oci_mirror included), and tofu's flags
// -upgrade, -lockfile=readonly and -plugin-dir apply; -var NAME=VALUE and
// -var-file FILE (repeatable, a later one winning, files relative to the
// directory the command runs in) give the root module's variables, which
// module sources and versions may use, beside terraform.tfvars,
// *.auto.tfvars and TF_VAR_* as tofu reads them. The providers-lock
// mode records the hashes of every -platform without installing, from the
// registry or from -fs-mirror / -net-mirror. The providers that the local
// state (DIR/terraform.tfstate, if present) still uses stay locked, and
// those TF_REATTACH_PROVIDERS names are neither installed nor locked, as in
// tofu. Git clones and tag lists are kept under -cache-dir, so that a
// locked version whose tag was deleted upstream still installs.
// -unify-modules gives every call of the same module source one version,
// and reports constraints in conflict with each call's file and line.
//
// serve serves the package cache to stock tofu and terraform as a provider
// network mirror on loopback HTTPS (package source/cache/mirrorserve), its
// misses fetched through the CLI configuration's installation methods,
// and writes the CLI configuration and certificate bundle that point tofu
// at it (printed as TF_CLI_CONFIG_FILE and SSL_CERT_FILE); with a COMMAND
// it runs that command with them set and exits with its code, else it
// serves until interrupted. mirror writes into DIR what "tofu providers
// mirror" writes, plus the JSON files of a network mirror, for the
// providers of CONFIG's lock file (locked first if it has none), every
// archive verified against the lock file.
//
// It prints progress as plain lines, in the same order on every run of the
// same work (lines of concurrent work are grouped by package), writes
// .terraform.lock.hcl (none when there is nothing to lock) and prints what
// changed.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
)

func main() {
	// A run is short and its live heap small: at Go's default pace
	// (GOGC=100) the collector took about a third of the CPU of a
	// "providers lock" of 50 providers. Unless GOGC says otherwise, a run
	// collects a fourth as often; a mirror server, which runs long, keeps
	// the default.
	if os.Getenv("GOGC") == "" && !isMirrorCommand(os.Args[1:]) {
		debug.SetGCPercent(400)
	}
	// Interrupted or terminated, the run is cancelled: it stops, removes
	// its temporary files and leaves the lock file as it was.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the whole program; it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if isMirrorCommand(args) {
		return runMirror(ctx, args, stdout, stderr)
	}
	cmd, err := parseArgs(args, stderr)
	if err != nil {
		if err == errUsage {
			return 2
		}
		fmt.Fprintln(stderr, err)
		return 2
	}
	if err := cmd.exec(ctx, stdout); err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
	return 0
}
