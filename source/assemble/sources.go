package assemble

import (
	"context"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cliconfig"
	"github.com/tflock/tflock/source/git"
	"github.com/tflock/tflock/source/mirror"
	"github.com/tflock/tflock/source/oci"
	"github.com/tflock/tflock/source/registry"
)

// SourcesOptions configure [NewSources]. The zero value builds the sources
// tofu would use on this machine: the CLI configuration files tofu reads,
// the process's environment, the user's home directory and git
// configuration, the default HTTP clients.
type SourcesOptions struct {
	// Remember is how long [Sources.Source] remembers the version lists
	// and checksums it answers ([Dispatch.Remember]), shared by every
	// run given it: a wrapper that runs many units with one Sources lists
	// each package once, and a long-lived process sees a new release at
	// most Remember after it appears. Default [DefaultRemember];
	// negative: nothing is remembered beyond a run.
	Remember time.Duration
	// Config is the CLI configuration, as [cliconfig.Load] returns it
	// (with the TF_TOKEN_ variables it found). A host program that has
	// parsed its CLI configuration itself hands it over here instead of
	// tflock reading the files again: a [cliconfig.Config] holding its
	// installation methods (ProviderInstallation), its host blocks, the
	// service discovery settings (Hosts), and its plugin cache directory,
	// with its credentials in Credentials below. Default: loaded from
	// ConfigFiles, or from the files tofu finds, with Env and Home.
	Config *cliconfig.Config
	// Credentials, when set, supply every bearer token of the registries
	// (providers, registry modules, HTTP module archives) and network
	// mirrors, instead of the CLI configuration's credentials blocks and
	// the TF_TOKEN_ variables of Env, which are then not read, and a
	// credentials_helper block draws no warning: a host program that
	// resolves credentials itself, running its credentials helper,
	// hands them over here. Default nil: the CLI configuration's and
	// Env's.
	Credentials registry.Credentials
	// ConfigFiles, when Config is nil, are the CLI configuration files
	// read, in order, instead of those tofu finds (TF_CLI_CONFIG_FILE,
	// ~/.tofurc, ...); the environment variables that override their
	// settings still apply. Default: the files tofu finds.
	ConfigFiles []string
	// Env is the environment, "NAME=VALUE": the TF_CLI_CONFIG_FILE,
	// TF_TOKEN_*, TF_PLUGIN_CACHE_DIR, TF_PROVIDER_DOWNLOAD_RETRY, XDG_*
	// and DOCKER_CONFIG variables are read here, and nowhere else. A list
	// rather than a lookup function because the TF_TOKEN_ variables are
	// found by listing. Default nil: the process's environment; a non-nil
	// empty slice is an empty environment.
	Env []string
	// Home is the user's home directory, where the CLI configuration
	// files, the implied provider directories and the OCI credential
	// files are found. Default: the HOME variable of Env (USERPROFILE on
	// Windows), or, with Env nil, [os.UserHomeDir].
	Home string
	// WorkDir is the directory the implied "terraform.d/plugins" provider
	// directory is relative to. Default: the process's working directory.
	WorkDir string
	// HTTPClient sends the requests of every HTTP source whose own
	// options below leave their client unset: the registries, the network
	// mirrors, HTTP module archives and OCI registries. Default: each
	// source's default (one configuration of retries, timeouts and
	// redirects, in source/internal/httpx).
	HTTPClient *http.Client
	// Registry are the options of the registry source (providers and
	// registry modules) and of HTTP module archives, before the CLI
	// configuration's host blocks and tokens are added
	// ([cliconfig.Config.RegistryOptions]). Unset HTTPClient, Limits,
	// Events, LookupEnv and Credentials are filled from this struct's
	// fields and Env. Default: the zero [registry.Options].
	Registry registry.Options
	// Git are the options of the git source. Unset Events are filled
	// from this struct's. Default: git.Options{UserConfig: true},
	// the user's git configuration (credential helpers, insteadOf), as
	// tofu's git commands read it.
	Git *git.Options
	// OCI are the options of the OCI sources (modules, and each
	// oci_mirror block with its repository template). Unset HTTPClient,
	// Limits and Events are filled from this struct's. Default: the
	// credential files tofu reads ([oci.DefaultConfigFiles] with Env).
	OCI *oci.Options
	// Providers, when set, serves provider packages instead of the CLI
	// configuration's provider installation, which is then not used,
	// dev overrides included (as examples/lock's -plugin-dir). Default
	// nil: the CLI configuration's.
	Providers source.Source
	// Limits bound every package archive. The zero value applies the
	// defaults [source.Limits] states.
	Limits source.Limits
	// Events receives the sources' progress and warnings. Default nil.
	Events source.Events
}

// Sources are the sources [NewSources] built, and what else the CLI
// configuration says about installing.
type Sources struct {
	// Source serves every package: pass it as [Options.Source].
	Source *Dispatch
	// DevOverrides are the providers the CLI configuration's
	// dev_overrides serve from local directories, sorted by address:
	// pass them as DevOverrides in [Options.Resolve].
	DevOverrides []tfaddr.Provider
	// PluginCacheDir is the shared provider cache directory
	// (plugin_cache_dir, TF_PLUGIN_CACHE_DIR), or "": pass it as
	// [Options.PluginCacheDir].
	PluginCacheDir string
	// Config is the CLI configuration used.
	Config *cliconfig.Config
	// Installation is the provider installation the configuration
	// describes; nil when [SourcesOptions.Providers] replaced it.
	Installation *cliconfig.Installation
	// Warnings are the warnings about the CLI configuration (a missing
	// file, an unsupported credentials helper) and, while dev overrides
	// are in effect, the warning tofu shows about them.
	//
	// Deprecated: NewSources returns these warnings in its diagnostics,
	// with any errors; read them there. The field stays filled.
	Warnings hcl.Diagnostics
}

// DefaultRemember is how long the sources [NewSources] builds remember
// version lists and checksums by default ([SourcesOptions.Remember]).
const DefaultRemember = 5 * time.Minute

// NewSources builds, in one call, the sources tofu would use on this
// machine, from the CLI configuration and the environment
// ([SourcesOptions] says where each comes from):
//
//   - providers from the provider_installation block: direct (from each
//     provider's registry, with its download_retry_count),
//     filesystem_mirror, network_mirror and oci_mirror methods in the
//     order written, each with its include and exclude patterns; without
//     one, the implied local mirror directories that exist, then direct
//     installation of the providers they do not hold;
//   - registry providers and modules through the host blocks (service
//     discovery overrides) and the tokens of the TF_TOKEN_ variables and
//     credentials blocks;
//   - git, OCI and HTTP archive modules, and registry modules located in
//     them, routed by one [Dispatch].
//
// Nothing is fetched: a missing registry or mirror shows when it is
// asked. The diagnostics are those of the CLI configuration: its files'
// errors with their file and line, an invalid mirror URL (with an error
// among them the result is nil), and the warnings (a missing file, an
// unsupported credentials helper, dev overrides in effect), which
// [Sources.Warnings] also holds.
func NewSources(ctx context.Context, opts SourcesOptions) (*Sources, hcl.Diagnostics) {
	m := newMachine(opts)
	cfg, diags := m.config(opts)
	if diags.HasErrors() {
		return nil, diags
	}
	b := newBuilder(opts, m, cfg)
	d := &Dispatch{
		Remember: remember(opts.Remember),
		Registry: b.reg,
		Git:      git.NewSource(b.gitOptions()),
		OCI:      oci.NewSource(b.ociOptions()),
		HTTP:     registry.NewArchiveSource(b.ropts),
	}
	out := &Sources{Source: d, PluginCacheDir: cfg.PluginCacheDir, Config: cfg, Warnings: diags}
	if opts.Providers != nil {
		d.Providers = opts.Providers
		return out, slices.Clone(out.Warnings)
	}
	inst, idiags := cfg.Sources(ctx, b.installOptions())
	if idiags.HasErrors() {
		return nil, append(diags, idiags...)
	}
	out.Warnings = append(out.Warnings, idiags...)
	out.Installation = inst
	d.Providers = inst.Source
	out.DevOverrides, out.Warnings = devOverrides(inst.DevOverrides, out.Warnings)
	return out, slices.Clone(out.Warnings)
}

// machine is what NewSources reads of the machine it runs on: the
// environment, the home and working directories, each from
// [SourcesOptions] or, unset there, from the process.
type machine struct {
	env     []string
	home    string
	workDir string
}

func newMachine(opts SourcesOptions) machine {
	m := machine{env: opts.Env, home: opts.Home, workDir: opts.WorkDir}
	if m.env == nil {
		m.env = os.Environ()
	}
	if m.home == "" {
		if opts.Env == nil {
			m.home, _ = os.UserHomeDir()
		} else if m.home = m.getenv("HOME"); m.home == "" && runtime.GOOS == "windows" {
			m.home = m.getenv("USERPROFILE")
		}
	}
	if m.workDir == "" {
		m.workDir, _ = os.Getwd()
	}
	return m
}

func (m machine) lookupEnv(name string) (string, bool) { return lookupEnv(m.env, name) }

func (m machine) getenv(name string) string {
	v, _ := m.lookupEnv(name)
	return v
}

// config is the CLI configuration: opts.Config, or the files tofu (or
// opts.ConfigFiles) names, read with the machine's environment.
func (m machine) config(opts SourcesOptions) (*cliconfig.Config, hcl.Diagnostics) {
	if opts.Config != nil {
		return opts.Config, nil
	}
	return cliconfig.Load(cliconfig.LoadOptions{
		Getenv:  m.getenv,
		Environ: func() []string { return m.env },
		HomeDir: func() (string, error) { return m.home, nil },
		Files:   opts.ConfigFiles,
	})
}

// builder makes each source's options from its own in [SourcesOptions]
// and the settings every source shares (HTTP client, limits, events),
// merged in one place: [builder.shared].
type builder struct {
	opts  SourcesOptions
	m     machine
	cfg   *cliconfig.Config
	ropts registry.Options // the registry's, complete
	reg   *registry.Source // the registry source, shared by direct installation
}

func newBuilder(opts SourcesOptions, m machine, cfg *cliconfig.Config) *builder {
	b := &builder{opts: opts, m: m, cfg: cfg}
	b.ropts = b.registryOptions()
	b.reg = registry.NewSource(b.ropts)
	return b
}

// shared fills what a source's own options leave unset with the settings
// of [SourcesOptions] every source shares: the HTTP client (through set,
// as the sources' client fields are of different types), the limits and
// the events handler.
func (b *builder) shared(client func(*http.Client), limits *source.Limits, events *source.Events) {
	if client != nil && b.opts.HTTPClient != nil {
		client(b.opts.HTTPClient)
	}
	if limits != nil && *limits == (source.Limits{}) {
		*limits = b.opts.Limits
	}
	if events != nil && *events == nil {
		*events = b.opts.Events
	}
}

// registryOptions are the options of the registry source and of HTTP
// module archives: [SourcesOptions.Registry] completed with the shared
// settings, the environment's variables and credentials, and the CLI
// configuration's retries, host blocks and tokens.
func (b *builder) registryOptions() registry.Options {
	o := b.opts.Registry
	b.shared(func(c *http.Client) {
		if o.HTTPClient == nil {
			o.HTTPClient = c
		}
	}, &o.Limits, &o.Events)
	if o.LookupEnv == nil {
		o.LookupEnv = b.m.lookupEnv
	}
	if o.Credentials == nil {
		o.Credentials = registry.EnvCredentials(b.m.env)
	}
	if o.Retries == 0 {
		// TF_PROVIDER_DOWNLOAD_RETRY, as the configuration read it.
		o.Retries = b.cfg.ProviderDownloadRetries
	}
	o = b.cfg.RegistryOptions(o)
	if b.opts.Credentials != nil {
		o.Credentials = b.opts.Credentials
	}
	return o
}

// gitOptions are the git source's: [SourcesOptions.Git], by default the
// user's git configuration, with the shared events handler.
func (b *builder) gitOptions() git.Options {
	o := git.Options{UserConfig: true}
	if b.opts.Git != nil {
		o = *b.opts.Git
	}
	b.shared(nil, nil, &o.Events)
	return o
}

// ociOptions are the options of an OCI source: [SourcesOptions.OCI], by
// default the credential files tofu reads, with the shared settings.
func (b *builder) ociOptions() oci.Options {
	var o oci.Options
	if b.opts.OCI != nil {
		o = *b.opts.OCI
	} else {
		o.ConfigFiles = oci.DefaultConfigFiles(b.m.getenv, runtime.GOOS)
	}
	b.shared(func(c *http.Client) {
		if o.HTTPClient == nil {
			o.HTTPClient = c
		}
	}, &o.Limits, &o.Events)
	return o
}

// installOptions give the CLI configuration's provider installation its
// sources: direct installation from the registry (with a method's own
// download_retry_count), an OCI source per oci_mirror block, the network
// mirrors' shared settings and the implied local directories.
func (b *builder) installOptions() cliconfig.SourceOptions {
	o := cliconfig.SourceOptions{
		DirectMethod: b.direct,
		OCI: func(tpl string, _ *cliconfig.Config) (source.Source, error) {
			o := b.ociOptions()
			o.ProviderRepository = cliconfig.OCIRepositoryFunc(tpl)
			return oci.NewSource(o), nil
		},
		Implied:     mirror.ImpliedDirsEnv{GOOS: runtime.GOOS, Home: b.m.home, Getenv: b.m.getenv, WorkDir: b.m.workDir},
		Credentials: b.opts.Credentials,
	}
	b.shared(func(c *http.Client) { o.HTTPClient = c }, &o.Limits, nil)
	return o
}

// direct is the source of a direct installation method: the registry
// source, or one with the method's own download_retry_count.
func (b *builder) direct(m cliconfig.Method, _ *cliconfig.Config) (source.Source, error) {
	if m.DownloadRetryCount == nil {
		return b.reg, nil
	}
	o := b.ropts
	if o.Retries = *m.DownloadRetryCount; o.Retries == 0 {
		o.Retries = -1 // registry.Options: negative means none
	}
	return registry.NewSource(o), nil
}

// remember is the Dispatch's Remember for [SourcesOptions.Remember].
func remember(d time.Duration) time.Duration {
	switch {
	case d == 0:
		return DefaultRemember
	case d < 0:
		return 0
	}
	return d
}

// devOverrides lists the dev-overridden providers sorted by address and
// adds to warnings the warning tofu shows while they are in effect.
func devOverrides(do mirror.DevOverrides, warnings hcl.Diagnostics) ([]tfaddr.Provider, hcl.Diagnostics) {
	var out []tfaddr.Provider
	for a := range do {
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b tfaddr.Provider) int { return strings.Compare(a.String(), b.String()) })
	if w := do.Warning(); w != "" {
		summary, detail, _ := strings.Cut(w, "\n\n")
		warnings = append(warnings, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: summary, Detail: detail})
	}
	return out, warnings
}

// lookupEnv finds name in env ("NAME=VALUE"); the last entry wins, as
// for a process's environment. Names are compared exactly, except on
// Windows, where case does not matter.
func lookupEnv(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		k, v, ok := strings.Cut(env[i], "=")
		if ok && (k == name || runtime.GOOS == "windows" && strings.EqualFold(k, name)) {
			return v, true
		}
	}
	return "", false
}
