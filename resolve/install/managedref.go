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
)

// SourceRewrite is one module source Init rewrote in the configuration: a
// call constrained by a tflock annotation ([config.AnnotationPrefix])
// whose git "ref" or OCI "tag" argument now names the selected version.
type SourceRewrite struct {
	// Call is the module call path.
	Call string
	// File is the configuration file holding the source argument.
	File string
	// Line is the source argument's line in File.
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
	// Remedy is what to do: [RemedyWritable].
	Remedy Remedy

	words *Words // the run's words; nil: OpenTofu's
}

// Error says how to let the sources be rewritten, then lists each: call, place, old and
// new source.
func (e *ManagedRefError) Error() string {
	var b strings.Builder
	remedy := e.Remedy
	if remedy.Kind == 0 {
		remedy = Remedy{Kind: RemedyWritable, Modules: true}
	}
	b.WriteString("module sources out of date: the lock file is read-only, and these module sources, whose ref or tag tflock manages, do not name the locked version. To rewrite them, " + e.words.orDefault().Remedy(remedy) + ", or edit each by hand to the source the lock selects.")
	for _, rw := range e.Rewrites {
		fmt.Fprintf(&b, "\n  - module %q (%s:%d): the source is %q, the lock selects %q", rw.Call, rw.File, rw.Line, rw.Old, rw.New)
	}
	return b.String()
}

// managedEdit is a planned rewrite of one module call's source.
type managedEdit struct {
	call     *config.ModuleCall
	old, new string
	tag      string // the ref or tag written into new
	rw       SourceRewrite
}

// sameFileKey is the name of a configuration file with symbolic links
// resolved, or the name as given if that fails.
func sameFileKey(path string) string {
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		return resolved
	}
	return path
}

// protectedFile says why the rewrite leaves the configuration file path
// alone by default (see [Options.RewriteProtectedFiles]), or "" if it may
// write it: root is the root module's directory.
func protectedFile(path, root string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "which cannot be located: " + err.Error()
	}
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return "which cannot be located: " + err.Error()
	}
	rel, err := filepath.Rel(absRoot, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "which is outside the root module's directory " + absRoot
	}
	fi, err := os.Lstat(abs)
	switch {
	case err != nil:
		return "which cannot be read: " + err.Error()
	case fi.Mode()&os.ModeSymlink != 0:
		return "which is a symbolic link"
	case fi.Mode().Perm()&0o222 == 0:
		return "which has no write permission"
	case hardLinks(fi) > 1:
		return fmt.Sprintf("which has %d hard links", hardLinks(fi))
	}
	// A directory on the way that is a symbolic link (a local module
	// directory linked to elsewhere) leads out of the root module.
	realRoot, err1 := filepath.EvalSymlinks(absRoot)
	resolved, err2 := filepath.EvalSymlinks(abs)
	if err1 != nil || err2 != nil || resolved != filepath.Join(realRoot, rel) {
		return "which is reached through a symbolic link"
	}
	return ""
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
	edits, err := r.rootManagedEdits(ctx)
	if err != nil {
		return nil, err
	}
	r.warnFetchedManagedRefs(ctx, res)
	slices.SortFunc(edits, func(a, b managedEdit) int { return strings.Compare(a.rw.Call, b.rw.Call) })
	var rws []SourceRewrite
	for _, e := range edits {
		rws = append(rws, e.rw)
	}
	switch {
	case len(edits) == 0:
		return nil, nil
	case r.s.ReadOnly:
		return nil, &ManagedRefError{Rewrites: rws, Remedy: Remedy{Kind: RemedyWritable, Modules: true}, words: &r.s.words}
	case r.s.KeepManagedRefs:
		for _, rw := range rws {
			r.warnResult(ctx, res, fmt.Sprintf("Module source not rewritten: module %q (%s:%d) has the source %q, but the lock selects %q; tofu and terraform install what the source names.", rw.Call, rw.File, rw.Line, rw.Old, rw.New))
		}
		return nil, nil
	}
	if !r.s.RewriteProtectedFiles {
		edits = r.dropProtectedEdits(ctx, res, edits)
	}
	for _, e := range edits {
		ms, err := config.ManagedAddress(e.new)
		if err != nil {
			return nil, err
		}
		e.call.Source, e.call.Address = e.new, ms
	}
	return edits, nil
}

// rootManagedEdits is the edit of every managed call of the root module
// and its local modules whose source does not name the picked version.
// A local module called twice has its calls' sources in one place: both
// must want the same text there.
func (r *run) rootManagedEdits(ctx context.Context) ([]managedEdit, error) {
	var edits []managedEdit
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
			// By the file itself: a local module directory reached
			// through a symbolic link is the same file under two names.
			key := fmt.Sprintf("%s:%d", sameFileKey(mc.SourceRange.Filename), mc.SourceRange.Start.Byte)
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
			edits = append(edits, managedEdit{call: mc, old: mc.Source, new: next, tag: tag, rw: SourceRewrite{
				Call: mc.Path, File: mc.SourceRange.Filename, Line: mc.SourceRange.Start.Line,
				Old: address.Redact(mc.Source), New: address.Redact(next),
			}})
		}
	}
	return edits, nil
}

// warnFetchedManagedRefs warns, in res, of every managed call of a
// fetched package whose source names another version than the lock's: a
// fetched package is never edited.
func (r *run) warnFetchedManagedRefs(ctx context.Context, res *Result) {
	for _, t := range r.trees[1:] {
		for _, m := range t.cfg.Modules {
			for _, mc := range m.Calls {
				mf := r.fetched[mc.Path]
				rem, ok := mc.Address.(address.Remote)
				if !mc.ManagedRef || mf == nil || !ok || mf.pick.Package.Version.IsZero() {
					continue
				}
				if !tagNames(rem.Kind, writtenTag(rem), mf.pick.Package.Version) {
					r.warnResult(ctx, res, fmt.Sprintf("Module source not rewritten: module %q is called from a fetched package with the source %q, whose %s tflock manages, but the lock selects version %s; tofu and terraform install what the source names.", mc.Path, address.Redact(mc.Source), config.ManagedArgument(rem), mf.pick.Package.Version))
				}
			}
		}
	}
}

// dropProtectedEdits removes from edits, with a warning in res, those of
// files other than the root module's own files as they are (see
// protectedFile): the others are left alone, with the source to write by
// hand.
func (r *run) dropProtectedEdits(ctx context.Context, res *Result, edits []managedEdit) []managedEdit {
	why := map[string]string{}
	return slices.DeleteFunc(edits, func(e managedEdit) bool {
		f := e.rw.File
		reason, seen := why[f]
		if !seen {
			reason = protectedFile(f, r.s.Dir)
			why[f] = reason
		}
		if reason == "" {
			return false
		}
		rem, _ := e.call.Address.(address.Remote)
		r.warnResult(ctx, res, fmt.Sprintf("Module source not rewritten: module %q (%s:%d) has the source %q, but the lock selects %q (%s %s); tflock does not write %s %s. Write that source there by hand, or let tflock write such files (Options.RewriteProtectedFiles).", e.rw.Call, e.rw.File, e.rw.Line, e.rw.Old, e.rw.New, config.ManagedArgument(rem), e.tag, f, reason))
		return true
	})
}

// warnResult adds the warning msg to res and emits it.
func (r *run) warnResult(ctx context.Context, res *Result, msg string) {
	res.Warnings = append(res.Warnings, msg)
	source.EmitContext(ctx, r.s.Events, source.Event{Kind: source.EventWarning, Detail: msg})
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
	av, err := r.memo.Versions(ctx, source.ModulePackage{Source: pick.Package.Source, Addr: pick.Package.Addr})
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
	style := versions.GitTag
	if kind == address.KindOCI {
		style = versions.OCITag
	}
	tv, ok := versions.ParseTag(tag, style)
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
func managedProblem(q resolve.Requirement, ml *lockfile.ModuleLock, w Words) string {
	if !q.Managed || ml == nil || ml.Version.IsZero() {
		return ""
	}
	pkg, _ := q.Package.(source.ModulePackage)
	ms, err := pkg.Address()
	rem, ok := ms.(address.Remote)
	if err != nil || !ok || tagNames(rem.Kind, q.ManagedTag, ml.Version) {
		return ""
	}
	arg := config.ManagedArgument(rem)
	written := fmt.Sprintf("%s %s", arg, q.ManagedTag)
	if q.ManagedTag == "" {
		written = "no " + arg
	}
	return fmt.Sprintf("module %q: its source, whose %s tflock manages, names %s, but the lock file selects version %s: %s", q.Call, arg, written, ml.Version, w.Remedy(Remedy{Kind: RemedyEditSource, Module: q.Call, Version: ml.Version.String(), Modules: true}))
}

// RewriteError is returned by Init when the module sources it planned to
// rewrite could not all be written (see [Options.KeepManagedRefs]): a
// rewrite is all or nothing, so the files already replaced are put back
// as they were, and nothing is installed nor is the lock file to be
// written. errors.As finds it.
type RewriteError struct {
	// Unchanged are the configuration files left as they were: normally
	// every file the rewrite meant to change.
	Unchanged []string
	// Changed are the files that hold the new sources still, because
	// putting them back failed too (see Err): normally none.
	Changed []string
	// Err is the cause.
	Err error
}

// Error gives the cause and says which files it changed and could not put back, if any.
func (e *RewriteError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "rewriting module sources: %v", e.Err)
	if len(e.Changed) == 0 {
		b.WriteString("; no file was changed")
	} else {
		fmt.Fprintf(&b, "; these files hold the new sources and could not be put back: %s", strings.Join(e.Changed, ", "))
	}
	if len(e.Unchanged) > 0 {
		fmt.Fprintf(&b, " (as they were: %s)", strings.Join(e.Unchanged, ", "))
	}
	return b.String()
}

// Unwrap returns Err.
func (e *RewriteError) Unwrap() error { return e.Err }

// configFile is one configuration file a rewrite changes.
type configFile struct {
	// path is the file as the configuration names it; target the file
	// written (path with symbolic links resolved).
	path, target string
	// inPlace: written over its contents rather than replaced, so that
	// every hard link sees the change (see [Options.RewriteProtectedFiles]).
	inPlace  bool
	mode     os.FileMode
	old, new []byte
	tmp      *os.File // the staged new contents
	edits    []managedEdit
}

// applyManagedRefs writes the planned sources into their files, all or
// nothing: only each source string literal changes, every other byte is
// kept; every new file is staged first (a temporary file next to it), a
// file that changed since it was read fails the rewrite before any is
// touched, and then each is replaced (renamed over); if one cannot be,
// those replaced already are put back and a [*RewriteError] lists the
// files. The undo function puts every file back, for a run that fails
// later.
func (r *run) applyManagedRefs(ctx context.Context, edits []managedEdit) (done []SourceRewrite, undo func() error, err error) {
	nothing := func() error { return nil }
	if len(edits) == 0 {
		return nil, nothing, nil
	}
	byFile := map[string]*configFile{}
	var files []*configFile
	for _, e := range edits {
		f := e.call.SourceRange.Filename
		if byFile[f] == nil {
			byFile[f] = &configFile{path: f}
			files = append(files, byFile[f])
		}
		byFile[f].edits = append(byFile[f].edits, e)
	}
	slices.SortFunc(files, func(a, b *configFile) int { return strings.Compare(a.path, b.path) })
	names := func(fs []*configFile) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.path)
		}
		return out
	}
	fail := func(changed, unchanged []*configFile, err error) error {
		return &RewriteError{Changed: names(changed), Unchanged: names(unchanged), Err: err}
	}
	defer func() {
		for _, f := range files {
			if f.tmp != nil {
				_ = f.tmp.Close()
				_ = os.Remove(f.tmp.Name())
			}
		}
	}()
	// Stage: every file's new contents, before any is replaced.
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, nil, fail(nil, files, err)
		}
		if err := r.stageConfigFile(f); err != nil {
			return nil, nil, fail(nil, files, err)
		}
	}
	// Commit: replace them one by one; on a failure, put back the ones
	// replaced.
	putBack := func(replaced []*configFile) []*configFile {
		var stuck []*configFile
		for i := len(replaced) - 1; i >= 0; i-- {
			f := replaced[i]
			if err := writeConfigFile(f.target, f.old, f.mode, f.inPlace); err != nil {
				stuck = append(stuck, f)
			}
		}
		return stuck
	}
	for i, f := range files {
		if err := commitConfigFile(f); err != nil {
			stuck := putBack(files[:i])
			unchanged := slices.DeleteFunc(slices.Clone(files), func(g *configFile) bool { return slices.Contains(stuck, g) })
			return nil, nil, fail(stuck, unchanged, err)
		}
		for _, e := range f.edits {
			done = append(done, e.rw)
		}
	}
	slices.SortFunc(done, func(a, b SourceRewrite) int { return strings.Compare(a.Call, b.Call) })
	undo = func() error {
		if stuck := putBack(files); len(stuck) > 0 {
			return fmt.Errorf("putting back the module sources rewritten: these files hold the new sources still: %s", strings.Join(names(stuck), ", "))
		}
		return nil
	}
	return done, undo, nil
}

// stageConfigFile reads f, checks that each planned source is still what
// was read, and writes the new contents to a temporary file next to the
// file written.
func (r *run) stageConfigFile(f *configFile) error {
	src, err := os.ReadFile(f.path)
	if err != nil {
		return err
	}
	f.old = src
	// Last first, so that earlier offsets stay valid.
	slices.SortFunc(f.edits, func(a, b managedEdit) int { return b.call.SourceRange.Start.Byte - a.call.SourceRange.Start.Byte })
	for _, e := range f.edits {
		rng := e.call.SourceRange
		if rng.End.Byte > len(src) || string(src[rng.Start.Byte:rng.End.Byte]) != `"`+e.old+`"` {
			return fmt.Errorf("%s:%d changed while tflock ran; run it again", f.path, rng.Start.Line)
		}
		src = slices.Concat(src[:rng.Start.Byte], []byte(`"`+e.new+`"`), src[rng.End.Byte:])
	}
	f.new = src
	if f.target, err = filepath.EvalSymlinks(f.path); err != nil {
		return err
	}
	st, err := os.Stat(f.target)
	if err != nil {
		return err
	}
	f.mode, f.inPlace = st.Mode().Perm(), hardLinks(st) > 1
	if f.inPlace {
		return nil // written over at commit: no temporary file
	}
	dir, pattern := filepath.Dir(f.target), "."+filepath.Base(f.target)+".tmp-*"
	flock.SweepTemps(dir, pattern, configTempGrace)
	tmp, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return err
	}
	f.tmp = tmp
	// Held until the file is closed: a temporary file whose lock is free
	// was left by a process that died, which the next run sweeps.
	_, _ = flock.LockOpenFile(tmp)
	if _, err := tmp.Write(f.new); err != nil {
		return fmt.Errorf("staging %s: %w", f.path, err)
	}
	if err := tmp.Chmod(f.mode); err != nil {
		return fmt.Errorf("staging %s: %w", f.path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("staging %s: %w", f.path, err)
	}
	return nil
}

// replaceFile renames a staged file over a configuration file; tests
// replace it to make a rename fail.
var replaceFile = os.Rename

// commitConfigFile puts f's staged contents in place.
func commitConfigFile(f *configFile) error {
	if f.inPlace {
		return writeInPlace(f.target, f.new)
	}
	tmp := f.tmp
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("replacing %s: %w", f.path, err)
	}
	if err := replaceFile(tmp.Name(), f.target); err != nil {
		return fmt.Errorf("replacing %s: %w", f.path, err)
	}
	f.tmp = nil
	return nil
}

// writeInPlace writes data over the contents of the file at path, which
// keeps its hard links (and is not atomic).
func writeInPlace(path string, data []byte) error {
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	if _, err := fh.Write(data); err != nil {
		_ = fh.Close()
		return err
	}
	if err := fh.Sync(); err != nil {
		_ = fh.Close()
		return err
	}
	return fh.Close()
}

// configTempGrace is how old a temporary configuration file must be
// before a later run may sweep it (see flock.SweepTemps).
const configTempGrace = 5 * time.Second

// writeConfigFile replaces a configuration file atomically with data,
// with permissions mode, or writes over it in place. The temporary files
// of killed runs are swept first.
func writeConfigFile(path string, data []byte, mode os.FileMode, inPlace bool) (err error) {
	if inPlace {
		return writeInPlace(path, data)
	}
	dir, pattern := filepath.Dir(path), "."+filepath.Base(path)+".tmp-*"
	flock.SweepTemps(dir, pattern, configTempGrace)
	tmp, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return err
	}
	_, _ = flock.LockOpenFile(tmp)
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Chmod(mode); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
