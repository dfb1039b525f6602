package lockfile

import (
	"cmp"
	"fmt"
	"iter"
	"maps"
	"slices"

	"github.com/hashicorp/hcl/v2"
	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source/address"
)

// File is the typed content of a dependency lock file: provider locks keyed
// by provider address, module locks keyed by module call path, the header
// flavour, and (after a lenient parse) any blocks this package does not know.
//
// The zero value is not usable; make a File with [New] or one of the parse
// functions. A File is not safe for concurrent mutation.
type File struct {
	header    Header
	providers map[tfaddr.Provider]*ProviderLock
	modules   map[string]*ModuleLock
	bySource  []*ModuleLock // locks keyed by source address (RFC PR #3540), no Path
	bound     []*ModuleLock // such locks already given to calls: not written
	unknown   []Unknown
	warnings  hcl.Diagnostics
}

// ProviderLock is the lock of one provider: the version selected, the
// constraints it was selected under, and the checksums of its packages.
type ProviderLock struct {
	// Addr is the fully-qualified provider address, such as
	// registry.opentofu.org/hashicorp/aws.
	Addr tfaddr.Provider
	// Version is the exact version selected.
	Version versions.Version
	// Constraints is the version constraint string in the normalized form
	// OpenTofu writes (see [versions.Constraints.String]), or "" for none.
	Constraints string
	// Hashes are the accepted package checksums. The writer sorts and
	// de-duplicates them; a parsed lock has them sorted and unique.
	Hashes []hash.Hash
	// Unknown holds arguments and nested blocks this package does not know,
	// kept by a lenient parse so that they are written back.
	Unknown []Unknown
}

// ModuleLock is the lock of one module call: the package it resolved to, the
// version selected (if the module is versioned), and checksums of its
// contents.
type ModuleLock struct {
	// Path is the module call path: call names from the root module joined
	// with dots, such as "vpc" or "vpc.nested".
	Path string
	// Source is the canonical package address: a registry address with its
	// host spelled out, a git URL without its ref, or an OCI repository
	// without tag or digest; a "//subdir" suffix is kept. [ModuleLock.Address]
	// returns it typed.
	Source string
	// Subdir is the subdirectory of the package that the package's
	// location designated as the module (the "//SUBDIR" of a module
	// registry's download location or of an X-Terraform-Get answer), in
	// canonical form (see address.PackageSubdir in source/address); "" for the package
	// root, which is also what a lock written before tflock recorded it
	// means. The module installed is this directory of the package (then
	// the source's own "//subdir" below it): a location that names another
	// is a changed requirement, which this lock does not satisfy.
	Subdir string
	// Version is the exact version selected; the zero Version for a module
	// pinned only by a git ref or an OCI digest.
	Version versions.Version
	// Ref is the "ref" argument of the call's git source exactly as the
	// configuration writes it (a branch, a tag or a commit), or "" when the
	// source has none. It is part of what the call asks for: a call whose
	// source names another ref is a changed requirement, which this lock
	// does not satisfy.
	Ref string
	// Tag is the "tag" argument of the call's OCI source exactly as the
	// configuration writes it, or "" when the source has none (it selects
	// a digest, a version constraint or the implied "latest"). Like Ref, it
	// is part of what the call asks for. A call pinned by "digest" is
	// satisfied only by a lock whose Digest is that digest.
	Tag string
	// Constraints is the module-dialect version constraint string in
	// normalized form, or "" for none.
	Constraints string
	// Hashes are the accepted checksums of the module package; sorted and
	// unique after parsing.
	Hashes []hash.Hash
	// Commit is the full 40-digit lower-case hexadecimal git commit the
	// module was fetched at, or "" for non-git modules.
	Commit string
	// Digest is the OCI manifest digest ("sha256:" and 64 lower-case hex
	// digits) the module was fetched at, or "" for non-OCI modules.
	Digest string
	// Unknown holds arguments and nested blocks this package does not know,
	// kept by a lenient parse.
	Unknown []Unknown

	// addr is Source typed, as the reader parsed it from addrOf (see
	// [ModuleLock.Address]); nil for a lock a program built.
	addr   address.ModuleSource
	addrOf string
}

// Address returns Source typed: its kind (registry, git, OCI, HTTP
// archive, ...), its package address and the source's own "//subdir".
// The reader parses Source once, when it reads the file; a lock a program
// built, or whose Source it changed since, has Source parsed now (a
// registry address without a host is on [address.DefaultRegistryHost]).
// It returns an error for a Source that is not a module package address.
func (m *ModuleLock) Address() (address.ModuleSource, error) {
	if m.addr != nil && m.addrOf == m.Source {
		return m.addr, nil
	}
	return parseLockSource(m.Source)
}

// setAddress records addr, the reader's parse of Source.
func (m *ModuleLock) setAddress(addr address.ModuleSource) {
	m.addr, m.addrOf = addr, m.Source
}

// parseLockSource parses src, a lock's Source: a module package address,
// never a local path.
func parseLockSource(src string) (address.ModuleSource, error) {
	addr, err := address.ParseModuleSource(src)
	if err != nil {
		return nil, err
	}
	if _, local := addr.(address.Local); local {
		return nil, fmt.Errorf("module source %q is a local path, which is never locked", src)
	}
	return addr, nil
}

// Unknown is a piece of a lock file that this package does not understand
// (an argument or a block), kept by a lenient parse so that it is never
// silently dropped. Text is its source in canonical layout.
type Unknown struct {
	// Name is the argument name or the block type.
	Name string
	// Block is true for a block and false for an argument.
	Block bool
	// Text is the source: for an argument its expression only, for a block
	// the whole block (type, labels and body), formatted canonically.
	Text string
}

// Header is the flavour of the two comment lines that open a lock file.
type Header int

const (
	// HeaderTofu is the header OpenTofu writes:
	//
	//	# This file is maintained automatically by "tofu init".
	//	# Manual edits may be lost in future updates.
	HeaderTofu Header = iota
	// HeaderTerraform is the header Terraform writes, with "terraform init".
	HeaderTerraform
)

// New returns an empty lock file with the OpenTofu header.
func New() *File {
	return &File{
		providers: make(map[tfaddr.Provider]*ProviderLock),
		modules:   make(map[string]*ModuleLock),
	}
}

func (f *File) init() {
	if f.providers == nil {
		f.providers = make(map[tfaddr.Provider]*ProviderLock)
	}
	if f.modules == nil {
		f.modules = make(map[string]*ModuleLock)
	}
}

// Header returns the header flavour the canonical writer will use. For a
// parsed file it is the flavour of the file's own header ([HeaderTofu] unless
// the file had Terraform's standard header).
func (f *File) Header() Header { return f.header }

// SetHeader chooses the header flavour the canonical writer uses.
func (f *File) SetHeader(h Header) { f.header = h }

// Provider returns the lock for the given provider, or nil if there is none.
// The result is the stored lock: changes to it change the file.
func (f *File) Provider(addr tfaddr.Provider) *ProviderLock {
	return f.providers[addr]
}

// ProviderHashes returns the hashes locked for the given provider, or nil if
// the provider is not locked, so it is safe to call for a new provider.
func (f *File) ProviderHashes(addr tfaddr.Provider) []hash.Hash {
	if p := f.providers[addr]; p != nil {
		return p.Hashes
	}
	return nil
}

// SetProvider adds or replaces the lock for lock.Addr. The file keeps the
// given pointer; its hashes are sorted and de-duplicated. It refuses, with
// a *[LockError] saying why and the file unchanged, a lock that the parser
// would refuse once written (a hash a lenient parse kept in the lock it
// replaces may stay).
func (f *File) SetProvider(lock *ProviderLock) error {
	if err := checkProvider(lock, f.ProviderHashes(lock.Addr)); err != nil {
		return err
	}
	f.init()
	lock.Hashes = normalizeHashes(lock.Hashes)
	f.providers[lock.Addr] = lock
	return nil
}

// RemoveProvider removes the lock for the given provider, if any, and
// reports whether there was one.
func (f *File) RemoveProvider(addr tfaddr.Provider) bool {
	_, ok := f.providers[addr]
	delete(f.providers, addr)
	return ok
}

// AddProviderHashes adds hashes to the lock of the given provider with set
// semantics (the result is sorted and unique) and reports whether the set
// grew. It does nothing and returns false if the provider is not locked.
// It refuses a hash the parser would refuse (such as "zh:bad"), with a
// *[LockError] saying why, adding none of hs.
func (f *File) AddProviderHashes(addr tfaddr.Provider, hs ...hash.Hash) (bool, error) {
	p := f.providers[addr]
	if p == nil {
		return false, nil
	}
	grown := *p
	grown.Hashes = normalizeHashes(append(slices.Clone(p.Hashes), hs...))
	if err := checkProvider(&grown, p.Hashes); err != nil {
		return false, err
	}
	n := len(p.Hashes)
	p.Hashes = grown.Hashes
	return len(p.Hashes) != n, nil
}

// Providers returns the provider locks sorted by address (hostname, then
// namespace, then type), the order the writer uses. The order is fixed when
// iteration starts; a lock removed during iteration is skipped.
func (f *File) Providers() iter.Seq[*ProviderLock] {
	return func(yield func(*ProviderLock) bool) {
		for _, k := range slices.SortedFunc(maps.Keys(f.providers), compareProviders) {
			if p := f.providers[k]; p != nil && !yield(p) {
				return
			}
		}
	}
}

// Module returns the lock for the given module call path, or nil if there is
// none. The result is the stored lock: changes to it change the file.
func (f *File) Module(path string) *ModuleLock {
	return f.modules[path]
}

// ModuleHashes returns the hashes locked for the given module call path, or
// nil if it is not locked.
func (f *File) ModuleHashes(path string) []hash.Hash {
	if m := f.modules[path]; m != nil {
		return m.Hashes
	}
	return nil
}

// SetModule adds or replaces the lock for lock.Path. The file keeps the given
// pointer; its hashes are sorted and de-duplicated. It refuses, with a
// *[LockError] saying why and the file unchanged, a lock that the parser
// would refuse once written (a hash a lenient parse kept in the lock it
// replaces may stay). It reads lock.Source typed, as the reader does (see
// [ModuleLock.Address]).
func (f *File) SetModule(lock *ModuleLock) error {
	if err := checkModule(lock, f.ModuleHashes(lock.Path)); err != nil {
		return err
	}
	f.init()
	lock.Hashes = normalizeHashes(lock.Hashes)
	if lock.addr == nil || lock.addrOf != lock.Source {
		// Read once here, as the reader does: Address need not parse it.
		addr, _ := parseLockSource(lock.Source)
		lock.setAddress(addr)
	}
	f.modules[lock.Path] = lock
	return nil
}

// RemoveModule removes the lock for the given call path, if any, and reports
// whether there was one.
func (f *File) RemoveModule(path string) bool {
	_, ok := f.modules[path]
	delete(f.modules, path)
	return ok
}

// AddModuleHashes adds hashes to the lock of the given module call with set
// semantics and reports whether the set grew. It does nothing and returns
// false if the module is not locked. It refuses a hash the parser would
// refuse, with a *[LockError] saying why, adding none of hs.
func (f *File) AddModuleHashes(path string, hs ...hash.Hash) (bool, error) {
	m := f.modules[path]
	if m == nil {
		return false, nil
	}
	grown := *m
	grown.Hashes = normalizeHashes(append(slices.Clone(m.Hashes), hs...))
	if err := checkModule(&grown, m.Hashes); err != nil {
		return false, err
	}
	n := len(m.Hashes)
	m.Hashes = grown.Hashes
	return len(m.Hashes) != n, nil
}

// Modules returns the module locks sorted by call path, the order the writer
// uses. The order is fixed when iteration starts; a lock removed during
// iteration is skipped.
func (f *File) Modules() iter.Seq[*ModuleLock] {
	return func(yield func(*ModuleLock) bool) {
		for _, k := range slices.Sorted(maps.Keys(f.modules)) {
			if m := f.modules[k]; m != nil && !yield(m) {
				return
			}
		}
	}
}

// Unknown returns the top-level blocks and arguments of unknown type kept by
// a lenient parse, in source order. The writer emits them after the module
// blocks.
func (f *File) Unknown() []Unknown { return slices.Clone(f.unknown) }

// Clone returns a deep copy of the file.
func (f *File) Clone() *File {
	c := New()
	c.header = f.header
	c.unknown = slices.Clone(f.unknown)
	for _, m := range f.bySource {
		c.bySource = append(c.bySource, m.clone())
	}
	for _, m := range f.bound {
		c.bound = append(c.bound, m.clone())
	}
	c.warnings = slices.Clone(f.warnings)
	for k, p := range f.providers {
		c.providers[k] = p.clone()
	}
	for k, m := range f.modules {
		c.modules[k] = m.clone()
	}
	return c
}

func (p *ProviderLock) clone() *ProviderLock {
	c := *p
	c.Hashes = slices.Clone(p.Hashes)
	c.Unknown = slices.Clone(p.Unknown)
	return &c
}

func (m *ModuleLock) clone() *ModuleLock {
	c := *m
	c.Hashes = slices.Clone(m.Hashes)
	c.Unknown = slices.Clone(m.Unknown)
	return &c
}

// compareProviders orders provider addresses as OpenTofu's writer does:
// by hostname, then namespace, then type.
func compareProviders(a, b tfaddr.Provider) int {
	if c := cmp.Compare(string(a.Hostname), string(b.Hostname)); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Namespace, b.Namespace); c != 0 {
		return c
	}
	return cmp.Compare(a.Type, b.Type)
}

// sortedHashes returns hs sorted by string form and without duplicates,
// leaving hs as it was: hs itself if it is so already (as every lock the
// package stores is), else a sorted copy. The writers use it: rendering a
// file must not change it, even a lock whose hashes were set through its
// pointer.
func sortedHashes(hs []hash.Hash) []hash.Hash {
	for i := 1; i < len(hs); i++ {
		if hs[i-1] >= hs[i] {
			return normalizeHashes(slices.Clone(hs))
		}
	}
	return hs
}

// normalizeHashes sorts hashes by their string form and removes duplicates.
func normalizeHashes(hs []hash.Hash) []hash.Hash {
	if len(hs) == 0 {
		return nil
	}
	slices.Sort(hs)
	return slices.Compact(hs)
}
