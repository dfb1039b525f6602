package lockfile

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2"
	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
)

// LockError reports a lock that a setter of [File] ([File.SetProvider],
// [File.SetModule], [File.AddProviderHashes], [File.AddModuleHashes])
// refused because [Parse] would refuse the file the writers make of it:
// a malformed hash, version, constraint, address, call path, commit,
// digest, ref or tag. The file is left unchanged, so that [File.Bytes],
// [WriteFile] and [Patch] never write what the parser refuses.
type LockError struct {
	// Lock names the refused lock: the provider address or the module
	// call path.
	Lock string
	// Diagnostics say why, in the parser's words, without a source range.
	Diagnostics hcl.Diagnostics
}

// Error returns the first reason.
func (e *LockError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "lockfile: refusing the lock of %s", e.Lock)
	for _, d := range e.Diagnostics {
		if d.Severity == hcl.DiagError {
			fmt.Fprintf(&b, ": %s", d.Summary)
			if d.Detail != "" {
				fmt.Fprintf(&b, "; %s", d.Detail)
			}
			break
		}
	}
	return b.String()
}

// checkLock returns a *LockError when the parser would refuse the file the
// writers make of a lock, or nil. The parser is the one judge: put puts
// the lock into an empty file, which is written and parsed back. For the
// strict parse put leaves out the lock's kept unknown items and the kept
// hashes (those a lenient parse kept, already in the file): every other
// value is held to the strict parse; the whole lock then to the lenient
// one, which judges the kept items.
func checkLock(name string, put func(f *File, strict bool)) error {
	var diags hcl.Diagnostics
	for _, strict := range []bool{true, false} {
		f := New()
		put(f, strict)
		back, err := (ParseOptions{Lenient: !strict}).Parse(f.Bytes(), name)
		if err != nil {
			diags = err.(*ParseError).Diagnostics
			break
		}
		// A lock the file would hold otherwise (a string hclwrite
		// rewrites, such as one of invalid UTF-8) would lie once read.
		if !strict && !Equal(back, f) {
			diags = hcl.Diagnostics{{
				Severity: hcl.DiagError,
				Summary:  "Lock not written as it is",
				Detail:   fmt.Sprintf("The lock would read back otherwise from the lock file (%v): one of its strings cannot be written as it is, such as one that is not valid UTF-8.", Changes(f, back)),
			}}
		}
	}
	var errs hcl.Diagnostics
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			c := *d
			c.Subject, c.Context, c.Expression, c.EvalContext = nil, nil, nil, nil
			errs = append(errs, &c)
		}
	}
	if errs == nil {
		return nil
	}
	return &LockError{Lock: name, Diagnostics: errs}
}

// plainProvider reports whether lock is plain: no unknown items, and an
// address, a version, constraints and hashes that the decoder's own
// functions (parseLockedProvider, versions.Parse, versions.ParseConstraints,
// hash.ParseHash) accept as the writer writes them, each of which a string
// literal holds unchanged. The parser accepts such a lock, strictly, so
// checkProvider need not render it and parse it back (checkLock): for a
// providers lock of 50 providers that was a quarter of the process's CPU,
// after the last response. Any other lock is judged by the parser.
//
// Each part's verdict is remembered (judged): a providers lock judges the
// same 50 addresses, versions and constraints when it sets the locks,
// again with their hashes when it adds them, and once more when it writes
// the file, after the last response.
func plainProvider(lock *ProviderLock) bool {
	if len(lock.Unknown) > 0 || !plainHashes(lock.Hashes) {
		return false
	}
	return judged.addrs.judge(lock.Addr, plainAddress) &&
		judged.versions.judge(lock.Version, canonicalVersion) &&
		judged.constraints.judge(lock.Constraints, plainConstraints)
}

// plainAddress reports whether parseLockedProvider accepts the label the
// writer writes for addr, and reads it as addr.
func plainAddress(addr tfaddr.Provider) bool {
	got, diag := parseLockedProvider(addr.String())
	return diag == nil && got == addr
}

// readsBack refuses an address whose label the parser accepts but reads
// as another address (one made by hand, not normalized, such as a host
// "A" that is written "a"): its lock would be stored under one address
// and read back under another.
func readsBack(addr tfaddr.Provider) error {
	got, diag := parseLockedProvider(addr.String())
	if diag != nil || got == addr {
		return nil // the parser's refusal is checkLock's
	}
	return &LockError{Lock: addr.String(), Diagnostics: hcl.Diagnostics{{
		Severity: hcl.DiagError,
		Summary:  "Non-normalized provider source address",
		Detail: fmt.Sprintf("The provider address of host %q, namespace %q and type %q is not normalized: its lock would be written as %q, which reads back as host %q, namespace %q and type %q. Make the address by parsing it, which normalizes it.",
			addr.Hostname, addr.Namespace, addr.Type, addr.String(), got.Hostname, got.Namespace, got.Type),
	}}}
}

// canonicalVersion reports whether decodeVersion accepts v as the writer
// writes it.
func canonicalVersion(v versions.Version) bool {
	s := v.String()
	parsed, err := versions.Parse(s)
	return err == nil && parsed.String() == s
}

// plainConstraints reports whether the decoder accepts constraints as the
// writer writes them (canonically), unchanged.
func plainConstraints(constraints string) bool {
	c := canonicalConstraints(constraints, versions.ParseConstraints)
	if c == "" {
		return true
	}
	parsed, err := versions.ParseConstraints(c)
	return err == nil && parsed.String() == c
}

// plainHashes reports whether every hash of hs is plainHash.
func plainHashes(hs []hash.Hash) bool {
	for _, h := range hs {
		if !judged.hashes.judge(h, plainHash) {
			return false
		}
	}
	return true
}

// plainHash reports whether h is an h1: or zh: hash that hash.ParseHash
// (the decoder's judge of each hash) accepts as it is: such a hash holds
// no character a string literal escapes.
func plainHash(h hash.Hash) bool {
	if s := h.Scheme(); s != hash.SchemeH1 && s != hash.SchemeZH {
		return false
	}
	p, err := hash.ParseHash(string(h))
	return err == nil && p == h
}

// judged holds plainProvider's verdicts on the parts of a lock, each a
// function of its input alone.
var judged struct {
	addrs       verdicts[tfaddr.Provider]
	versions    verdicts[versions.Version]
	constraints verdicts[string]
	hashes      verdicts[hash.Hash]
}

// maxVerdicts bounds each set of verdicts; when full it is emptied.
const maxVerdicts = 1 << 14

// verdicts remembers a predicate's answers; it is safe for concurrent use.
type verdicts[K comparable] struct {
	mu sync.Mutex
	m  map[K]bool
}

// judge returns judge(k), remembered.
func (v *verdicts[K]) judge(k K, judge func(K) bool) bool {
	v.mu.Lock()
	ok, found := v.m[k]
	v.mu.Unlock()
	if found {
		return ok
	}
	ok = judge(k)
	v.mu.Lock()
	if v.m == nil || len(v.m) >= maxVerdicts {
		v.m = make(map[K]bool)
	}
	v.m[k] = ok
	v.mu.Unlock()
	return ok
}

// without returns hs without the hashes in kept.
func without(hs, kept []hash.Hash) []hash.Hash {
	return slices.DeleteFunc(slices.Clone(hs), func(h hash.Hash) bool { return slices.Contains(kept, h) })
}

// checkProvider checks lock as [File.SetProvider] would store it; kept are
// the hashes already locked for its provider.
func checkProvider(lock *ProviderLock, kept []hash.Hash) error {
	if plainProvider(lock) {
		return nil
	}
	if err := readsBack(lock.Addr); err != nil {
		return err
	}
	return checkLock(lock.Addr.String(), func(f *File, strict bool) {
		c := lock.clone()
		if strict {
			c.Hashes, c.Unknown = without(c.Hashes, kept), nil
		}
		c.Hashes = normalizeHashes(c.Hashes)
		f.providers[c.Addr] = c
	})
}

// checkModule checks lock as [File.SetModule] would store it; kept are
// the hashes already locked for its call.
func checkModule(lock *ModuleLock, kept []hash.Hash) error {
	return checkLock(lock.Path, func(f *File, strict bool) {
		c := lock.clone()
		if strict {
			c.Hashes, c.Unknown = without(c.Hashes, kept), nil
		}
		c.Hashes = normalizeHashes(c.Hashes)
		f.modules[c.Path] = c
	})
}
