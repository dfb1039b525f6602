package cliconfig

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"slices"

	"github.com/hashicorp/hcl/v2"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/mirror"
	"github.com/tflock/tflock/source/registry"
)

// SourceOptions gives [Config.Sources] the constructors of the sources this
// package does not implement itself, so that it does not depend on them.
type SourceOptions struct {
	// Direct returns the source for direct installation, as DirectMethod
	// does, without the method.
	//
	// Deprecated: set DirectMethod, the one hook for direct installation
	// (it is given the method, with its download_retry_count). Direct is
	// used only when DirectMethod is nil.
	Direct func(cfg *Config) (source.Source, error)
	// DirectMethod returns the source for direct installation from each
	// provider's origin registry (a source/registry source configured with
	// the host blocks and credentials of cfg), given the direct method, so
	// that the source can retry downloads as its download_retry_count
	// says ([Config.DownloadRetries]). In the implied configuration it is
	// given Method{Kind: Direct}. Default: none; a configured direct
	// method is then an error, and the implied configuration has no
	// direct installation.
	DirectMethod func(m Method, cfg *Config) (source.Source, error)
	// Network returns the source for a network_mirror block (m.Location
	// is its url). Default: a [mirror.Network] using HTTPClient, the
	// credentials of cfg, the block's trust_all_hashes and its download
	// retries ([Config.DownloadRetries]).
	Network func(m Method, cfg *Config) (source.Source, error)
	// HTTPClient is the client of the default network mirror source.
	// Default: the mirror package's default client.
	HTTPClient mirror.HTTPClient
	// Limits bound the packages of the default network mirror source.
	// The zero value applies the defaults [source.Limits] states.
	Limits source.Limits
	// OCI returns the source for an oci_mirror block, given its
	// repository_template. Default: none; an oci_mirror block is then an
	// error.
	OCI func(repositoryTemplate string, cfg *Config) (source.Source, error)
	// Credentials, when set, supply the tokens of the default network
	// mirror source instead of cfg's credentials blocks and TF_TOKEN_
	// variables ([Config.Token]), and a credentials_helper block then
	// draws no warning: a host program that resolves credentials itself,
	// its credentials helper included, passes them here. Default nil:
	// cfg's.
	Credentials registry.Credentials
	// Implied locates the implied local mirror directories used when there
	// is no provider_installation block. Default: the zero
	// [mirror.ImpliedDirsEnv], which knows no home directory and no
	// environment: "terraform.d/plugins" relative to the working directory
	// and the platform's system-wide directories. Pass
	// [mirror.CurrentImpliedDirsEnv]() to behave as tofu on this machine.
	Implied mirror.ImpliedDirsEnv
}

// Installation is what a CLI configuration says about installing
// providers.
type Installation struct {
	// Source combines the installation methods in priority order, each
	// restricted by its include and exclude patterns.
	Source *source.MultiSource
	// DevOverrides are the providers to use from local directories, never
	// installed nor locked.
	DevOverrides mirror.DevOverrides
	// PluginCacheDir is the shared provider cache directory, or "".
	PluginCacheDir string
	// Implied is true when the configuration had no provider_installation
	// block and OpenTofu's implied methods were used.
	Implied bool
	// ImpliedDirs are the implied local mirror directories that exist and
	// were used, in priority order.
	ImpliedDirs []string
}

// Sources builds the provider installation OpenTofu would use with this
// configuration.
//
// With a provider_installation block, each method becomes a
// [source.Selector] with its include and exclude patterns, in the order
// written; direct and network_mirror sources are wrapped in
// [source.Memoize].
//
// Without one, the implied configuration applies, as in tofu: a filesystem
// mirror for each implied local directory that exists ([mirror.ImpliedDirs]),
// then direct installation for every provider not found in any of those
// directories.
func (c *Config) Sources(ctx context.Context, opts SourceOptions) (*Installation, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	inst := &Installation{PluginCacheDir: c.PluginCacheDir}
	if c.CredentialsHelper != nil && opts.Credentials == nil {
		r := c.CredentialsHelper.DeclRange
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Credentials helpers are not supported",
			Detail:  fmt.Sprintf("The credentials helper %q is ignored: tflock reads credentials only from credentials blocks and TF_TOKEN_ environment variables.", c.CredentialsHelper.Name),
			Subject: &r})
	}
	if c.ProviderInstallation != nil && len(c.ProviderInstallation.DevOverrides) > 0 {
		inst.DevOverrides = mirror.DevOverrides(c.ProviderInstallation.DevOverrides)
	}
	methods, implied := c.Methods(ctx, opts.Implied)
	inst.Implied = implied
	var sels []source.Source
	for _, m := range methods {
		if implied && m.Kind == FilesystemMirror {
			inst.ImpliedDirs = append(inst.ImpliedDirs, m.Location)
		}
		if implied && m.Kind == Direct && opts.DirectMethod == nil && opts.Direct == nil {
			// The program provided no registry source: the implied
			// configuration then has no direct installation.
			continue
		}
		src, d := c.methodSource(m, opts)
		diags = append(diags, d...)
		if src == nil {
			continue
		}
		sel := source.Selector{Source: src, Name: m.Kind.String(), Exclude: m.found}
		if m.Location != "" {
			sel.Name += " " + m.Location
		}
		for _, p := range m.Include {
			if pat, err := source.ParseProviderPattern(p); err == nil {
				sel.Include = append(sel.Include, pat)
			}
		}
		for _, p := range m.Exclude {
			if pat, err := source.ParseProviderPattern(p); err == nil && m.found == nil {
				sel.Exclude = append(sel.Exclude, pat)
			}
		}
		sels = append(sels, sel)
	}
	inst.Source = source.Multi(sels...)
	return inst, diags
}

func (c *Config) methodSource(m Method, opts SourceOptions) (source.Source, hcl.Diagnostics) {
	r := m.DeclRange
	fail := func(summary, detail string) (source.Source, hcl.Diagnostics) {
		d := &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail}
		if r.Filename != "" { // an implied method has no block
			d.Subject = &r
		}
		return nil, hcl.Diagnostics{d}
	}
	switch m.Kind {
	case Direct:
		src, err := c.direct(m, opts)
		if src == nil && err == nil {
			return fail("Direct installation is not available", "The program did not provide a registry source, so the direct installation method cannot be used.")
		}
		if err != nil {
			return fail("Cannot use direct installation", err.Error())
		}
		return source.Memoize(src), nil
	case FilesystemMirror:
		return mirror.NewFilesystem(m.Location), nil
	case NetworkMirror:
		u, err := url.Parse(m.Location)
		if err != nil {
			return fail("Invalid URL for provider installation source", fmt.Sprintf("Cannot parse %q as a URL for a network provider mirror: %s.", m.Location, err))
		}
		if u.Scheme != "https" || u.Host == "" {
			return fail("Invalid URL for provider installation source", fmt.Sprintf("Cannot use %q as a URL for a network provider mirror: the mirror must be at an https: URL.", m.Location))
		}
		var src source.Source
		if opts.Network != nil {
			src, err = opts.Network(m, c)
		} else {
			retries := c.DownloadRetries(m)
			if retries == 0 {
				retries = -1 // NetworkOptions: negative means none
			}
			token := c.Token
			if opts.Credentials != nil {
				token = func(host string) string {
					tok, _ := opts.Credentials.Token(registry.NormalizeHost(host))
					return tok
				}
			}
			src, err = mirror.NewNetwork(mirror.NetworkOptions{URL: m.Location, Client: opts.HTTPClient, Token: token,
				TrustAllHashes: m.TrustAllHashes, Retries: retries, Limits: opts.Limits})
		}
		if err != nil {
			return fail("Invalid URL for provider installation source", err.Error())
		}
		return source.Memoize(src), nil
	case OCIMirror:
		if opts.OCI == nil {
			return fail("OCI mirrors are not available", "The program did not provide an OCI source, so the oci_mirror installation method cannot be used.")
		}
		src, err := opts.OCI(m.Location, c)
		if err != nil {
			return fail("Invalid oci_mirror block", err.Error())
		}
		return src, nil
	}
	return fail("Unsupported installation method", fmt.Sprintf("Installation method %s is not supported.", m.Kind))
}

// Methods returns, as data, the provider installation methods of the
// configuration in priority order: the methods of its
// provider_installation block as written or, without one (implied true),
// OpenTofu's implied methods: a filesystem_mirror for each implied local
// directory that exists ([mirror.ImpliedDirs] of implied), then direct,
// excluding every provider found in those directories (its Exclude lists
// them; a directory that cannot be read provides nothing). [Config.Sources]
// builds its sources from these methods.
func (c *Config) Methods(ctx context.Context, env mirror.ImpliedDirsEnv) (methods []Method, implied bool) {
	if c.ProviderInstallation != nil {
		return slices.Clone(c.ProviderInstallation.Methods), false
	}
	direct := Method{Kind: Direct}
	for _, dir := range mirror.ImpliedDirs(env) {
		if info, err := os.Stat(dir); err != nil || !info.IsDir() {
			continue
		}
		// As tofu does, a provider found in a local directory is not
		// installed directly from its registry.
		if provs, err := mirror.NewFilesystem(dir).Providers(ctx); err == nil {
			for _, p := range provs {
				pat := source.ProviderPattern(p)
				direct.Exclude = append(direct.Exclude, pat.String())
				direct.found = append(direct.found, pat)
			}
		}
		methods = append(methods, Method{Kind: FilesystemMirror, Location: dir})
	}
	return append(methods, direct), true
}

// direct builds the direct installation source with DirectMethod or
// Direct; it returns nil and no error when the program provided neither.
func (c *Config) direct(m Method, opts SourceOptions) (source.Source, error) {
	switch {
	case opts.DirectMethod != nil:
		return opts.DirectMethod(m, c)
	case opts.Direct != nil:
		return opts.Direct(c)
	}
	return nil, nil
}
