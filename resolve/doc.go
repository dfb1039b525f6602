// Package resolve reads dependency requirements from OpenTofu/Terraform
// configuration and state, and chooses versions for them: one version per
// provider for the whole module tree, one per remote module call, each with
// an explanation.
//
// # Requirements
//
// A [Requirement] is a package (a provider address, or a module source), a
// version constraint in the package's dialect (see resolve/versions) and an
// [Origin]: the call path of the module that states it and the source range
// of its version argument. [ReadModule] reads one module directory's ".tf",
// ".tf.json", ".tofu" and ".tofu.json" files; [ReadTree] also follows
// local module calls ("./x", "../x"). A file nested deeply enough to
// overflow the HCL parser is not parsed: it gets the error "Nesting too
// deep" at the line where the limit is crossed, and the module's other
// files are still read. They understand:
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
//     requirement names the canonical package address (registry host spelled out, git URL without ref,
//     OCI repository), carries the git ref / OCI tag or digest that pins
//     it, and the source its lock entry records ("//subdir" kept);
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
// library's own default. [StateRequirements] adds the providers that a
// state's resources still use, as OpenTofu keeps them required.
//
// # Solving
//
// [Resolve] asks a [source.Lister] for the versions of each package, once
// per package, concurrently, and picks:
//
//   - for a provider, the newest version that every constraint allows; the
//     locked version if every constraint still allows it (unless an
//     upgrade is asked); an error ([*LockedMismatchError]) if a constraint
//     now forbids the locked version. As in OpenTofu, version 0.0.0 is
//     never picked, kept or carried over, even without a constraint;
//   - for a module call, the newest version its constraint allows, or the
//     locked one when the call's lock entry still applies to it
//     ([ModuleLockApplies]: same source, same ref or tag as written);
//     with Options.UnifyModules, one version per module source.
//     A pick from the list carries the origin's name for the version
//     ([ModulePick].Tag: the git or OCI tag) and, unless it keeps the
//     locked version, the commit or digest the lister reported
//     (Package.Pin), so that the fetcher checks it;
//   - nothing for built-in providers, dev overrides, unmanaged providers
//     and modules pinned by their source address (a git ref, an OCI tag or
//     digest) or, for git and OCI, without a constraint. This is decided
//     per call ([ModuleCallListed]): a pinned call beside a constrained
//     call of the same repository stays pinned. The only built-in
//     provider is terraform.io/builtin/terraform; any other built-in name
//     is an [*UnknownBuiltinError].
//
// Failures are typed: [*ConflictError] (constraints that each allow some
// version but not together; the message lists each constraint with its
// origin and the available versions), [*NoMatchError] (for a git or OCI
// module it lists the tags seen, else the available versions),
// [*NoVersionsError],
// [*UnknownPackageError] (wrapping [source.ErrNotFound]), [*ListError],
// [*LockedMismatchError], [*LockedUnavailableError],
// [*BuiltinConstraintError] and [*UnknownBuiltinError]. [Selection.Explain] prints why each version
// was picked; [Selection.Apply] writes the picks into a lock file.
package resolve
