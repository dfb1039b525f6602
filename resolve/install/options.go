package install

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/internal/provaddr"
	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/config"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/address"
	"github.com/tflock/tflock/source/cache"
)

// LockFileName is the name of the dependency lock file in a configuration
// directory.
const LockFileName = ".terraform.lock.hcl"

// Options configure [Init]. Source is the only field without a useful
// default.
type Options struct {
	// Dir is the root module's directory. Default ".".
	Dir string
	// FS, when set, holds the root module's configuration (and the local
	// modules it calls, within FS): it is read from FS's root instead of
	// Dir. Dir still places the lock file, the install directory and the
	// paths modules.json records. Default nil: read Dir.
	FS fs.FS
	// Config, when set, is the root module tree the caller already read
	// ([config.ReadTree] or [config.ReadTreeFS]); nothing is read for
	// the root module, and Dir is used as with FS. It takes precedence
	// over FS. Init does not change it.
	Config *config.Config
	// Resolve are the solver's settings, which Init hands to
	// [resolve.Resolve] (each of its calls, in one place), with these
	// fields changed: Lock (nil reads the lock file; what the solver gets
	// is that file as it applies to the configuration), DefaultHost (a
	// default per flavour, and also the host of the configuration's
	// sources), Concurrency (a default, and a bound on every lookup),
	// TranslatePredecessor (decided by Flavor), UpgradeCommand (set from
	// Words: a value given here is not used) and ProviderPicked (called
	// before Init's own use of it). The other fields reach the solver as
	// they are. [Check] has its own options ([CheckOptions]; see
	// [Options.ForCheck]).
	//
	// Lock is the previous lock file. Nil (unlike Resolve's "no lock
	// file"): DIR/.terraform.lock.hcl is read leniently, as tofu reads it
	// (a missing file is an empty lock file; malformed hashes and unknown
	// blocks are kept, with warnings in [Result.Warnings]); to start from
	// no lock file, pass [lockfile.New]. Init never changes it; what it
	// hands the solver is this file as it applies to the configuration
	// (its module entries keyed by source bound to their calls, and the
	// calls it lacks that the previous install holds kept at their
	// installed version: see "Living beside tofu and terraform" in the
	// package doc).
	//
	// Upgrade (tofu's -upgrade), UpgradeProviders and UpgradeModules
	// ignore the locked versions of every package, of these providers
	// only, or of these module calls and the calls nested in them.
	// UnifyModules makes every call of the same module source share one
	// version, chosen against the constraints of all of them, as the
	// lock file of the module-locking RFC (one entry per source) needs:
	// constraints that cannot be met together fail Init with a
	// [*resolve.ConflictError] naming each call's file and line. Default:
	// each call is resolved on its own constraint, as tofu does.
	//
	// DevOverrides are providers served from local directories (see
	// [github.com/tflock/tflock/source/assemble.Sources.DevOverrides]):
	// never looked up, installed or locked.
	// Reattach is the value of TF_REATTACH_PROVIDERS (Init does not read
	// the environment): as in tofu, those providers are running already
	// and unmanaged: never looked up, fetched or installed, and their
	// lock entries are left as they are; Check neither requires nor
	// checks them, as for DevOverrides. An invalid value fails Init and
	// Check with a [*resolve.ReattachError].
	//
	// DefaultHost is the registry host of every address without one that
	// Init and Check read: the configuration's provider and module sources
	// and Reattach's keys (not only Reattach's, as for Resolve alone).
	// Default [address.DefaultRegistryHost], or [TerraformRegistryHost]
	// when Flavor is [FlavorTerraform].
	//
	// Concurrency bounds every lookup running at once (version lists,
	// checksums, module fetches), which mostly wait on the network, and
	// not only the listings. If less than or equal to 0, a default
	// (currently 64) is used. Provider package downloads, which also
	// extract and hash, are bounded by the smaller of Concurrency and
	// [Options.DownloadConcurrency].
	//
	// TranslatePredecessor is decided by Flavor: Init carries the locked
	// versions of Terraform's hashicorp providers over to OpenTofu's
	// unless [FlavorTerraform] is asked for (see [Init]). A false value
	// does not turn it off (ask for FlavorTerraform); true with
	// FlavorTerraform contradicts the flavour and is refused with a
	// [*OptionsError].
	//
	// ProviderPicked, if set, is called as Resolve calls it, with each
	// provider's pick as soon as that provider's versions are known. Init
	// keeps its own use of the hook: in ProvidersLock mode it asks for
	// each provider's checksums as soon as its pick is known, after the
	// caller's function returns. Check resolves nothing and never calls
	// it.
	Resolve resolve.Options
	// Source lists and fetches every package: providers, registry modules
	// and remote modules: usually the Dispatch
	// ([github.com/tflock/tflock/source/assemble.Dispatch]) of
	// assemble.NewSources, which routes each kind to its own source.
	// Init memoizes its listings for the run; a source shared by several
	// runs shares them across runs when it remembers them: that Dispatch
	// does by default (its Remember); wrap another in
	// [source.MemoizeFor]. Required.
	Source source.Source
	// Cache is the package cache every fetch goes through; it may be shared
	// by many configurations and processes. Default: a temporary cache
	// removed when Init returns (so nothing is reused across runs).
	Cache *cache.Cache
	// InstallDir is where packages are installed: providers under
	// INSTALLDIR/providers and modules under INSTALLDIR/modules, as tofu
	// lays them out. Default Dir/.terraform.
	InstallDir string
	// PluginCacheDir is a shared provider directory in tofu's layout
	// (plugin_cache_dir): providers are installed there and linked from
	// INSTALLDIR/providers, as tofu does. Default "": none, packages are
	// copied into INSTALLDIR/providers.
	PluginCacheDir string
	// Platform is the platform whose provider packages are installed.
	// Default [source.CurrentPlatform].
	Platform source.Platform
	// ProvidersLock records the hashes of every platform in Platforms
	// without installing anything, as "tofu providers lock" does. Default
	// false: init, which installs for Platform.
	ProvidersLock bool
	// Platforms are the platforms ProvidersLock records. Default: Platform.
	Platforms []source.Platform
	// Reverify hashes again every installed package and every cache entry
	// this call uses, instead of trusting those whose files are, by their
	// metadata, the files verified when they entered the cache (see
	// package source/cache, "Damage", for what that trust covers and what
	// it does not). Default false.
	Reverify bool
	// ReadOnly refuses to change the dependency selections (tofu's
	// -lockfile=readonly): Init fails with a [*LockChangedError] if a
	// version, constraint or pin would change, and only warns when hashes
	// alone would be added. A constraint the locked version no longer
	// meets is not a change Init could make: it fails, as without
	// ReadOnly and as in OpenTofu, with a [*resolve.LockedMismatchError]
	// (joined with any other such error; find it with errors.As). A lock file that records no module at all
	// (written by tofu, say) has not adopted module locking: its module
	// calls are installed as their constraints allow, with one
	// [ModulesNotLockedWarning], and not locked; once the lock file has a
	// module block, a call it lacks is a change refused. Default false.
	ReadOnly bool
	// KeepManagedRefs stops Init from rewriting the git "ref" or OCI
	// "tag" argument of module calls constrained by a tflock annotation
	// comment ([config.AnnotationPrefix]) in the configuration's files.
	// By default (false) Init writes the selected version's tag there,
	// in place, before the packages are installed, so that a stock tofu or
	// terraform installs the locked version; with KeepManagedRefs, a ref
	// that differs from the selection is a warning. Read-only runs never
	// rewrite: such a ref fails them with a [*ManagedRefError].
	KeepManagedRefs bool
	// RewriteProtectedFiles lets the rewrite of managed sources (see
	// KeepManagedRefs) write the files it otherwise leaves alone, with a
	// warning naming the file and the source to write there by hand: a
	// file without any write permission bit, a symbolic link or a file
	// reached through one (set, the link's target is replaced and the
	// link kept), a file with more than one hard link (set, it is
	// written over in place, not atomically, so that every link sees
	// the change), and a file outside the root module's directory (a
	// local module "../shared", shared by other configurations). Default
	// false: the rewrite touches only the root module's own files.
	RewriteProtectedFiles bool
	// Requirements are extra requirements, such as the providers a state
	// still uses ([config.StateRequirements]). Default none.
	Requirements []resolve.Requirement
	// StateFile is a state file, such as the local backend's
	// DIR/terraform.tfstate: every provider its resources use stays
	// required, and locked, after the configuration stops naming it, as
	// tofu keeps it (see [config.ReadStateFile]). A missing file is no
	// state yet; an unreadable one fails Init with a [*config.StateError]
	// naming it. Default "": no state is read.
	StateFile string
	// Variables are the root module's input variable values (-var,
	// -var-file) for the early evaluation of module sources and
	// versions; the zero value reads terraform.tfvars, *.auto.tfvars and
	// TF_VAR_* as OpenTofu does. See [config.Variables].
	Variables config.Variables
	// DownloadConcurrency bounds the provider packages downloaded,
	// extracted and hashed at once, never more than Resolve.Concurrency.
	// If less than or equal to 0, a default of 64 (or 4 per CPU,
	// runtime.GOMAXPROCS, if more) is used, which Resolve.Concurrency's
	// default also allows: sized for the network's latency rather than
	// the CPUs, since a download mostly waits, and a package is hashed as
	// it is read (memory does not grow with its size: a few MiB of buffers
	// for a large package, a small archive in memory within a budget for
	// the whole process). A providers lock of 50 providers for 4
	// platforms waits 200 downloads: about 3 round trips at 64, 6 at 32.
	DownloadConcurrency int
	// Events receives progress reports. Default nil: discarded. It also
	// receives the package cache's hits and waits this run causes, each
	// with the run's unit ([source.WithUnit]), whatever handler the cache
	// was opened with: a cache shared by many runs needs none for them
	// (one that has the same handler gets those events twice).
	Events source.Events
	// Flavor is the tool whose lock files this run writes like: its
	// header and its default registry host. Default [FlavorAuto]: the
	// previous lock file's flavour (Terraform's when it has Terraform's
	// header), OpenTofu's for a new file. The hashes recorded do not
	// depend on it: Init follows OpenTofu's rule (see [Init]). Both tools
	// record the same from a registry other than registry.opentofu.org;
	// from that one, terraform, which ignores OpenTofu's packages field
	// and records signed hashes only, records fewer, and keeps a file with
	// tofu's hashes unchanged (the interop suite checks it).
	Flavor Flavor
	// Header is kept for compatibility: [lockfile.HeaderTerraform] with
	// FlavorAuto asks for [FlavorTerraform]. The zero value asks nothing.
	//
	// Deprecated: use Flavor.
	Header lockfile.Header
	// Words are the program's name and commands in the remedies of
	// errors, problems and warnings, and in [WriteLock]'s notes (see
	// [Remedy]). Default nil: the flavour's ([WordsFor]), "tofu init"
	// or "terraform init"; a field left empty is the flavour's.
	Words *Words
}

// Flavor is the tool a lock file is written for.
type Flavor int

const (
	// FlavorAuto keeps the previous lock file's flavour (its header;
	// provider addresses without a host are still read as OpenTofu's, as
	// tofu reads them); a new file is OpenTofu's. tofu 1.12 itself
	// rewrites a Terraform file with its own header; tflock keeps the file
	// as its owner wrote it unless asked (see the README, "Where tflock
	// differs").
	FlavorAuto Flavor = iota
	// FlavorOpenTofu writes OpenTofu's header ("tofu init") and reads
	// provider addresses without a host as registry.opentofu.org.
	FlavorOpenTofu
	// FlavorTerraform writes Terraform's header ("terraform init") and
	// reads provider addresses without a host as registry.terraform.io.
	// Unlike the other flavours, it does not carry the locked versions of
	// the hashicorp providers of Terraform's registry over to OpenTofu's
	// (see [Init]), as Terraform does not.
	FlavorTerraform
)

// String returns "auto", "opentofu" or "terraform".
func (f Flavor) String() string {
	switch f {
	case FlavorOpenTofu:
		return "opentofu"
	case FlavorTerraform:
		return "terraform"
	}
	return "auto"
}

// ParseFlavor reads "opentofu", "terraform" or "auto" (or "").
func ParseFlavor(s string) (Flavor, error) {
	switch s {
	case "", "auto":
		return FlavorAuto, nil
	case "opentofu", "tofu":
		return FlavorOpenTofu, nil
	case "terraform":
		return FlavorTerraform, nil
	}
	return FlavorAuto, fmt.Errorf("unknown lock file flavour %q: want opentofu or terraform", s)
}

// TerraformRegistryHost is the registry of provider addresses without a
// host under [FlavorTerraform].
const TerraformRegistryHost = provaddr.TerraformRegistryHost

const defaultConcurrency = 64

// ProviderResult is one provider package Init fetched (or found in the
// cache), and installed unless in ProvidersLock mode.
type ProviderResult struct {
	// Package is the provider package: its address, version and platform.
	Package source.ProviderPackage
	// Dir is the installed package directory, or "" in ProvidersLock mode.
	Dir string
	// CacheHit is true when the package came from the cache.
	CacheHit bool
	// Reused is true when the package was already installed (by an earlier
	// run, or by tofu or terraform) and matches the lock file: it was
	// neither fetched nor copied.
	Reused bool

	h1 hash.Hash // the package's h1:, its cache entry's name
}

// ModuleResult is one module of the installed tree.
type ModuleResult struct {
	// Key is the call path: "" for the root module, "vpc", "vpc.subnets".
	Key string
	// Source is the source address as OpenTofu prints it, "" for the root.
	// Like modules.json, which tofu compares with the configuration, it
	// keeps the credentials the configuration writes in it (a URL's user
	// information, a git "sshkey" argument): show it through
	// address.Redact.
	Source string
	// Version is the selected version, if the module has one.
	Version string
	// Dir is the module directory relative to Options.Dir, slash-separated,
	// as modules.json records it.
	Dir string
	// Remote is true for a remote module (installed under the install
	// directory); local modules are read in place.
	Remote bool
	// CacheHit is true when a remote module package came from the cache.
	CacheHit bool
}

// Result is what Init did.
type Result struct {
	// Lock is the new lock file. Init does not write it; see [WriteLock].
	Lock *lockfile.File
	// Flavor is the flavour the lock file was written in (never
	// FlavorAuto after Init).
	Flavor Flavor
	// Words are the words of the run ([Options.Words], or the
	// flavour's): [WriteLock]'s notes speak them.
	Words Words
	// Previous is the lock file Init started from.
	Previous *lockfile.File
	// Changes lists what differs between Previous and Lock.
	Changes []lockfile.Change
	// Selection holds every pick and the reason for it.
	Selection *resolve.Selection
	// Providers are the provider packages fetched, sorted.
	Providers []ProviderResult
	// Modules are the modules of the tree, sorted by key.
	Modules []ModuleResult
	// Listed is how many package version lists were asked of the sources,
	// one per provider or module package ([source.FamilyKey]) however many
	// calls or steps needed it; 0 when the lock file and the cache agreed
	// and no registry was contacted for versions.
	Listed int
	// Downloads is how many packages were fetched from a source rather than
	// found in the cache.
	Downloads int
	// Warnings are messages for the user.
	Warnings []string
	// Rewritten are the module sources Init rewrote in the configuration
	// (see [Options.KeepManagedRefs]), sorted by call path.
	Rewritten []SourceRewrite
}

// Explain writes why each version was picked.
func (r *Result) Explain(w io.Writer) error {
	if r.Selection == nil {
		return nil
	}
	return r.Selection.Explain(w)
}

// settings are the normalized options.
type settings struct {
	Options
	dir       string
	ownCache  string
	platforms []source.Platform
	noDir     bool // no configuration directory (LockProvider, LockModule)
	// reattached are the providers Resolve.Reattach names.
	reattached []tfaddr.Provider
	// words are Options.Words, or the flavour's.
	words Words
	// translate carries the locked versions of the hashicorp providers of
	// Terraform's registry over to OpenTofu's, as tofu does: off only when
	// Terraform's flavour is asked for.
	translate bool
}

func (o Options) normalize() (*settings, error) {
	if o.Source == nil {
		return nil, fmt.Errorf("install: Options.Source is required")
	}
	s, err := o.common()
	if err != nil {
		return nil, err
	}
	s.platforms = []source.Platform{s.Platform}
	if s.ProvidersLock && len(s.Platforms) > 0 {
		s.platforms = s.Platforms
	}
	if s.Resolve.Concurrency <= 0 {
		s.Resolve.Concurrency = defaultConcurrency
	}
	if s.DownloadConcurrency <= 0 {
		s.DownloadConcurrency = max(64, 4*runtime.GOMAXPROCS(0))
	}
	s.DownloadConcurrency = min(s.DownloadConcurrency, s.Resolve.Concurrency)
	if s.Cache == nil {
		dir, err := os.MkdirTemp("", "tflock-cache-")
		if err != nil {
			return nil, fmt.Errorf("install: temporary cache: %w", err)
		}
		// The cache's hits and waits reach s.Events through the run's
		// context (cacheEvents); its other events, directly.
		var events source.Events
		if h := s.Events; h != nil {
			events = source.EventsFunc(func(e source.Event) {
				if !isCacheEvent(e.Kind) {
					h.Event(e)
				}
			})
		}
		c, err := cache.Open(dir, cache.Options{Events: events})
		if err != nil {
			_ = os.RemoveAll(dir)
			return nil, err
		}
		s.Cache, s.ownCache = c, dir
	}
	return s, nil
}

// common is the part of the settings Init and Check share, decided here
// once so that the two never read one configuration differently: the
// directories, the platform, the state's requirements, the lock file
// (read as readLockFile reads it), its flavour and the default registry
// host.
func (o Options) common() (*settings, error) {
	if o.Resolve.TranslatePredecessor && o.Flavor == FlavorTerraform {
		return nil, &OptionsError{Field: "Resolve.TranslatePredecessor", Reason: "Terraform's flavour (FlavorTerraform) does not carry Terraform's hashicorp providers over to OpenTofu's; leave it false, or ask for another flavour"}
	}
	s := &settings{Options: o}
	if s.Dir == "" {
		s.Dir = "."
	}
	s.dir = s.Dir
	if s.InstallDir == "" {
		s.InstallDir = filepath.Join(s.Dir, ".terraform")
	}
	if s.Platform.IsZero() {
		s.Platform = source.CurrentPlatform
	}
	if s.StateFile != "" {
		reqs, err := readState(s.StateFile)
		if err != nil {
			return nil, err
		}
		s.Requirements = slices.Concat(s.Requirements, reqs)
	}
	if s.Resolve.Lock == nil {
		lf, err := readLockFile(s.Dir)
		if err != nil {
			return nil, err
		}
		s.Resolve.Lock = lf
	}
	s.translate = o.Flavor != FlavorTerraform
	if s.Flavor == FlavorAuto {
		s.Flavor = FlavorOpenTofu
		if s.Header == lockfile.HeaderTerraform || s.Resolve.Lock.Header() == lockfile.HeaderTerraform {
			s.Flavor = FlavorTerraform
		}
	}
	s.words = WordsFor(s.Flavor)
	if o.Words != nil {
		s.words = s.words.overriddenBy(*o.Words)
	}
	s.Header = lockfile.HeaderTofu
	if s.Flavor == FlavorTerraform {
		s.Header = lockfile.HeaderTerraform
	}
	s.Resolve.DefaultHost = o.defaultHost()
	if s.Resolve.Reattach != "" {
		ps, err := resolve.ParseReattach(s.Resolve.Reattach, s.Resolve.DefaultHost)
		if err != nil {
			return nil, err
		}
		s.reattached = ps
	}
	return s, nil
}

// defaultHost is the registry host of the addresses without one:
// Resolve.DefaultHost, else OpenTofu's default registry, or Terraform's
// when FlavorTerraform is asked for.
func (o Options) defaultHost() string {
	switch {
	case o.Resolve.DefaultHost != "":
		return o.Resolve.DefaultHost
	case o.Flavor == FlavorTerraform:
		// Asked for, not inherited: a file that only has Terraform's
		// header keeps the host addresses are read with, as tofu reads
		// them (its entries keep their own hosts).
		return TerraformRegistryHost
	}
	return address.DefaultRegistryHost
}

// ReadOptions returns the options [Init] reads the root module tree with
// ([config.ReadTree]): a caller that reads the tree itself, to pass it as
// [Options.Config], reads it as Init would (examples/lock reads it while
// it opens the cache and reads the CLI configuration).
func (o Options) ReadOptions() config.ReadOptions {
	return config.ReadOptions{DefaultHost: o.defaultHost(), Variables: o.Variables}
}

func (s *settings) cleanup() {
	if s.ownCache != "" {
		removeAll(s.ownCache)
	}
}

// removeAll removes a tree, making read-only directories writable first.
func removeAll(dir string) {
	if dir == "" {
		return
	}
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}

// readLockFile reads DIR/.terraform.lock.hcl as Init and Check read it:
// leniently, as tofu reads it (a malformed hash is kept and warned about
// rather than refused, and blocks tflock does not know are kept rather
// than dropped), so that the two never disagree on one file. A missing
// file is an empty lock file.
func readLockFile(dir string) (*lockfile.File, error) {
	return lockfile.ParseOptions{Lenient: true}.ParseFile(filepath.Join(dir, LockFileName))
}
