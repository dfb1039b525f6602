package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/hcl/v2"
	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/config"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/assemble"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/cache/ocitier"
	"github.com/tflock/tflock/source/cliconfig"
	"github.com/tflock/tflock/source/git"
	"github.com/tflock/tflock/source/mirror"
	"github.com/tflock/tflock/source/oci"
)

var errUsage = errors.New("usage")

// command is a parsed command line.
type command struct {
	dir           string // "" for the sample
	work          string
	reset         bool
	upgrade       bool
	readOnly      bool
	explain       bool
	unifyModules  bool
	cacheDir      string
	remoteCache   string // "HOST[:PORT]/PREFIX" of -remote-cache, or ""
	pluginDirs    []string
	providersLock bool
	platforms     []source.Platform
	fsMirror      string
	netMirror     string
	flavor        install.Flavor
	varArgs       []config.VarArg // -var and -var-file, in order
	stderr        io.Writer
}

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// varFlag is -var or -var-file: both append to one list, keeping the
// command line's order, which decides which value wins.
type varFlag struct {
	args *[]config.VarArg
	file bool
}

func (v varFlag) String() string { return "" }
func (v varFlag) Set(s string) error {
	if !v.file {
		*v.args = append(*v.args, config.VarArg{Var: s})
		return nil
	}
	// Relative to this process's working directory, as for a tofu run
	// in the directory the command is started from.
	abs, err := filepath.Abs(s)
	if err != nil {
		return err
	}
	*v.args = append(*v.args, config.VarArg{File: abs})
	return nil
}

func parseArgs(args []string, stderr io.Writer) (*command, error) {
	c := &command{stderr: stderr}
	name := "lock"
	if len(args) > 0 && args[0] == "providers-lock" {
		c.providersLock, name, args = true, "lock providers-lock", args[1:]
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.work, "work", filepath.Join(os.TempDir(), "tflock-lock-demo"), "work copy of the sample configuration (when no DIR is given)")
	fs.BoolVar(&c.reset, "reset", false, "start the work copy again from the sample")
	fs.BoolVar(&c.explain, "explain", false, "explain each version selection")
	fs.BoolVar(&c.unifyModules, "unify-modules", false, "give every call of the same module source one version (the module-locking RFC's lock file)")
	defCache := ""
	if d, err := os.UserCacheDir(); err == nil {
		defCache = filepath.Join(d, "tflock")
	}
	fs.StringVar(&c.cacheDir, "cache-dir", defCache, "shared package cache directory (git clones and tag lists in its git/ subdirectory)")
	remote := fs.String("remote-cache", "", "a remote cache tier shared by many machines, oci://HOST[:PORT]/PREFIX on an OCI registry: consulted on a local cache miss, written through after each download from an origin")
	fs.Var(varFlag{args: &c.varArgs}, "var", "set a root module variable for module sources and versions, NAME=VALUE (repeatable)")
	fs.Var(varFlag{args: &c.varArgs, file: true}, "var-file", "read root module variable values from a .tfvars file (repeatable; later -var and -var-file win)")
	flavor := fs.String("flavor", "", `write the lock file as "opentofu" or "terraform" does (header, hashes, default registry host); default: as the existing lock file was written`)
	var plats, plugins listFlag
	if c.providersLock {
		fs.Var(&plats, "platform", "a platform to lock for, OS_ARCH (repeatable; default: this one)")
		fs.StringVar(&c.fsMirror, "fs-mirror", "", "consult only this filesystem mirror directory")
		fs.StringVar(&c.netMirror, "net-mirror", "", "consult only this network mirror base URL")
	} else {
		fs.BoolVar(&c.upgrade, "upgrade", false, "ignore the lock file's versions and pick the newest allowed")
		lockfileMode := fs.String("lockfile", "", `"readonly" to refuse changes to the lock file`)
		fs.Var(&plugins, "plugin-dir", "install providers only from this directory (repeatable)")
		defer func() {
			c.readOnly = *lockfileMode == "readonly"
		}()
	}
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s [flags] [DIR]\n", name)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, errUsage
	}
	if f := fs.Lookup("lockfile"); f != nil && f.Value.String() != "" && f.Value.String() != "readonly" {
		return nil, fmt.Errorf(`-lockfile: the only value is "readonly", got %q`, f.Value.String())
	}
	fl, err := install.ParseFlavor(*flavor)
	if err != nil {
		return nil, fmt.Errorf("-flavor: %v", err)
	}
	c.flavor = fl
	if *remote != "" {
		loc, err := ocitier.ParseLocation(*remote)
		if err != nil {
			return nil, fmt.Errorf("-remote-cache: %v", err)
		}
		if c.cacheDir == "" {
			return nil, errors.New("-remote-cache needs a local cache: give -cache-dir")
		}
		c.remoteCache = loc
	}
	if c.fsMirror != "" && c.netMirror != "" {
		return nil, errors.New("-fs-mirror and -net-mirror cannot be used together")
	}
	switch fs.NArg() {
	case 0:
	case 1:
		c.dir = fs.Arg(0)
	default:
		fs.Usage()
		return nil, errUsage
	}
	for _, p := range plats {
		pl, err := source.ParsePlatform(p)
		if err != nil {
			return nil, fmt.Errorf("-platform: %v", err)
		}
		c.platforms = append(c.platforms, pl)
	}
	c.pluginDirs = plugins
	return c, nil
}

func (c *command) exec(ctx context.Context, stdout io.Writer) error {
	out := &printer{w: stdout}
	defer out.flush()
	opts := install.Options{
		Resolve: resolve.Options{
			Upgrade:      c.upgrade,
			UnifyModules: c.unifyModules,
			// Providers a debugger runs already: not installed, not locked.
			Reattach: os.Getenv("TF_REATTACH_PROVIDERS"),
		},
		ReadOnly:      c.readOnly,
		ProvidersLock: c.providersLock,
		Platforms:     c.platforms,
		Events:        out,
		Flavor:        c.flavor,
		Variables:     config.Variables{Args: c.varArgs},
	}
	rootRead := c.readRoot(opts)
	if c.cacheDir != "" {
		co := cache.Options{Events: out}
		if c.remoteCache != "" {
			o := ociOptions()
			o.Events = out
			tier, err := ocitier.New(c.remoteCache, ocitier.Options{OCI: o})
			if err != nil {
				return err
			}
			co.Remote = tier
		}
		ch, err := cache.Open(c.cacheDir, co)
		if err != nil {
			return err
		}
		opts.Cache = ch
	}
	if c.dir == "" {
		w, err := installtest.Start(ctx, installtest.Options{Events: out})
		if err != nil {
			return err
		}
		defer w.Close()
		if err := c.prepareWork(out); err != nil {
			return err
		}
		opts.Dir = c.work
		opts.Source = w.Source
		opts.Resolve.DefaultHost = installtest.RegistryHost
	} else {
		opts.Dir = c.dir
		src, overrides, pluginCache, err := c.realSources(ctx, out)
		if err != nil {
			return err
		}
		opts.Source, opts.Resolve.DevOverrides, opts.PluginCacheDir = src, overrides, pluginCache
		opts.Config = <-rootRead
	}
	// The local backend's state: the providers its resources use stay
	// locked after the configuration stops naming them, as in tofu.
	opts.StateFile = filepath.Join(opts.Dir, "terraform.tfstate")
	if c.providersLock {
		out.printf("Locking providers for %s...\n", platformList(opts.Platforms))
	} else {
		out.printf("Initializing dependencies of %s...\n", opts.Dir)
	}
	res, err := install.Init(ctx, opts)
	if err != nil {
		return err
	}
	for _, w := range res.Warnings {
		// Init reports most warnings as events too: print each once.
		if !out.seen(w) {
			out.printf("Warning: %s\n", w)
		}
	}
	if c.explain {
		if err := out.explain(res); err != nil {
			return err
		}
	}
	for _, rw := range res.Rewritten {
		out.printf("Rewrote the source of module %q (%s:%d) to the locked version: %s\n", rw.Call, rw.File, rw.Line, rw.New)
	}
	out.printf("%d version lists fetched, %d packages downloaded.\n", res.Listed, res.Downloads)
	lockPath := filepath.Join(opts.Dir, install.LockFileName)
	note, err := install.WriteLock(lockPath, res)
	if err != nil {
		return err
	}
	if note == "" {
		if _, err := os.Stat(lockPath); os.IsNotExist(err) {
			out.printf("Nothing to lock: %s not written.\n", lockPath)
			return nil
		}
		out.printf("No changes to %s.\n", lockPath)
		return nil
	}
	out.printf("\nWrote %s:\n%s", lockPath, note)
	return nil
}

// readRoot reads the root module of DIR on another core, while the cache
// opens and the CLI configuration is read, so that Init starts resolving
// at once: as Init would read it (the same directory, opts.ReadOptions).
// The channel gives the tree, or nil for a tree with any diagnostic,
// which Init then reads again and reports as always. Without DIR (the
// sample) it is nil.
func (c *command) readRoot(opts install.Options) chan *config.Config {
	if c.dir == "" {
		return nil
	}
	read := make(chan *config.Config, 1)
	ropts := opts.ReadOptions()
	go func() {
		cfg, diags := config.ReadTree(c.dir, "", ropts)
		if len(diags) > 0 {
			cfg = nil
		}
		read <- cfg
	}()
	return read
}

func platformList(ps []source.Platform) string {
	if len(ps) == 0 {
		return source.CurrentPlatform.String()
	}
	var s []string
	for _, p := range ps {
		s = append(s, p.String())
	}
	return strings.Join(s, ", ")
}

// prepareWork copies the embedded sample into the work directory unless it
// is there already (or -reset).
func (c *command) prepareWork(out *printer) error {
	if c.reset {
		if err := os.RemoveAll(c.work); err != nil {
			return err
		}
	}
	if _, err := os.Stat(filepath.Join(c.work, "main.tf")); err == nil {
		out.printf("Using the work copy of the sample configuration in %s (-reset starts again).\n", c.work)
		return nil
	}
	out.printf("Copying the sample configuration to %s.\n", c.work)
	return fs.WalkDir(sampleFS, "sample", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, "sample"), "/")
		target := filepath.Join(c.work, filepath.FromSlash(rel))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := sampleFS.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}

// realSources builds the sources tofu would use on this machine
// (assemble.NewSources: the CLI configuration's provider installation, the
// registries, git and OCI for modules), with -plugin-dir, -fs-mirror or
// -net-mirror serving the providers instead when given.
func (c *command) realSources(ctx context.Context, out *printer) (source.Source, []tfaddr.Provider, string, error) {
	gopts := git.Options{UserConfig: true}
	if c.cacheDir != "" {
		// Clones and tag lists, so that a locked version whose tag was
		// deleted upstream still installs (with a warning).
		gopts.CacheDir = filepath.Join(c.cacheDir, "git")
	}
	opts := assemble.SourcesOptions{Git: &gopts, Events: out}
	if registryTestClient != nil {
		opts.Registry.HTTPClient = registryTestClient
	}
	if ociTestClient != nil {
		o := ociOptions()
		opts.OCI = &o
	}
	switch {
	case len(c.pluginDirs) > 0:
		var srcs []source.Source
		for _, p := range c.pluginDirs {
			srcs = append(srcs, mirror.NewFilesystem(p))
		}
		opts.Providers = source.Multi(srcs...)
	case c.fsMirror != "":
		opts.Providers = mirror.NewFilesystem(c.fsMirror)
	case c.netMirror != "":
		// The mirror's token comes from the CLI configuration.
		cfg, diags := cliconfig.Load(cliconfig.LoadOptions{})
		if diags.HasErrors() {
			return nil, nil, "", diags
		}
		n, err := mirror.NewNetwork(mirror.NetworkOptions{URL: c.netMirror, Token: cfg.Token, Client: netMirrorClient})
		if err != nil {
			return nil, nil, "", err
		}
		opts.Config, opts.Providers = cfg, n
		printWarnings(out, diags)
	}
	srcs, diags := assemble.NewSources(ctx, opts)
	if diags.HasErrors() {
		return nil, nil, "", diags
	}
	printWarnings(out, diags)
	return srcs.Source, srcs.DevOverrides, srcs.PluginCacheDir, nil
}

// printWarnings prints the warnings about the CLI configuration, as tofu
// shows a diagnostic: summary, then detail.
func printWarnings(out *printer, diags hcl.Diagnostics) {
	for _, d := range diags {
		if d.Severity == hcl.DiagWarning {
			out.printf("Warning: %s\n\n%s\n\n", d.Summary, d.Detail)
		}
	}
}

// registryTestClient, when set, is the HTTP client of the registry
// source. Tests set it to reach their in-process registry by its names.
var registryTestClient *http.Client

// ociOptions are the OCI client options of the remote cache tier (and,
// under tests, of the OCI sources): the credential files tofu reads, and
// the test client when set.
func ociOptions() oci.Options {
	o := oci.Options{ConfigFiles: oci.DefaultConfigFiles(os.Getenv, runtime.GOOS)}
	if ociTestClient != nil {
		o.HTTPClient, o.PlainHTTP = ociTestClient, true
	}
	return o
}

// ociTestClient, when set, is the HTTP client of the OCI sources, which
// then speak plain HTTP. Tests set it to reach their in-process registry.
var ociTestClient *http.Client

// netMirrorClient is the HTTP client of -net-mirror; nil means the
// mirror package's default. Tests set it to trust their server.
var netMirrorClient mirror.HTTPClient

// printer draws progress from events as plain lines. A download is
// reported by Init and, with bytes done and total, by the source itself:
// started and done are drawn once per package, and so is the listing of a
// package's versions.
//
// The output is stable: the same run prints the same lines in the same
// order. Events of work done concurrently (listings, downloads, cache
// hits, verifications) are held, grouped by package, and drawn in the
// order of the package names when a step that runs in sequence reports
// (a version selection, a warning, a line of the program): the lines of
// one package keep their order, and of its byte counts only the last is
// drawn.
//
// Drawn lines are written together, drawDelay after the first of them
// (and by flush): 50 providers' "Selected" lines, drawn at once after the
// last response, are one write instead of 50.
type printer struct {
	mu        sync.Mutex
	w         io.Writer
	drawn     []byte      // lines drawn, not yet written
	writing   *time.Timer // writes drawn when it fires; nil when none is
	started   map[string]bool
	done      map[string]bool
	resolving map[string]bool
	warned    map[string]bool     // warnings drawn from events
	groups    map[string][]string // held lines by package
	progress  map[string]int      // index in groups of the package's byte count line
}

// first reports whether this is the first time key is marked in *set.
func (p *printer) first(set *map[string]bool, key string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if *set == nil {
		*set = map[string]bool{}
	}
	if (*set)[key] {
		return false
	}
	(*set)[key] = true
	return true
}

// seen reports whether the warning w was drawn from an event.
func (p *printer) seen(w string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.warned[w]
}

// drawDelay is how long a drawn line may wait for others to be written
// with it.
const drawDelay = 10 * time.Millisecond

// printf draws a line of a step that runs in sequence, after the held
// lines.
func (p *printer) printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.flushLocked()
	p.draw(fmt.Sprintf(format, args...))
}

// draw adds a line to those to write, and makes sure they are written.
func (p *printer) draw(line string) {
	p.drawn = append(p.drawn, line...)
	if p.writing == nil {
		p.writing = time.AfterFunc(drawDelay, func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.writeLocked()
		})
	}
}

// writeLocked writes the lines drawn.
func (p *printer) writeLocked() {
	if p.writing != nil {
		p.writing.Stop()
		p.writing = nil
	}
	if len(p.drawn) > 0 {
		_, _ = p.w.Write(p.drawn)
		p.drawn = p.drawn[:0]
	}
}

// hold keeps a line of concurrent work on the package key until the next
// flush. A byte count line replaces the package's previous one.
func (p *printer) hold(key string, isProgress bool, format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.groups == nil {
		p.groups, p.progress = map[string][]string{}, map[string]int{}
	}
	line := fmt.Sprintf(format, args...)
	if isProgress {
		if i, ok := p.progress[key]; ok {
			p.groups[key][i] = line
			return
		}
		p.progress[key] = len(p.groups[key])
	}
	p.groups[key] = append(p.groups[key], line)
}

// explain writes the explanation of res (-explain) after the lines
// drawn.
func (p *printer) explain(res *install.Result) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.flushLocked()
	p.writeLocked()
	return res.Explain(p.w)
}

// flush draws the held lines and writes every line drawn.
func (p *printer) flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.flushLocked()
	p.writeLocked()
}

func (p *printer) flushLocked() {
	keys := make([]string, 0, len(p.groups))
	for k := range p.groups {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, line := range p.groups[k] {
			p.draw(line)
		}
	}
	clear(p.groups)
	clear(p.progress)
}

// Event implements source.Events.
func (p *printer) Event(e source.Event) {
	name, key := "", ""
	if e.Package != nil {
		name, key = e.Package.ForDisplay(), e.Package.String()
	}
	switch e.Kind {
	case source.EventResolving:
		if p.first(&p.resolving, key) {
			p.hold(key, false, "- Finding versions of %s...\n", name)
		}
	case source.EventVersionChosen:
		p.printf("- Selected %s (%s)\n", name, e.Detail)
	case source.EventFetchStarted:
		if p.first(&p.started, key) {
			p.hold(key, false, "- Downloading %s...\n", name)
		}
	case source.EventFetchProgress:
		if e.Total > 0 {
			p.hold(key, true, "  %s: %d of %d bytes (%d%%)\n", name, e.Bytes, e.Total, e.Bytes*100/e.Total)
		} else {
			p.hold(key, true, "  %s: %d bytes\n", name, e.Bytes)
		}
	case source.EventFetchDone:
		if !p.first(&p.done, key) {
			return
		}
		if e.Total > 0 {
			p.hold(key, false, "- Downloaded %s (%d bytes)\n", name, e.Total)
		} else {
			p.hold(key, false, "- Downloaded %s\n", name)
		}
	case source.EventCacheHit:
		p.hold(key, false, "- Using %s from the cache\n", name)
	case source.EventCacheWait:
		p.hold(key, false, "- Waiting for another process to fetch %s...\n", name)
	case source.EventVerified:
		p.hold(key, false, "- Verified %s: %s\n", name, e.Detail)
	case source.EventWarning:
		p.first(&p.warned, e.Detail)
		p.printf("Warning: %s\n", e.Detail)
	}
}
