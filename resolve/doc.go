// Package resolve chooses versions for the dependency requirements of an
// OpenTofu/Terraform configuration and its state: one version per
// provider for the whole module tree, one per remote module call, each
// with an explanation.
//
// # Requirements
//
// A [Requirement] is a package (a provider address, or a module source), a
// version constraint in the package's dialect (see resolve/versions) and an
// [Origin]: the call path of the module that states it and the source range
// of its version argument. Requirements come from the configuration and
// state reader, package [github.com/tflock/tflock/resolve/config], or from
// the caller ([ProviderRequirements] says "these providers stay
// required").
//
// # Who owns what
//
// This package owns the solver and the vocabulary it shares with the
// reader: [Requirement], [Origin], [ModuleSourceKind] with
// [ClassifyModuleSource] and [ClassifyModuleAddress],
// [DefaultRegistryHost], [ParseProviderSource] (tflock's one
// provider-address parser with OpenTofu's rules for a configuration: no
// legacy "-/NAME" addresses) and [ParseReattach] (TF_REATTACH_PROVIDERS,
// which the solver reads). Reading configuration
// and state (files, module trees, early evaluation, annotations) is
// package [github.com/tflock/tflock/resolve/config]'s, which imports this
// one; this package never imports it, and sees sources only through the
// [source] interfaces.
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
