package install

import (
	"fmt"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/source"
)

// RemedyKind says what a [Remedy] asks the user to do.
type RemedyKind int

// The kinds of [Remedy]. New kinds may be added.
const (
	// RemedyInit: run init ([Words.Init]) to select, lock or install
	// what is missing.
	RemedyInit RemedyKind = iota + 1
	// RemedyUpgrade: run init with upgrade ([Words.Upgrade]) to select a
	// version that the changed constraints allow.
	RemedyUpgrade
	// RemedyWritable: run init again without the read-only lock file
	// ([Words.ReadOnly]) to record the changes.
	RemedyWritable
	// RemedyEditSource: the ref or tag of a module call that tflock
	// manages names another version than the locked one ([Remedy.Version]):
	// run init to rewrite it, or edit it by hand.
	RemedyEditSource
	// RemedyRelock: the package served is not the one the lock file
	// recorded: only if its publisher confirms the change, remove its
	// entry from the lock file and run init again.
	RemedyRelock
	// RemedyLockPlatforms: record the checksums of other platforms
	// ([Words.ProvidersLock] with -platform).
	RemedyLockPlatforms
)

var remedyKindNames = [...]string{
	RemedyInit:          "init",
	RemedyUpgrade:       "upgrade",
	RemedyWritable:      "run writable",
	RemedyEditSource:    "edit source",
	RemedyRelock:        "relock",
	RemedyLockPlatforms: "lock platforms",
}

// String returns a short lower-case name for the kind.
func (k RemedyKind) String() string {
	if k > 0 && int(k) < len(remedyKindNames) {
		return remedyKindNames[k]
	}
	return "unknown remedy"
}

// Remedy is what an error, a [Problem] or a warning advises, as data:
// what to do, and to which provider or module call. [Words.Remedy]
// renders it in the program's words; a program that speaks differently
// renders it itself.
type Remedy struct {
	// Kind is what to do.
	Kind RemedyKind
	// Provider is the provider concerned, or the zero address.
	Provider tfaddr.Provider
	// Module is the module call path concerned, or "".
	Module string
	// Version is the locked version a [RemedyEditSource] asks the
	// source to name, else "".
	Version string
	// Modules is true when the remedy needs what stock tofu and
	// terraform do not do: lock modules, rewrite a managed ref or tag.
	// [Words.Remedy] then names [Words.Locker] in place of [Words.Init].
	Modules bool
}

// Words are the names a program embedding tflock gives itself and its
// commands, for the remedies ([Remedy]) and notes of Init, Check and
// [WriteLock]. [WordsFor] gives OpenTofu's ("tofu init") and Terraform's
// ("terraform init"); a wrapper sets its own in [Options.Words], where a
// field left empty is the flavour's.
type Words struct {
	// Program is the program's name in notes: "OpenTofu".
	Program string
	// Init is the command that selects, locks and installs the
	// dependencies: "tofu init".
	Init string
	// Upgrade is the command that selects new versions: "tofu init
	// -upgrade".
	Upgrade string
	// ReadOnly is how the user asks for a read-only lock file, as it
	// follows "without": `the "-lockfile=readonly" flag`.
	ReadOnly string
	// ProvidersLock is the command that records the checksums of other
	// platforms: "tofu providers lock".
	ProvidersLock string
	// Locker is the command of the program that embeds tflock, for the
	// remedies only it carries out ([Remedy.Modules]): locking modules,
	// rewriting a managed ref or tag. Default "tflock"; a wrapper whose
	// init is tflock's Init names it here too ("terragrunt init").
	Locker string
	// Render, when set, renders every remedy in place of the sentences
	// built from the fields above.
	Render func(Remedy) string
}

// WordsFor returns the words of a flavour's program: Terraform's for
// [FlavorTerraform], OpenTofu's otherwise.
func WordsFor(f Flavor) Words {
	if f == FlavorTerraform {
		return Words{
			Program:       "Terraform",
			Init:          "terraform init",
			Upgrade:       "terraform init -upgrade",
			ReadOnly:      `the "-lockfile=readonly" flag`,
			ProvidersLock: "terraform providers lock",
			Locker:        "tflock",
		}
	}
	return Words{
		Program:       "OpenTofu",
		Init:          "tofu init",
		Upgrade:       "tofu init -upgrade",
		ReadOnly:      `the "-lockfile=readonly" flag`,
		ProvidersLock: "tofu providers lock",
		Locker:        "tflock",
	}
}

// overriddenBy returns w with the fields that o sets replaced by o's.
func (w Words) overriddenBy(o Words) Words {
	for _, f := range []struct {
		dst *string
		src string
	}{
		{&w.Program, o.Program}, {&w.Init, o.Init}, {&w.Upgrade, o.Upgrade},
		{&w.ReadOnly, o.ReadOnly}, {&w.ProvidersLock, o.ProvidersLock}, {&w.Locker, o.Locker},
	} {
		if f.src != "" {
			*f.dst = f.src
		}
	}
	if o.Render != nil {
		w.Render = o.Render
	}
	return w
}

// orDefault returns *w, or OpenTofu's words when w is nil (an error
// made by its caller rather than by Init or Check).
func (w *Words) orDefault() Words {
	if w == nil {
		return WordsFor(FlavorOpenTofu)
	}
	return *w
}

// Remedy renders a remedy as a sentence that follows a full stop or a
// colon, without a final full stop: for OpenTofu's words, RemedyWritable
// is `run "tofu init" without the "-lockfile=readonly" flag`.
func (w Words) Remedy(r Remedy) string {
	if w.Render != nil {
		return w.Render(r)
	}
	init := w.Init
	if r.Modules || r.Kind == RemedyEditSource {
		init = w.Locker
	}
	switch r.Kind {
	case RemedyInit:
		return fmt.Sprintf("run %q", init)
	case RemedyUpgrade:
		if r.Modules {
			return fmt.Sprintf("run %q with upgrade", init)
		}
		return fmt.Sprintf("run %q", w.Upgrade)
	case RemedyWritable:
		return fmt.Sprintf("run %q without %s", init, w.ReadOnly)
	case RemedyEditSource:
		return fmt.Sprintf("run %q to rewrite it, or edit it by hand to name version %s's tag", init, r.Version)
	case RemedyRelock:
		return fmt.Sprintf("only if the publisher confirms the change, remove %s from the lock file and run %q again to record the new checksums", remedySubject(r), w.Init)
	case RemedyLockPlatforms:
		return fmt.Sprintf("run %q with -platform for each other platform", w.ProvidersLock)
	}
	return ""
}

// remedyFor is the remedy of a kind for a package: its provider's
// address, or the module call (a module's lock is tflock's:
// [Remedy.Modules]).
func remedyFor(kind RemedyKind, pkg source.Package, call string) Remedy {
	r := Remedy{Kind: kind, Module: call, Modules: call != ""}
	switch p := pkg.(type) {
	case source.ProviderPackage:
		r.Provider = p.Addr
	case source.ModulePackage:
		if !p.Version.IsZero() && kind == RemedyEditSource {
			r.Version = p.Version.String()
		}
	}
	return r
}

// remedySubject names what a remedy is about, as a lock file entry.
func remedySubject(r Remedy) string {
	if r.Module != "" {
		return fmt.Sprintf("the module %q block", r.Module)
	}
	return "the entry of this provider"
}
