// Package versions holds versions and version constraints exactly as
// OpenTofu reads them: the provider dialect and the module dialect, and the
// canonical constraint string that OpenTofu writes to the lock file. It is
// a leaf package: both the lock-file model and the solver import it.
//
// # Versions
//
// A [Version] is a comparable value (use == and map keys). [Parse] reads
// the strict semantic-version form that registries and lock files use for
// providers ("1.2.3", "1.2.3-beta.1+build"), by the rules of
// github.com/Masterminds/semver/v3's StrictNewVersion (its tests compare the
// two). [ParseModuleVersion]
// reads the lenient form OpenTofu accepts for module versions
// (hashicorp/go-version): "v1.2", "1.0.9.5", "1.0beta". Either way the value
// is normalised, so [Version.String] is canonical and equal versions are ==.
// [Version.Compare] orders by semantic-version precedence.
//
// # Constraints
//
// [ParseConstraints] reads the provider dialect and [ParseModuleConstraints]
// the module dialect. Both give a [Constraints]: a list of terms that must
// all hold ([Intersect] concatenates lists). [Constraints.Allows] tests a
// version, [Newest] picks the highest allowed version of a list, and
// [Constraints.String] gives the canonical form.
//
// Both dialects share the operators = (or none), !=, >, >=, <, <= and ~>,
// terms separated by commas, and one rule for pre-releases: a pre-release
// version is allowed only if an "=" term names exactly that version
// (build metadata included) and every other term allows it. So ">= 1.0.0"
// does not allow 2.0.0-rc.1, and neither does "<= 2.0.0-rc.1".
//
// # Provider dialect
//
// OpenTofu parses provider constraints with apparentlymart/go-versions'
// "Ruby-style" parser (getproviders.ParseVersionConstraints). Here:
//
//   - A version has one to three numbers. Missing numbers are zero, not
//     wildcards: "= 1.2" allows only 1.2.0, "!= 1.2" excludes only 1.2.0,
//     "> 1" means "> 1.0.0".
//   - "~>" with one or two numbers lets the minor number grow, with three
//     the patch number: "~> 1" and "~> 1.2" mean ">= 1.x.0, < 2.0.0",
//     "~> 1.2.3" means ">= 1.2.3, < 1.3.0".
//   - "=" and "!=" compare build metadata, other operators ignore it:
//     "= 1.2.3" does not allow 1.2.3+meta, ">= 1.2.3+x" allows 1.2.3.
//   - Once a pre-release is requested exactly, the other terms are judged
//     by plain precedence: "= 2.1.0-beta1, >= 1.0" allows 2.1.0-beta1.
//   - Two pre-releases of the same numbers are ordered as go-versions
//     orders them, which is not quite semver precedence: a pre-release
//     that runs out of dot-separated parts first is the lower one, whatever
//     its parts say. So "1.0.0-rc" is below "1.0.0-beta.1": "= 1.0.0-rc,
//     < 1.0.0-beta.1" allows 1.0.0-rc, and the canonical form of
//     "1.0.0-beta.1, 1.0.0-rc" is "1.0.0-rc, 1.0.0-beta.1". ([Version.Compare]
//     keeps semver precedence.)
//   - No constraint term allows 0.0.0, which go-versions reads as "no
//     version" (OpenTofu: "0.0.0 is not a valid provider version");
//     0.0.0-beta and 0.0.0+meta are ordinary versions. The zero
//     Constraints, having no terms, allows 0.0.0 like any release.
//   - The empty string is no constraint (the zero Constraints).
//   - Rejected, with OpenTofu's messages: a "v" prefix (`invalid
//     specification "v1.0.0": a "v" prefix should not be used when
//     specifying versions`), four numbers (`too many numbered portions`),
//     wildcards ("1.2.*", "1.x": `can't use wildcard for patch number; omit
//     segments that should be unconstrained`), "=>" and "=<" (`invalid
//     constraint operator "=>"; did you mean ">="?`), "^" and other
//     operators, two or more spaces after an operator (`only one space is
//     expected after the operator "="`), and terms not separated by commas,
//     which catches "||", hyphen ranges and space-separated lists
//     (`missing comma after "1.0"`).
//
// Where apparentlymart/go-versions panics (a number too large for 64 bits)
// or reads a lone operator (">=") as ">= 0.0.0", this package returns an
// error instead.
//
// # Module dialect
//
// OpenTofu checks module versions with hashicorp/go-version and then drops
// every pre-release that was not requested exactly. Here:
//
//   - A "v" prefix is accepted ("~> v1.2"), so are any number of numeric
//     segments ("~> 1.0.9.5" allows 1.0.9.6 and 1.0.9.5.1), leading zeros,
//     and a pre-release without its "-" when it starts with a letter
//     ("1.0beta"). Spaces around operators are free.
//   - "~>" lets the last written number grow, and only it: "~> 1" has no
//     upper bound at all (it means ">= 1.0.0"), "~> 1.2" means ">= 1.2.0,
//     < 2.0.0", "~> 1.2.3" means ">= 1.2.3, < 1.3.0".
//   - go-version's pre-release rule applies to ordering operators and "~>":
//     a term without a pre-release matches no pre-release, and a term with
//     one matches only pre-releases of the same numbers. So, unlike the
//     provider dialect, "= 2.1.0-beta1, >= 1.0" does not allow 2.1.0-beta1,
//     and neither does "0.0.3-alpha.1, >= 0.0.2" allow 0.0.3-alpha.1 (write
//     "0.0.3-alpha.1" alone).
//   - "=" and "!=" ignore build metadata ("1.0.0+foo" allows 1.0.0), except
//     that requesting a pre-release exactly includes it ("1.0.0-beta1+b"
//     does not allow 1.0.0-beta1), as in OpenTofu.
//   - go-version's comparison quirks are kept: versions with different
//     numbers of segments compare by numbers only ("1.0.0.0" equals
//     1.0.0-beta1 for "=", although the pre-release rule still rejects it).
//   - The empty string is an error (`malformed constraint: `), as it is
//     for go-version; a module call without a version argument has no
//     constraint (use the zero Constraints). Other errors are go-version's:
//     `malformed constraint: 1.0 || 2.0`, `error parsing version: ...`.
//
// # Where tflock differs from OpenTofu (opentofu/opentofu#2117)
//
// OpenTofu's filter for module pre-releases re-parses the constraint with a
// third grammar (go-versions' npm-style parser), which rejects a space
// after an operator, any comma and "~>", and then drops the pre-release. So
// OpenTofu never selects 1.0.0-beta1 for "= 1.0.0-beta1", nor for
// "1.0.0-beta1, >= 1.0.0-alpha", although both request it exactly and
// go-version allows it; for "0.0.3-alpha.1, >= 0.0.2" it is the comma that
// makes the filter reject it (go-version's own rule then rejects it too).
// tflock applies the rule as intended instead: a pre-release is allowed
// when an "=" term names it and go-version allows it. On every input where
// the third grammar does not get in the way, the two agree.
//
// # Masterminds/semver constraints are a third dialect
//
// This package reads versions by Masterminds/semver's strict rules and
// orders them by semver precedence, as it does; its constraint language
// differs from both dialects above:
//
//   - "~> 2.3" (and "~2.3") means ">= 2.3.0, < 2.4.0" in Masterminds; for
//     OpenTofu it means ">= 2.3.0, < 3.0.0".
//   - Masterminds accepts "^1.2", "1.2.x", "1.*", "1.0.0 - 2.0.0", "||",
//     space-separated lists and a "v" prefix; the provider dialect rejects
//     all of them and the module dialect all but the "v" prefix.
//   - Masterminds reads missing numbers as wildcards: "= 1.2" allows 1.2.5
//     and "!= 1.2" excludes it; here "= 1.2" is exactly 1.2.0.
//   - Masterminds' ">= 1.2.3-beta" allows 1.3.0-alpha, and "1.2.3" allows
//     1.2.3+meta; neither does here.
//
// # Canonical form
//
// [Constraints.String] writes what OpenTofu writes to the `constraints`
// attribute of the lock file (getproviders.VersionConstraintsString):
// numbers zero-filled, "~>" written with two numbers ("~> 3" becomes
// "~> 3.0") or three, exact versions bare (no "="), duplicates removed, and
// terms sorted by version, then by operator (> >= = ~>(three numbers)
// ~>(two numbers) <= < !=). So ">= 2, >= 1.2, < 1.3" is written
// ">= 1.2.0, < 1.3.0, >= 2.0.0" and "~> 1.2, >= 1.2, 1.2.4" is written
// ">= 1.2.0, ~> 1.2, 1.2.4". Parsing the canonical form gives back the same
// constraints, and writing them again gives the same string. Module-dialect
// terms are written the same way, except that "~>" keeps the number of
// segments it was written with, since there "~> 1" and "~> 1.0" differ.
package versions
