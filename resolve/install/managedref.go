package install

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tflock/tflock/internal/flock"
	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/config"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/address"
	"github.com/tflock/tflock/source/git"
	"github.com/tflock/tflock/source/oci"
)

// SourceRewrite is one module source Init rewrote in the configuration: a
// call constrained by a tflock annotation ([config.AnnotationPrefix])
// whose git "ref" or OCI "tag" argument now names the selected version.
type SourceRewrite struct {
	// Call is the module call path.
	Call string
	// File and Line locate the source argument.
	File string
	Line int
	// Old and New are the source strings before and after, without
	// credentials.
	Old, New string
}

// ManagedRefError is returned by a read-only Init ([Options.ReadOnly])
// when the "ref" or "tag" of a module call that tflock manages (see
// [config.AnnotationPrefix]) is not the selected version's, which a
// normal run would rewrite. errors.As finds it.
type ManagedRefError struct {
	// Rewrites are the rewrites refused.
	Rewrites []SourceRewrite
}

func (e *ManagedRefError) Error() string {
	var b strings.Builder
	b.WriteString("module sources out of date: the lock file is read-only, and these module sources, whose ref or tag tflock manages, do not name the locked version. Run tflock again without read-only (-lockfile=readonly) to rewrite them, or edit each by hand to the source the lock selects; tofu and terraform never rewrite a source.")
	for _, rw := range e.Rewrites {
		fmt.Fprintf(&b, "\n  - module %q (%s:%d): the source is %q, the lock selects %q", rw.Call, rw.File, rw.Line, rw.Old, rw.New)
	}
	return b.String()
}

// managedEdit is a planned rewrite of one module call's source.
type managedEdit struct {
	call     *config.ModuleCall
	old, new string
	rw       SourceRewrite
}

// planManagedRefs works out the new source of every managed module call
// of the configuration's own files (the root module and the local modules
// it calls, never a fetched package) and records it in the call, so that
// modules.json holds what tofu will read. Nothing is written here; see
// applyManagedRefs. A read-only run fails instead; with KeepManagedRefs, a
// stale ref is a warning in res. Providers lock mode changes nothing.
func (r *run) planManagedRefs(ctx context.Context, res *Result) ([]managedEdit, error) {
	if r.s.ProvidersLock || len(r.trees) == 0 {
		return nil, nil
	}
	var edits []managedEdit
	// A local module called twice has its calls' sources in one place:
	// both must want the same text there.
	type want struct{ call, next string }
	at := map[string]want{}
	for _, m := range r.trees[0].cfg.Modules {
		for i := range m.Calls {
			mc := r.calls[m.Calls[i].Path]
			if mc == nil || !mc.ManagedRef {
				continue
			}
			mf := r.fetched[mc.Path]
			if mf == nil {
				continue
			}
			tag, err := r.managedTag(ctx, mf.pick, mc)
			if err != nil {
				return nil, err
			}
			next, err := config.ManagedSource(mc.Source, tag)
			if err != nil {
				return nil, err
			}
			rem, _ := mc.Address.(address.Remote)
			key := fmt.Sprintf("%s:%d", mc.SourceRange.Filename, mc.SourceRange.Start.Byte)
			if prev, dup := at[key]; dup {
				if prev.next != next {
					return nil, fmt.Errorf("module calls %q and %q share the source at %s:%d, whose %s tflock manages, but their locks select different versions (%q, %q): constrain them to one version", prev.call, mc.Path, mc.SourceRange.Filename, mc.SourceRange.Start.Line, config.ManagedArgument(rem), address.Redact(prev.next), address.Redact(next))
				}
				continue
			}
			at[key] = want{call: mc.Path, next: next}
			if next == mc.Source {
				continue
			}
			edits = append(edits, managedEdit{call: mc, old: mc.Source, new: next, rw: SourceRewrite{
				Call: mc.Path, File: mc.SourceRange.Filename, Line: mc.SourceRange.Start.Line,
				Old: address.Redact(mc.Source), New: address.Redact(next),
			}})
		}
	}
	// A fetched package is never edited: say when tofu would install
	// another version than the lock's.
	for _, t := range r.trees[1:] {
		for _, m := range t.cfg.Modules {
			for _, mc := range m.Calls {
				mf := r.fetched[mc.Path]
				rem, ok := mc.Address.(address.Remote)
				if !mc.ManagedRef || mf == nil || !ok || mf.pick.Package.Version.IsZero() {
					continue
				}
				if !tagNames(rem.Kind, writtenTag(rem), mf.pick.Package.Version) {
					msg := fmt.Sprintf("Module source not rewritten: module %q is called from a fetched package with the source %q, whose %s tflock manages, but the lock selects version %s; tofu and terraform install what the source names.", mc.Path, address.Redact(mc.Source), config.ManagedArgument(rem), mf.pick.Package.Version)
					res.Warnings = append(res.Warnings, msg)
					source.EmitContext(ctx, r.s.Events, source.Event{Kind: source.EventWarning, Detail: msg})
				}
			}
		}
	}
	slices.SortFunc(edits, func(a, b managedEdit) int { return strings.Compare(a.rw.Call, b.rw.Call) })
	var rws []SourceRewrite
	for _, e := range edits {
		rws = append(rws, e.rw)
	}
	switch {
	case len(edits) == 0:
		return nil, nil
	case r.s.ReadOnly:
		return nil, &ManagedRefError{Rewrites: rws}
	case r.s.KeepManagedRefs:
		for _, rw := range rws {
			msg := fmt.Sprintf("Module source not rewritten: module %q (%s:%d) has the source %q, but the lock selects %q; tofu and terraform install what the source names.", rw.Call, rw.File, rw.Line, rw.Old, rw.New)
			res.Warnings = append(res.Warnings, msg)
			source.EmitContext(ctx, r.s.Events, source.Event{Kind: source.EventWarning, Detail: msg})
		}
		return nil, nil
	}
	for _, e := range edits {
		ms, err := address.ParseModuleSourceWith(e.new, address.Options{DefaultRegistryHost: cmp.Or(r.s.Resolve.DefaultHost, resolve.DefaultRegistryHost)})
		if err != nil {
			return nil, err
		}
		e.call.Source, e.call.Address = e.new, ms
	}
	return edits, nil
}

// managedTag returns the name the picked version of a managed call is
// published under: the tag the lister reported, the one the source
// names already if it is that version (read as the git or OCI source
// reads tags), or else the one a fresh listing reports (a pick answered
// by the lock file alone carries no tag).
func (r *run) managedTag(ctx context.Context, pick resolve.ModulePick, mc *config.ModuleCall) (string, error) {
	v := pick.Package.Version
	if v.IsZero() {
		return "", fmt.Errorf("module %q: no version was selected for its managed source", mc.Path)
	}
	if pick.Tag != "" {
		return pick.Tag, nil
	}
	if rem, ok := mc.Address.(address.Remote); ok {
		// The tag written already, if it names the version: no need to
		// ask the origin.
		if written := writtenTag(rem); tagNames(rem.Kind, written, v) {
			return written, nil
		}
	}
	av, err := r.memo.Versions(ctx, source.ModulePackage{Source: pick.Package.Source})
	if err != nil {
		return "", err
	}
	for _, a := range av {
		if a.Version == v {
			return cmp.Or(a.Ref, v.String()), nil
		}
	}
	return v.String(), nil
}

// tagNames reports whether a git or OCI tag names version v, as the git
// or OCI source reads tags.
func tagNames(kind address.RemoteKind, tag string, v versions.Version) bool {
	tagVersion := git.TagVersion
	if kind == address.KindOCI {
		tagVersion = oci.TagVersion
	}
	tv, ok := tagVersion(tag)
	return ok && tv == v
}

// writtenTag is the git ref or OCI tag a source writes ("" for none).
func writtenTag(rem address.Remote) string {
	if rem.Kind == address.KindOCI {
		return rem.Tag
	}
	return rem.Ref
}

// managedProblem says what is wrong with a managed call's ref or tag
// (see [resolve.Requirement].Managed) for the version ml locks, or "".
func managedProblem(q resolve.Requirement, ml *lockfile.ModuleLock) string {
	if !q.Managed || ml == nil || ml.Version.IsZero() {
		return ""
	}
	pkg, _ := q.Package.(source.ModulePackage)
	rem, err := address.ParseRemote(pkg.Source)
	if err != nil || tagNames(rem.Kind, q.ManagedTag, ml.Version) {
		return ""
	}
	arg := config.ManagedArgument(rem)
	written := fmt.Sprintf("%s %s", arg, q.ManagedTag)
	if q.ManagedTag == "" {
		written = "no " + arg
	}
	return fmt.Sprintf("module %q: its source, whose %s tflock manages, names %s, but the lock file selects version %s: run tflock without read-only (-lockfile=readonly) to rewrite it, or set its %s to version %s's tag by hand (tofu and terraform never rewrite a source)", q.Call, arg, written, ml.Version, arg, ml.Version)
}

// applyManagedRefs writes the planned sources into their files: only the
// source string literal changes, every other byte is kept; each file is
// replaced atomically (a temporary file renamed over it), and a file that
// changed since it was read is not touched.
func (r *run) applyManagedRefs(ctx context.Context, edits []managedEdit) ([]SourceRewrite, error) {
	byFile := map[string][]managedEdit{}
	var files []string
	for _, e := range edits {
		f := e.call.SourceRange.Filename
		if byFile[f] == nil {
			files = append(files, f)
		}
		byFile[f] = append(byFile[f], e)
	}
	slices.Sort(files)
	var done []SourceRewrite
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return done, err
		}
		es := byFile[f]
		// Last first, so that earlier offsets stay valid.
		slices.SortFunc(es, func(a, b managedEdit) int { return b.call.SourceRange.Start.Byte - a.call.SourceRange.Start.Byte })
		src, err := os.ReadFile(f)
		if err != nil {
			return done, fmt.Errorf("rewriting module sources: %w", err)
		}
		for _, e := range es {
			rng := e.call.SourceRange
			if rng.End.Byte > len(src) || string(src[rng.Start.Byte:rng.End.Byte]) != `"`+e.old+`"` {
				return done, fmt.Errorf("rewriting module sources: %s:%d changed while tflock ran; run it again", f, rng.Start.Line)
			}
			src = slices.Concat(src[:rng.Start.Byte], []byte(`"`+e.new+`"`), src[rng.End.Byte:])
		}
		if err := writeConfigFile(f, src); err != nil {
			return done, err
		}
		for _, e := range es {
			done = append(done, e.rw)
		}
	}
	slices.SortFunc(done, func(a, b SourceRewrite) int { return strings.Compare(a.Call, b.Call) })
	return done, nil
}

// configTempGrace is how old a temporary configuration file must be
// before a later run may sweep it (see flock.SweepTemps).
const configTempGrace = 5 * time.Second

// writeConfigFile replaces a configuration file atomically, keeping its
// permissions. The temporary files of killed runs are swept first.
func writeConfigFile(path string, data []byte) (err error) {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("rewriting module sources: %w", err)
	}
	dir, pattern := filepath.Dir(path), "."+filepath.Base(path)+".tmp-*"
	flock.SweepTemps(dir, pattern, configTempGrace)
	tmp, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return fmt.Errorf("rewriting module sources: %w", err)
	}
	// Held until the file is closed: a temporary file whose lock is free
	// was left by a process that died, which the next run sweeps.
	_, _ = flock.LockOpenFile(tmp)
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("rewriting module sources in %s: %w", path, err)
	}
	if err = tmp.Chmod(st.Mode().Perm()); err != nil {
		return fmt.Errorf("rewriting module sources in %s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("rewriting module sources in %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("rewriting module sources in %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("rewriting module sources in %s: %w", path, err)
	}
	return nil
}
