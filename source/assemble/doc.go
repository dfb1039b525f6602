// Package assemble is the front door of the sources: CLI configuration
// and environment in, one [source.Source] out. [NewSources] builds, in one
// call, the sources tofu would use on this machine (registries with their
// host blocks and tokens, the provider_installation methods with their
// include and exclude patterns, dev overrides, the implied mirror
// directories, git, OCI and HTTP module archives), and reports the
// dev-overridden providers, the plugin cache directory and the
// configuration's warnings. Everything it reads (CLI configuration files,
// environment, home and working directory, HTTP client) can be injected
// through [SourcesOptions].
//
// Its [Dispatch] routes each package to a source per kind: providers,
// registry modules, git, OCI and HTTP module packages, by the package's
// parsed address. It is also the one place where a module's location is
// routed: a module registry (or an HTTP address answering with
// X-Terraform-Get) reports where a package is ([source.ModuleLocator]),
// and Dispatch sends that location to the git, OCI or HTTP archive source.
//
// This package is the composition root: it is where the concrete sources
// (source/registry, source/git, source/oci, source/mirror,
// source/cliconfig) are put together. The installer, resolve/install,
// takes the result as its Options.Source and imports none of them, so a
// program that only checks an installation (install.Check) links no
// network code; a program that installs imports this package as well:
//
//	srcs, diags := assemble.NewSources(ctx, assemble.SourcesOptions{})
//	if diags.HasErrors() { ... }
//	res, err := install.Init(ctx, install.Options{Dir: dir, Source: srcs.Source,
//		PluginCacheDir: srcs.PluginCacheDir, Resolve: resolve.Options{DevOverrides: srcs.DevOverrides}})
package assemble
