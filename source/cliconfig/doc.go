// Package cliconfig reads OpenTofu's CLI configuration (TF_CLI_CONFIG_FILE,
// ~/.tofurc, ~/.terraformrc and ~/.terraform.d/*.tfrc) and builds the
// provider installation it describes, so that a program embedding tflock
// installs providers from the same places tofu would on the same machine.
//
// # What is read
//
//   - host "HOSTNAME" { services = { "providers.v1" = "https://..." } }:
//     service discovery overrides ([Host]).
//   - credentials "HOSTNAME" { token = "..." }: bearer tokens
//     ([Config.Token]). Tokens are never shown by String, GoString or any
//     diagnostic.
//   - credentials_helper "NAME" { args = [...] }: parsed, but not run.
//   - provider_installation { ... } with the methods direct,
//     filesystem_mirror { path }, network_mirror { url, trust_all_hashes },
//     oci_mirror { repository_template }, each with optional include and
//     exclude provider patterns, download_retry_count on direct and
//     network_mirror ([Config.DownloadRetries], with the
//     TF_PROVIDER_DOWNLOAD_RETRY environment variable), and
//     dev_overrides { "ADDR" = "DIR" }.
//   - plugin_cache_dir and plugin_cache_may_break_dependency_lock_file.
//
// [Parse] reads one file (native HCL syntax, or JSON for ".json" names;
// a file, or an oci_mirror repository_template, nested deeply enough to
// overflow the HCL parser gets the error "Nesting too deep" instead),
// [Load] finds and merges the files as tofu does, with the environment
// variables that override them, [Config.Methods] gives the installation
// methods as data (the block's, or the implied ones resolved on this
// machine), and [Config.Sources] composes the sources from them:
// a [source.MultiSource] of [source.Selector]s, the dev overrides and the
// plugin cache directory. The registry and OCI sources are passed in as
// constructors ([SourceOptions]); [Config.RegistryOptions] gives a registry
// source the host blocks and tokens, so that it finds private registries
// as tofu does.
//
// Programs do not usually call [Config.Sources] themselves:
// source/assemble's NewSources loads the configuration and builds every
// source from it in one call.
package cliconfig
