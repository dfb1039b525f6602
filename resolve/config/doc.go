// Package config reads the dependency requirements of an OpenTofu or
// Terraform configuration and of its state: the input of the solver in
// package [github.com/tflock/tflock/resolve].
//
// # Who owns what
//
// This package owns reading: which files make up a module, what their
// blocks say about providers and module calls, the early evaluation of
// module sources and versions, tflock annotations, and the providers a
// state still uses. What it reads becomes [resolve.Requirement] values,
// each with a [resolve.Origin] (call path, file and line); the
// vocabulary those are written in (requirements, origins, module source
// kinds, the one provider-address parser [address.ParseProviderSource],
// the default registry host) belongs to package resolve, which the
// solver needs without the reader. This package imports resolve; resolve
// never imports it. It fetches nothing and opens no network connection:
// a remote module call becomes a requirement, and its configuration is
// read once the package is fetched (package
// [github.com/tflock/tflock/resolve/install] does that).
//
// # Reading configuration
//
// [ReadModule] reads one module directory's ".tf", ".tf.json", ".tofu"
// and ".tofu.json" files; [ReadTree] also follows local module calls
// ("./x", "../x"); [ReadTreeFS] and [ReadModuleFS] read from an
// [io/fs.FS], [ReadFiles] from files in memory. A file nested deeply
// enough to overflow the HCL parser is not parsed: it gets the error
// "Nesting too deep" at the line where the limit is crossed, and the
// module's other files are still read. They understand:
//
//   - terraform { required_providers { ... } } in the object form
//     (source, version, configuration_aliases) and the legacy string form
//     (aws = "~> 1.0", source implied);
//   - provider local names used without an entry (resource, data and
//     ephemeral blocks by their type prefix, the provider meta-argument,
//     provider blocks, module providers maps): implied
//     DEFAULTHOST/hashicorp/NAME, with a warning ("terraform" means the
//     built-in provider);
//   - the deprecated version argument of provider blocks, with a warning;
//   - module blocks (source, version). Source and version are evaluated
//     early, as in OpenTofu 1.8+: from literals, input variables, locals,
//     path.*, terraform.workspace and functions. The root module's
//     variables take their values from [ReadOptions].Variables (-var,
//     -var-file, terraform.tfvars, *.auto.tfvars, TF_VAR_*, defaults, in
//     OpenTofu's precedence); a value not known then (no default and no
//     value, a resource attribute, a module output, a sensitive value) is
//     an error naming the call and the reference, never a requirement of
//     the text as written. A called module's variables take the
//     arguments of its call ([ReadOptions].Caller, set by [ReadTree] for
//     local modules), evaluated in the caller, else their defaults.
//     Sources are parsed with source/address: a remote call's
//     requirement names the canonical package address (registry host
//     spelled out, git URL without ref, OCI repository), carries the git
//     ref / OCI tag or digest that pins it, and the source its lock entry
//     records ("//subdir" kept);
//   - tflock annotations: a "# tflock: version = "~> 1.0"" comment
//     ([AnnotationPrefix]; "//" and "/* */" too) inside the module block
//     of a git or OCI call, in a native syntax file, is the call's
//     version constraint, in the form that tofu and terraform load
//     (they refuse a version argument on those sources, the
//     module-locking RFC's syntax, which is read as well). The call is
//     then constrained and listed ([ModuleCall].ManagedRef): its
//     requirement has no Ref, the git ref or OCI tag in its source being
//     what tflock writes ([ManagedSource]). The source must be a plain
//     string literal. An annotation on a registry, local or other
//     source, on a call pinned by an OCI digest, beside a version
//     argument, twice, or with another key than version is an error
//     naming the file and line;
//   - override files, which replace what they set.
//
// The default registry host is [ReadOptions].DefaultHost
// (registry.opentofu.org unless said otherwise), never the address
// library's own default.
//
// # Reading state
//
// [StateRequirements] (and [ReadStateFile], from a file) adds the
// providers that a state's resources still use, as OpenTofu keeps them
// required; a state that cannot be read is a [*StateError].
package config
