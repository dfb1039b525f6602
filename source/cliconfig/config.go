package cliconfig

import (
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/hcl/v2"
	tfaddr "github.com/hashicorp/terraform-registry-address"
	svchost "github.com/hashicorp/terraform-svchost"

	"github.com/tflock/tflock/source"
)

// Config is the part of OpenTofu's CLI configuration that concerns where
// providers and modules come from. The zero value is an empty configuration.
type Config struct {
	// Hosts holds the host blocks, keyed by host name in its normalized
	// form: service discovery overrides for that host.
	Hosts map[string]*Host
	// Credentials holds the credentials blocks, keyed by normalized host
	// name.
	Credentials map[string]*Credentials
	// CredentialsHelper is the credentials_helper block, if any. tflock
	// does not run credentials helpers; [Config.Sources] warns when one is
	// configured.
	CredentialsHelper *CredentialsHelper
	// ProviderInstallation is the provider_installation block; nil when
	// there is none, and OpenTofu's implied installation methods apply.
	ProviderInstallation *ProviderInstallation
	// PluginCacheDir is the shared provider cache directory (plugin_cache_dir,
	// or the TF_PLUGIN_CACHE_DIR environment variable), or "".
	PluginCacheDir string
	// PluginCacheMayBreakDependencyLockFile is the
	// plugin_cache_may_break_dependency_lock_file setting (or its
	// environment variable).
	PluginCacheMayBreakDependencyLockFile bool
	// EnvTokens holds the tokens of the TF_TOKEN_ environment variables
	// that [Load] found, keyed by normalized host name ("." written "_"
	// and "-" written "__" in the variable's name, as OpenTofu reads
	// them). They take precedence over credentials blocks in
	// [Config.Token]. Never shown in diagnostics.
	EnvTokens Tokens
	// ProviderDownloadRetries is how many times a provider download is
	// retried when the installation method sets no download_retry_count:
	// the TF_PROVIDER_DOWNLOAD_RETRY environment variable as [Load] reads
	// it, or 0 for OpenTofu's default (2).
	ProviderDownloadRetries int
	// Files lists the files the configuration was read from, in order.
	Files []string

	// provider_installation blocks seen, to report duplicates when merging.
	installBlocks []hcl.Range
	helperBlocks  []hcl.Range
}

// Host is a host block: service discovery results to use for a host
// instead of asking its /.well-known/terraform.json.
type Host struct {
	// Services maps service identifiers ("providers.v1", "modules.v1") to
	// their value: usually a URL string; some services (login.v1) take an
	// object, given as a map[string]any.
	Services map[string]any
	// DeclRange is the block's header in the file.
	DeclRange hcl.Range
}

// Credentials is a credentials block. Its String and GoString methods do
// not show the token.
type Credentials struct {
	// Token is the bearer token to send to the host.
	Token string
	// DeclRange is the block's header in the file.
	DeclRange hcl.Range
}

// String returns a description without the token.
func (c *Credentials) String() string {
	if c == nil || c.Token == "" {
		return "credentials (no token)"
	}
	return "credentials (token redacted)"
}

// GoString returns a Go-syntax description without the token.
func (c *Credentials) GoString() string { return "&cliconfig.Credentials{Token: \"REDACTED\"}" }

// CredentialsHelper is a credentials_helper block.
type CredentialsHelper struct {
	// Name is the block's label: the helper's name (tofu runs terraform-credentials-NAME).
	Name string
	// Args is the args argument: the arguments tofu runs the helper with.
	Args []string
	// DeclRange is the block's header in the file.
	DeclRange hcl.Range
}

// MethodKind is the kind of a provider installation method.
type MethodKind int

// The provider installation methods of a provider_installation block.
const (
	Direct           MethodKind = iota + 1 // direct { }
	FilesystemMirror                       // filesystem_mirror { path = "..." }
	NetworkMirror                          // network_mirror { url = "https://..." }
	OCIMirror                              // oci_mirror { repository_template = "..." }
)

// String returns the block type name of the method.
func (k MethodKind) String() string {
	switch k {
	case Direct:
		return "direct"
	case FilesystemMirror:
		return "filesystem_mirror"
	case NetworkMirror:
		return "network_mirror"
	case OCIMirror:
		return "oci_mirror"
	}
	return fmt.Sprintf("MethodKind(%d)", int(k))
}

// Method is one installation method of a provider_installation block.
type Method struct {
	// Kind is the method's block type.
	Kind MethodKind
	// Location is the filesystem_mirror path, the network_mirror url or
	// the oci_mirror repository_template; empty for direct.
	Location string
	// Include and Exclude are the method's provider patterns as written
	// (parse them with source.ParseProviderPattern).
	Include, Exclude []string
	// DownloadRetryCount is the download_retry_count of a direct or
	// network_mirror block, or nil when not set (see
	// [Config.DownloadRetries]).
	DownloadRetryCount *int
	// TrustAllHashes is the trust_all_hashes argument of a network_mirror
	// block: the hashes the mirror lists for every platform are recorded,
	// not only those of the package downloaded. Default false.
	TrustAllHashes bool
	// DeclRange is the block's header in the file; the zero Range for an implied method.
	DeclRange hcl.Range

	// found are the patterns of the providers an implied direct method
	// excludes, as found in the implied directories (Exclude spells
	// them): kept parsed, so that an address no pattern string can write
	// is excluded all the same.
	found []source.Pattern
}

// ProviderInstallation is the provider_installation block.
type ProviderInstallation struct {
	// Methods are the installation methods, in priority order.
	Methods []Method
	// DevOverrides maps providers to local development builds
	// (dev_overrides).
	DevOverrides map[tfaddr.Provider]string
	// DeclRange is the block's header in the file.
	DeclRange hcl.Range
}

// Token returns the token for host as tofu chooses it: the TF_TOKEN_
// variable's ([Config.EnvTokens]) first, else the credentials block's, else
// "". The host name is compared in its normalized form.
func (c *Config) Token(host string) string {
	if c == nil {
		return ""
	}
	h, err := svchost.ForComparison(host)
	if err != nil {
		return ""
	}
	if tok, ok := c.EnvTokens[h.String()]; ok {
		return tok
	}
	if cr := c.Credentials[h.String()]; cr != nil {
		return cr.Token
	}
	return ""
}

// Merge returns a configuration combining c and o as OpenTofu combines its
// CLI configuration files: host, credentials and credentials_helper blocks
// of o replace those of c for the same name; c's plugin_cache_dir wins when
// set; provider_installation blocks are collected, and more than one is an
// error reported by [Config.Validate].
func (c *Config) Merge(o *Config) *Config {
	r := &Config{
		Hosts:                                 maps.Clone(c.Hosts),
		Credentials:                           maps.Clone(c.Credentials),
		CredentialsHelper:                     c.CredentialsHelper,
		ProviderInstallation:                  c.ProviderInstallation,
		PluginCacheDir:                        c.PluginCacheDir,
		PluginCacheMayBreakDependencyLockFile: c.PluginCacheMayBreakDependencyLockFile || o.PluginCacheMayBreakDependencyLockFile,
		ProviderDownloadRetries:               max(c.ProviderDownloadRetries, o.ProviderDownloadRetries),
		EnvTokens:                             maps.Clone(c.EnvTokens),
		Files:                                 append(slices.Clone(c.Files), o.Files...),
		installBlocks:                         append(slices.Clone(c.installBlocks), o.installBlocks...),
		helperBlocks:                          append(slices.Clone(c.helperBlocks), o.helperBlocks...),
	}
	if r.PluginCacheDir == "" {
		r.PluginCacheDir = o.PluginCacheDir
	}
	for k, v := range o.Hosts {
		if r.Hosts == nil {
			r.Hosts = map[string]*Host{}
		}
		r.Hosts[k] = v
	}
	for k, v := range o.EnvTokens {
		if r.EnvTokens == nil {
			r.EnvTokens = Tokens{}
		}
		r.EnvTokens[k] = v
	}
	for k, v := range o.Credentials {
		if r.Credentials == nil {
			r.Credentials = map[string]*Credentials{}
		}
		r.Credentials[k] = v
	}
	if o.CredentialsHelper != nil {
		r.CredentialsHelper = o.CredentialsHelper
	}
	if r.ProviderInstallation == nil {
		r.ProviderInstallation = o.ProviderInstallation
	}
	return r
}

// Validate reports what is wrong with the configuration as a whole: more
// than one provider_installation or credentials_helper block across the
// files read.
func (c *Config) Validate() hcl.Diagnostics {
	var diags hcl.Diagnostics
	if len(c.installBlocks) > 1 {
		r := c.installBlocks[1]
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Duplicate provider_installation block",
			Detail:   fmt.Sprintf("No more than one provider_installation block may be specified; the first is at %s.", c.installBlocks[0]),
			Subject:  &r,
		})
	}
	if len(c.helperBlocks) > 1 {
		r := c.helperBlocks[1]
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Duplicate credentials_helper block",
			Detail:   fmt.Sprintf("No more than one credentials_helper block may be specified; the first is at %s.", c.helperBlocks[0]),
			Subject:  &r,
		})
	}
	return diags
}

// Services returns the service discovery overrides of the host block for
// host (compared in its normalized form), and whether there is one.
func (c *Config) Services(host string) (map[string]any, bool) {
	if c == nil {
		return nil, false
	}
	h, err := svchost.ForComparison(host)
	if err != nil {
		return nil, false
	}
	if hb := c.Hosts[h.String()]; hb != nil {
		return hb.Services, true
	}
	return nil, false
}

// DefaultDownloadRetries is OpenTofu's default number of provider download
// retries (its TF_PROVIDER_DOWNLOAD_RETRY default).
const DefaultDownloadRetries = 2

// DownloadRetries returns how many times the installation method m should
// retry a download: its download_retry_count if set, else
// c.ProviderDownloadRetries if positive, else [DefaultDownloadRetries], as
// tofu decides.
func (c *Config) DownloadRetries(m Method) int {
	switch {
	case m.DownloadRetryCount != nil:
		return *m.DownloadRetryCount
	case c != nil && c.ProviderDownloadRetries > 0:
		return c.ProviderDownloadRetries
	}
	return DefaultDownloadRetries
}

// Tokens maps normalized host names to bearer tokens. Its String and
// GoString methods do not show the tokens, so that printing a [Config]
// never reveals one.
type Tokens map[string]string

// String returns a description without the tokens.
func (t Tokens) String() string { return fmt.Sprintf("%d tokens (redacted)", len(t)) }

// GoString returns a Go-syntax description without the tokens.
func (t Tokens) GoString() string { return "cliconfig.Tokens{ /* redacted */ }" }
