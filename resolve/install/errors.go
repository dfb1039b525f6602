package install

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/source"
)

// ConfigError reports a configuration (root module, a local module, or a
// fetched remote module) that could not be read. Init, Check, LockModule
// return it as it is (errors.As(err, &e) finds it); it wraps nothing: the
// file, line and cause of each problem are in Diagnostics.
type ConfigError struct {
	// Dir is the module directory as read.
	Dir string
	// Diagnostics are the errors and warnings found.
	Diagnostics hcl.Diagnostics
}

// Error names the directory and joins the error diagnostics' messages.
func (e *ConfigError) Error() string {
	var errs []string
	for _, d := range e.Diagnostics {
		if d.Severity == hcl.DiagError {
			errs = append(errs, d.Error())
		}
	}
	if len(errs) == 0 {
		return fmt.Sprintf("reading the configuration in %s failed", e.Dir)
	}
	return fmt.Sprintf("reading the configuration in %s: %s", e.Dir, strings.Join(errs, "; "))
}

// OptionsError reports settings of [Options] that contradict each other.
// Init and Check return it before anything is read or fetched.
type OptionsError struct {
	// Field is the field at fault, such as "Resolve.TranslatePredecessor".
	Field string
	// Reason says why, and what to set instead.
	Reason string
}

// Error names the option field and says why it cannot be used.
func (e *OptionsError) Error() string {
	return fmt.Sprintf("install: Options.%s: %s", e.Field, e.Reason)
}

// ChecksumError reports a package whose contents match none of the
// checksums recorded in the lock file, or none of those its origin vouches
// for (a registry's signed checksums) when the lock file records none.
// Nothing is installed and no lock file is changed when Init returns it.
//
// It wraps the cause (which wraps [source.ErrChecksumMismatch]) and a
// [*hash.MismatchError] with the computed and the expected hashes, so both
// errors.Is(err, source.ErrChecksumMismatch) and errors.As(err, &mismatch)
// match.
type ChecksumError struct {
	// Package is the package concerned.
	Package source.Package
	// Call is the module call path for a module package, else "".
	Call string
	// Got are the hashes computed from what was fetched, when known.
	Got []hash.Hash
	// Want are the hashes the lock file records; when it records none,
	// those the origin vouches for, if known.
	Want []hash.Hash
	// Origin is true when Want came from the origin (the lock file recorded
	// nothing for the package).
	Origin bool
	// Err is the cause.
	Err error
	// Remedy is what to do when the lock file recorded what the package
	// does not match: [RemedyRelock]; else the zero Remedy.
	Remedy Remedy

	words *Words // the run's words; nil: OpenTofu's
}

// Error names the package (and module call) and the checksums expected and got,
// then what to do.
func (e *ChecksumError) Error() string {
	what := e.Package.ForDisplay()
	if e.Call != "" {
		what = fmt.Sprintf("module %q (%s)", e.Call, what)
	}
	var b strings.Builder
	switch {
	case e.Origin:
		fmt.Fprintf(&b, "the package for %s does not match the checksums its origin vouches for", what)
	case len(e.Want) > 0:
		fmt.Fprintf(&b, "the package for %s does not match any of the checksums recorded in the dependency lock file", what)
	default:
		fmt.Fprintf(&b, "the package for %s does not match the checksums its origin reported: %v", what, e.Err)
		return b.String()
	}
	label := "lock file"
	if e.Origin {
		label = "origin"
	}
	fmt.Fprintf(&b, "\n  Expected (%s): %s", label, joinHashes(e.Want))
	fmt.Fprintf(&b, "\n  Got:%s %s", strings.Repeat(" ", len(label)+len("Expected ()")-len("Got")), joinHashes(e.Got))
	if e.Origin {
		b.WriteString("\nThe package found is not the one its origin publishes: do not use it. Nothing was installed; clear the package cache entry or run again with a fresh cache.")
	} else {
		remedy := e.Remedy
		if remedy.Kind == 0 {
			remedy = remedyFor(RemedyRelock, e.Package, e.Call)
		}
		fmt.Fprintf(&b, "\nThe package served for this version is not the one the lock file recorded: the source may have been compromised, or the publisher changed a released version. Nothing was installed. %s.", capitalize(e.words.orDefault().Remedy(remedy)))
	}
	return b.String()
}

func joinHashes(hs []hash.Hash) string {
	if len(hs) == 0 {
		return "none"
	}
	s := make([]string, len(hs))
	for i, h := range hs {
		s[i] = h.String()
	}
	return strings.Join(s, ", ")
}

// Unwrap returns the cause and a [*hash.MismatchError].
func (e *ChecksumError) Unwrap() []error {
	return []error{e.Err, &hash.MismatchError{Path: e.Package.ForDisplay(), Got: e.Got, Want: e.Want}}
}

// LockChangedError is returned by Init in read-only mode ([Options.ReadOnly])
// when the dependency selections would change. Nothing is installed. A
// constraint the locked version no longer meets is reported instead by a
// [*resolve.LockedMismatchError], read-only or not.
// Init returns it as it is (errors.As(err, &e) finds it); it wraps
// nothing.
type LockChangedError struct {
	// Changes are the changes that were refused.
	Changes []lockfile.Change
	// Remedy is what to do: [RemedyWritable].
	Remedy Remedy

	words *Words // the run's words; nil: OpenTofu's
}

// Error says which kinds of selections would change ("Provider
// dependency changes detected", OpenTofu's text with OpenTofu's words,
// when only providers would), the remedy in the run's words
// ([Options.Words]), then each change.
func (e *LockChangedError) Error() string {
	w := e.words.orDefault()
	providers, modules := false, false
	for _, c := range e.Changes {
		if c.Module != "" {
			modules = true
		} else {
			providers = true
		}
	}
	what := "Provider"
	switch {
	case modules && providers:
		what = "Provider and module"
	case modules:
		what = "Module"
	}
	remedy := e.Remedy
	if remedy.Kind == 0 {
		remedy = Remedy{Kind: RemedyWritable, Modules: modules}
	}
	var b strings.Builder
	b.WriteString(what + " dependency changes detected: changes to the required dependencies were detected, but the lock file is read-only. To use and record these requirements, " + w.Remedy(remedy) + ".")
	for _, c := range e.Changes {
		b.WriteString("\n  - ")
		// An edited ref or tag: what the configuration asks, what the
		// lock records.
		if c.Kind == lockfile.Repinned && (c.OldPin.Ref != c.NewPin.Ref || c.OldPin.Tag != c.NewPin.Tag) {
			b.WriteString(pinProblem(c.Module, lockfile.ModulePin{Ref: c.NewPin.Ref, Tag: c.NewPin.Tag}, c.OldPin))
			continue
		}
		// Hashes alone are refused only for a module whose entry held
		// none tflock can check.
		if c.Kind == lockfile.HashesChanged && c.Module != "" {
			fmt.Fprintf(&b, "%s: the lock file records no h1: or zh: hash of it, so nothing in it could be verified; to record its hashes, %s", c.Subject(), w.Remedy(Remedy{Kind: RemedyWritable, Module: c.Module, Modules: true}))
			continue
		}
		// Another subdirectory of the same package: what the location
		// names now, what the lock file records.
		if c.Kind == lockfile.Repinned && c.OldPin.Subdir != c.NewPin.Subdir && c.OldVersion == c.NewVersion {
			fmt.Fprintf(&b, "%s: its location names the subdirectory %s of the package, but the lock file records %s", c.Subject(), subdirText(c.NewPin.Subdir), subdirText(c.OldPin.Subdir))
			continue
		}
		b.WriteString(c.String())
	}
	return b.String()
}

// pinProblem says that a module call's source pins another ref, tag or
// digest than its lock entry records: `module "net": the configuration
// asks for ref v1.1.0, but the lock file records ref v1.0.0`. asked holds
// the ref, tag or digest as the configuration writes it ([resolve.WrittenPin]);
// locked is the lock entry's.
func pinProblem(call string, asked, locked lockfile.ModulePin) string {
	var want, have string
	switch {
	case asked.Ref != "":
		want = "ref " + asked.Ref
	case asked.Tag != "":
		want = "tag " + asked.Tag
	case asked.Digest != "":
		want = "digest " + asked.Digest
	default:
		want = "no ref, tag or digest"
	}
	switch {
	case locked.Ref != "":
		have = "ref " + locked.Ref
	case locked.Tag != "":
		have = "tag " + locked.Tag
	case asked.Digest != "" && locked.Digest != "":
		have = "digest " + locked.Digest
	default:
		have = "no ref or tag"
	}
	return fmt.Sprintf("module %q: the configuration asks for %s, but the lock file records %s", call, want, have)
}

// InconsistentLockError is Check's report of requirements that the lock
// file does not satisfy: OpenTofu's "Inconsistent dependency lock file".
//
// errors.As(err, &e) finds it in Check's error.
type InconsistentLockError struct {
	// Problems holds one problem per requirement, sorted by message: its
	// kind, package, call and the range of the requirement in the
	// configuration. Each one's Message is the line printed, such as
	// "provider registry.opentofu.org/hashicorp/aws: required by this
	// configuration but no version is selected".
	Problems []Problem
	// Initial is true when nothing at all is locked yet.
	Initial bool
	// Remedy is what to do: [RemedyInit] when Initial, else
	// [RemedyUpgrade] (each of Problems has its own too).
	Remedy Remedy

	words *Words // Check's words; nil: OpenTofu's
}

// Error lists each inconsistent selection, then the command that fixes them (OpenTofu's
// wording).
func (e *InconsistentLockError) Error() string {
	var b strings.Builder
	b.WriteString("Inconsistent dependency lock file: the following dependency selections recorded in the lock file are inconsistent with the current configuration:")
	for _, p := range e.Problems {
		b.WriteString("\n  - ")
		b.WriteString(p.Message)
	}
	w := e.words.orDefault()
	remedy := e.Remedy
	if remedy.Kind == 0 {
		remedy.Kind = RemedyUpgrade
		if e.Initial {
			remedy.Kind = RemedyInit
		}
	}
	if remedy.Kind == RemedyInit {
		b.WriteString("\n\nTo make the initial dependency selections that will initialize the dependency lock file, ")
	} else {
		b.WriteString("\n\nTo update the locked dependency selections to match a changed configuration, ")
	}
	// OpenTofu's layout: the command on a line of its own.
	switch {
	case w.Render != nil:
		b.WriteString(w.Render(remedy) + ".")
	case remedy.Kind == RemedyInit:
		b.WriteString("run:\n  " + w.Init)
	default:
		b.WriteString("run:\n  " + w.Upgrade)
	}
	return b.String()
}

// PackageMismatchError is Check's report of an installed provider package
// whose contents match none of the checksums recorded in the lock file.
// It wraps a [*hash.MismatchError] (or the error met while hashing). Its
// message is OpenTofu's: "the cached package for ADDRESS VERSION (in
// DIR) does not match any of the checksums recorded in the dependency lock
// file". errors.As finds it in Check's joined error, and, through it, the
// [*hash.MismatchError]; it is also the Err of its [Problem].
type PackageMismatchError struct {
	// Package is the provider package: its address, version and platform.
	Package source.ProviderPackage
	// Dir is the providers directory the package was looked up in
	// (INSTALLDIR/providers), as OpenTofu names it in the message.
	Dir string
	// PackageDir is the installed package directory inside Dir.
	PackageDir string
	// Err is the cause: a [*hash.MismatchError], or the error met while hashing.
	Err error
}

// Error is OpenTofu's message, naming the provider, its version and the directory.
func (e *PackageMismatchError) Error() string {
	return fmt.Sprintf("the cached package for %s %s (in %s) does not match any of the checksums recorded in the dependency lock file", e.Package.Addr, e.Package.Version, e.Dir)
}

// Unwrap returns the cause.
func (e *PackageMismatchError) Unwrap() error { return e.Err }

// NotInstalledError is Check's report of a selected provider that has no
// package installed for the platform. Its message is OpenTofu's: "there is
// no package for ADDRESS VERSION cached in DIR". errors.As finds it in
// Check's joined error; it wraps the cause of the lookup (often an
// [io/fs.ErrNotExist]) and is also the Err of its [Problem].
type NotInstalledError struct {
	// Package is the provider package: its address, version and platform.
	Package source.ProviderPackage
	// Dir is the providers directory (INSTALLDIR/providers).
	Dir string
	// Err is the cause of the lookup, often an [io/fs.ErrNotExist].
	Err error
}

// Error is OpenTofu's message, naming the provider, its version and the directory.
func (e *NotInstalledError) Error() string {
	return fmt.Sprintf("there is no package for %s %s cached in %s", e.Package.Addr, e.Package.Version, e.Dir)
}

// Unwrap returns the cause.
func (e *NotInstalledError) Unwrap() error { return e.Err }

// ModuleNotInstalledError is Check's report of a remote module call with
// no module installed: no record in modules.json, or a record whose
// directory is missing. Its message is tofu's ("Module not installed"),
// after the call; Range is the call's module block. It is the Err of its
// [Problem] (kind [ProblemModuleNotInstalled]).
type ModuleNotInstalledError struct {
	// Call is the module call path.
	Call string
	// Dir is where the module would be installed (INSTALLDIR/modules/CALL).
	Dir string
	// Range is the call's module block in the configuration.
	Range hcl.Range
	// Remedy is what to do: [RemedyInit] for the call.
	Remedy Remedy

	words *Words // Check's words; nil: OpenTofu's
}

// Error names the module call (and where it is declared) and the command that installs it.
func (e *ModuleNotInstalledError) Error() string {
	remedy := e.Remedy
	if remedy.Kind == 0 {
		remedy = Remedy{Kind: RemedyInit, Module: e.Call}
	}
	s := fmt.Sprintf("module %q: Module not installed: This module is not yet installed. %s to install all modules required by this configuration.", e.Call, capitalize(e.words.orDefault().Remedy(remedy)))
	if e.Range.Filename != "" {
		s = fmt.Sprintf("%s:%d,%d: %s", e.Range.Filename, e.Range.Start.Line, e.Range.Start.Column, s)
	}
	return s
}

// ModuleMismatchError is Check's report of an installed module that is not
// the one the lock file locks for its call: Err says how (its package's
// h1:, the subdirectory it was installed from, its version or commit). It
// is the Err of its [Problem] (kind [ProblemModuleMismatch]).
type ModuleMismatchError struct {
	// Call is the module call path.
	Call string
	// Dir is the installed package directory (INSTALLDIR/modules/CALL).
	Dir string
	// Err says how the installed module differs from the lock.
	Err error
}

// Error names the module call and the directory, and says how it differs.
func (e *ModuleMismatchError) Error() string {
	return fmt.Sprintf("module %q: the module installed in %s does not match the dependency lock file: %v", e.Call, e.Dir, e.Err)
}

// Unwrap returns the cause.
func (e *ModuleMismatchError) Unwrap() error { return e.Err }

// ErrVersionNotAllowed is matched (errors.Is) by the [*OptionError] of a
// [LockProvider] call whose version its constraints do not allow.
var ErrVersionNotAllowed = errors.New("the version constraints do not allow the version")

// OptionError reports an option of [LockProvider] or [LockModule] that
// cannot be used, found before anything is fetched: a required option
// missing, a malformed version constraint (Err is then the
// *[versions.ConstraintError]), a version the constraints do not allow
// (Err is [ErrVersionNotAllowed]), an invalid module call path, a local
// module source.
type OptionError struct {
	// Option names the option, such as "LockProviderOptions.Constraints".
	Option string
	// Msg says what is wrong, naming the provider or module call.
	Msg string
	// Err is the underlying error, or nil.
	Err error
}

// Error names the option and says what is wrong.
func (e *OptionError) Error() string { return "install: " + e.Option + ": " + e.Msg }

// Unwrap returns Err.
func (e *OptionError) Unwrap() error { return e.Err }

// capitalize returns s with its first letter upper-case, for a remedy
// that begins a sentence.
func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
