package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/assemble"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/cache/mirrorserve"
	"github.com/tflock/tflock/source/cache/ocitier"
)

// mirrorCommand is "lock serve" or "lock mirror".
type mirrorCommand struct {
	name        string
	cacheDir    string
	remoteCache string
	platforms   []source.Platform
	lockFile    string
	archives    string
	toolConfig  string
	addr        string
	trustAll    bool
	args        []string
	stderr      io.Writer
}

// isMirrorCommand reports whether args start with a subcommand of this
// file.
func isMirrorCommand(args []string) bool {
	return len(args) > 0 && (args[0] == "serve" || args[0] == "mirror")
}

func parseMirrorArgs(args []string, stderr io.Writer) (*mirrorCommand, error) {
	c := &mirrorCommand{name: args[0], stderr: stderr}
	fs := flag.NewFlagSet("lock "+c.name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	defCache := ""
	if d, err := os.UserCacheDir(); err == nil {
		defCache = filepath.Join(d, "tflock")
	}
	fs.StringVar(&c.cacheDir, "cache-dir", defCache, "shared package cache directory")
	remote := fs.String("remote-cache", "", "a remote cache tier shared by many machines, oci://HOST[:PORT]/PREFIX: asked before the origin, written through after each download")
	var plats listFlag
	switch c.name {
	case "mirror":
		fs.Var(&plats, "platform", "a platform to mirror, OS_ARCH (repeatable; default: this one)")
		fs.StringVar(&c.lockFile, "lock-file", "", "the lock file to mirror (default: CONFIG/.terraform.lock.hcl; without one, the configuration is locked first)")
		fs.Usage = func() {
			fmt.Fprintf(stderr, "usage: lock mirror [flags] DIR [CONFIG]\n")
			fs.PrintDefaults()
		}
	case "serve":
		fs.StringVar(&c.archives, "archives", "", "the archive directory of the mirror (default: mirror/ in the cache directory)")
		fs.StringVar(&c.toolConfig, "tool-config", "", "where to write the CLI configuration and certificates for tofu (default: a temporary directory)")
		fs.StringVar(&c.addr, "addr", "127.0.0.1:0", "the loopback address to listen on")
		fs.BoolVar(&c.trustAll, "trust-all-hashes", false, "write trust_all_hashes = true for tofu (1.10+): a lock file it writes gets every platform's hashes (terraform 1.11 ignores the argument)")
		fs.Usage = func() {
			fmt.Fprintf(stderr, "usage: lock serve [flags] [-- COMMAND [ARGS...]]\n")
			fs.PrintDefaults()
		}
	}
	if err := fs.Parse(args[1:]); err != nil {
		return nil, errUsage
	}
	if c.cacheDir == "" {
		return nil, errors.New("-cache-dir: the mirror needs a cache directory")
	}
	if *remote != "" {
		loc, err := ocitier.ParseLocation(*remote)
		if err != nil {
			return nil, fmt.Errorf("-remote-cache: %v", err)
		}
		c.remoteCache = loc
	}
	for _, p := range plats {
		pl, err := source.ParsePlatform(p)
		if err != nil {
			return nil, fmt.Errorf("-platform: %v", err)
		}
		c.platforms = append(c.platforms, pl)
	}
	c.args = fs.Args()
	if c.name == "mirror" && (len(c.args) < 1 || len(c.args) > 2) {
		fs.Usage()
		return nil, errUsage
	}
	return c, nil
}

// runMirror is "lock serve" and "lock mirror"; it returns the exit code.
func runMirror(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, err := parseMirrorArgs(args, stderr)
	if err != nil {
		if err != errUsage {
			fmt.Fprintln(stderr, err)
		}
		return 2
	}
	code, err := c.exec(ctx, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
	return code
}

func (c *mirrorCommand) exec(ctx context.Context, stdout io.Writer) (int, error) {
	out := &printer{w: stdout}
	defer out.flush()
	co := cache.Options{Events: out}
	var tier cache.Remote
	if c.remoteCache != "" {
		o := ociOptions()
		o.Events = out
		t, err := ocitier.New(c.remoteCache, ocitier.Options{OCI: o})
		if err != nil {
			return 0, err
		}
		co.Remote, tier = t, t
	}
	ch, err := cache.Open(c.cacheDir, co)
	if err != nil {
		return 0, err
	}
	sopts := assemble.SourcesOptions{Events: out}
	if registryTestClient != nil {
		sopts.Registry.HTTPClient = registryTestClient
	}
	srcs, diags := assemble.NewSources(ctx, sopts)
	if diags.HasErrors() {
		return 0, diags
	}
	printWarnings(out, diags)
	if c.name == "mirror" {
		return 0, c.mirror(ctx, out, ch, tier, srcs)
	}
	return c.serve(ctx, out, ch, tier, srcs)
}

// mirror writes the mirror directory, as "tofu providers mirror".
func (c *mirrorCommand) mirror(ctx context.Context, out *printer, ch *cache.Cache, tier cache.Remote, srcs *assemble.Sources) error {
	dir, conf := c.args[0], "."
	if len(c.args) == 2 {
		conf = c.args[1]
	}
	plats := c.platforms
	if len(plats) == 0 {
		plats = []source.Platform{source.CurrentPlatform}
	}
	lockPath := c.lockFile
	if lockPath == "" {
		lockPath = filepath.Join(conf, install.LockFileName)
	}
	// A missing file parses as an empty lock: asked first.
	_, err := os.Stat(lockPath)
	var lock *lockfile.File
	if err == nil {
		lock, err = lockfile.ParseFile(lockPath)
	}
	switch {
	case err == nil:
		out.printf("Mirroring the providers of %s for %s into %s...\n", lockPath, platformList(plats), dir)
	case errors.Is(err, os.ErrNotExist) && c.lockFile == "":
		out.printf("No lock file: locking the providers of %s for %s first...\n", conf, platformList(plats))
		res, err := install.Init(ctx, install.Options{
			Dir: conf, Source: srcs.Source, Cache: ch, ProvidersLock: true, Platforms: plats, Events: out,
			Resolve: resolve.Options{DevOverrides: srcs.DevOverrides},
		})
		if err != nil {
			return err
		}
		lock = res.Lock
	default:
		return err
	}
	res, err := mirrorserve.WriteDir(ctx, dir, lock, mirrorserve.DirOptions{Source: srcs.Source, Cache: ch, Remote: tier, Platforms: plats})
	if err != nil {
		return err
	}
	out.printf("%d archives written, %d kept, %d downloaded; every one matches the lock file.\n", len(res.Written), len(res.Kept), res.Fetched)
	return nil
}

// serve serves the mirror until interrupted, or while COMMAND runs.
func (c *mirrorCommand) serve(ctx context.Context, out *printer, ch *cache.Cache, tier cache.Remote, srcs *assemble.Sources) (int, error) {
	archives := c.archives
	if archives == "" {
		archives = filepath.Join(c.cacheDir, "mirror")
	}
	// Only the tool given the token gets packages: not every process of
	// the machine.
	token := mirrorserve.NewToken()
	h, err := mirrorserve.New(mirrorserve.Options{Source: srcs.Source, Cache: ch, Dir: archives, Remote: tier, Token: token})
	if err != nil {
		return 0, err
	}
	srv, err := mirrorserve.Start(ctx, h, mirrorserve.ServeOptions{Addr: c.addr})
	if err != nil {
		return 0, err
	}
	defer srv.Close()
	toolDir := c.toolConfig
	if toolDir == "" {
		d, err := os.MkdirTemp("", "tflock-mirror-")
		if err != nil {
			return 0, err
		}
		defer os.RemoveAll(d)
		toolDir = d
	}
	tc, err := mirrorserve.WriteToolConfig(toolDir, srv.URL, srv.CertPEM, mirrorserve.ToolConfigOptions{User: srcs.Config, Token: token, TrustAllHashes: c.trustAll})
	if err != nil {
		return 0, err
	}
	out.printf("Serving the provider mirror at %s\n", srv.URL)
	out.printf("export TF_CLI_CONFIG_FILE=%s SSL_CERT_FILE=%s\n", tc.ConfigFile, tc.CertFile)
	out.flush()
	if len(c.args) == 0 {
		<-ctx.Done()
		st := h.Stats()
		out.printf("Stopped: %d archives served, %d fetched.\n", st.Served, st.Fetched)
		return 0, nil
	}
	cmd := exec.CommandContext(ctx, c.args[0], c.args[1:]...)
	cmd.Env = tc.Environ(os.Environ())
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, out.w, c.stderr
	err = cmd.Run()
	st := h.Stats()
	out.printf("%s: %d archives served, %d fetched.\n", strings.Join(c.args, " "), st.Served, st.Fetched)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), nil
	}
	return 0, err
}
