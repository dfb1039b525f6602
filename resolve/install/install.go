package install

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/internal/flock"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/providercache"
)

// ManifestRecord is one module of a modules.json manifest, in OpenTofu's
// format (internal/modsdir): Key is the call path ("" for the root
// module, "a.b" for nested calls), Source the source address as OpenTofu
// prints it, Version the selected version (omitted when none) and Dir the
// module directory relative to the working directory, slash-separated.
type ManifestRecord struct {
	// Key is the call path: "" for the root module, "a.b" for nested calls.
	Key string `json:"Key"`
	// Source is the source address as OpenTofu prints it.
	Source string `json:"Source"`
	// Version is the selected version; "" (omitted) when there is none.
	Version string `json:"Version,omitempty"`
	// Dir is the module directory relative to the working directory, slash-separated.
	Dir string `json:"Dir"`
}

// Manifest is the content of ".terraform/modules/modules.json".
type Manifest struct {
	// Modules are the manifest's records, one per module (see [ManifestRecord]).
	Modules []ManifestRecord `json:"Modules"`
}

// ManifestFile is the name of the module manifest in the modules directory.
const ManifestFile = "modules.json"

// MarshalManifest returns the manifest as OpenTofu writes it: records sorted
// by key, compact JSON, no final newline.
func MarshalManifest(records []ManifestRecord) ([]byte, error) {
	rs := slices.Clone(records)
	slices.SortFunc(rs, func(a, b ManifestRecord) int { return strings.Compare(a.Key, b.Key) })
	return json.Marshal(Manifest{Modules: rs})
}

// ReadManifest reads a modules.json file. A missing file is an empty
// manifest.
func ReadManifest(file string) (*Manifest, error) {
	b, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return &Manifest{}, nil
	}
	if err != nil {
		return nil, err
	}
	m, err := ParseManifest(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return m, nil
}

// ParseManifest parses the content of a modules.json file. Empty content is
// an empty manifest, as in OpenTofu; two records with the same key are an
// error.
func ParseManifest(b []byte) (*Manifest, error) {
	var m Manifest
	if len(b) == 0 {
		return &m, nil
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("invalid module manifest: %w", err)
	}
	seen := map[string]bool{}
	for _, r := range m.Modules {
		if seen[r.Key] {
			return nil, fmt.Errorf("invalid module manifest: two records for the module %q", r.Key)
		}
		seen[r.Key] = true
	}
	return &m, nil
}

// moduleResults lists every module of the walked tree, as modules.json
// records them.
func (r *run) moduleResults() []ModuleResult {
	var out []ModuleResult
	for _, t := range r.trees {
		for _, m := range t.cfg.Modules {
			rel, err := filepath.Rel(t.pkgRoot, m.Dir)
			if err != nil {
				rel = "."
			}
			mr := ModuleResult{Key: m.Call, Dir: path.Join(t.manifestRoot, filepath.ToSlash(rel))}
			if mc := r.calls[m.Call]; mc != nil && m.Call != "" {
				mr.Source = mc.Source
				if mc.Address != nil {
					mr.Source = mc.Address.String()
				}
				if mf := r.fetched[m.Call]; mf != nil {
					mr.Remote, mr.CacheHit = true, mf.hit
					if !mf.pick.Package.Version.IsZero() {
						mr.Version = mf.pick.Package.Version.String()
					}
				}
			}
			out = append(out, mr)
		}
	}
	slices.SortFunc(out, func(a, b ModuleResult) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// hasModuleCalls reports whether the root module calls any module; tofu
// writes a modules directory only then.
func (r *run) hasModuleCalls() bool {
	return len(r.calls) > 0
}

// install stages the providers and modules in temporary directories next
// to their final places (at the same depth, so that relative links into a
// plugin cache stay valid) and moves them into place once all are complete.
func (r *run) install(ctx context.Context, provs []ProviderResult) ([]ProviderResult, error) {
	if err := os.MkdirAll(r.s.InstallDir, 0o755); err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	// One install into a directory at a time; whoever holds the lock owns
	// every staging name, so what is there already was left by a run that
	// was killed.
	var locker flock.Locker
	unlock, err := locker.Lock(ctx, filepath.Join(r.s.InstallDir, installLockName), func() {
		source.EmitContext(ctx, r.s.Events, source.Event{Kind: source.EventWarning, Detail: "waiting for another run installing into " + r.s.InstallDir})
	})
	if err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	defer unlock()
	sweepStaging(r.s.InstallDir)
	var st staging
	defer st.cleanup()
	out, err := r.stageProviders(ctx, &st, provs)
	if err != nil {
		return nil, err
	}
	if r.hasModuleCalls() {
		if err := r.stageModules(ctx, &st); err != nil {
			return nil, err
		}
	}
	if err := swap(r.s.InstallDir, st.staged); err != nil {
		return nil, err
	}
	return out, nil
}

// staging is what an install has built so far: the directories to move
// into place, and the staging roots they were built in.
type staging struct {
	staged  []stagedDir
	scratch []string // staging roots, removed at the end
}

// cleanup removes what is left of the staging: the staged directories
// not moved into place (or, after swap, the previous ones moved aside)
// and the staging roots.
func (st *staging) cleanup() {
	for _, sd := range st.staged {
		removeAll(sd.tmp)
	}
	for _, d := range st.scratch {
		removeAll(d)
	}
}

// stageProviders stages the providers in provs that are not reused and
// returns provs with the final directory of each. Providers are installed
// package by package, as tofu does: other packages in the providers
// directory (other versions, other platforms, what tofu or terraform
// installed) are left as they are, and a package already installed that
// matches the lock file is kept.
func (r *run) stageProviders(ctx context.Context, st *staging, provs []ProviderResult) ([]ProviderResult, error) {
	provDir, err := os.MkdirTemp(r.s.InstallDir, stagingPrefix+"providers-")
	if err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	st.scratch = append(st.scratch, provDir)
	pd := providercache.NewDir(provDir)
	final := providercache.NewDir(filepath.Join(r.s.InstallDir, "providers"))
	var shared *providercache.Dir
	if r.s.PluginCacheDir != "" {
		shared = providercache.NewDir(r.s.PluginCacheDir)
	}
	out := make([]ProviderResult, 0, len(provs))
	for _, p := range provs {
		if p.Reused {
			out = append(out, p)
			continue
		}
		if shared != nil {
			if err := r.toPluginCache(ctx, shared, p); err != nil {
				return nil, err
			}
			if _, err := pd.LinkFrom(ctx, shared, p.Package); err != nil {
				return nil, fmt.Errorf("install: %w", err)
			}
		} else if _, err := pd.InstallFromCache(ctx, p.Package, p.Dir); err != nil {
			return nil, fmt.Errorf("install: %w", err)
		}
		rel, err := filepath.Rel(r.s.InstallDir, final.PackageDir(p.Package))
		if err != nil {
			return nil, fmt.Errorf("install: %w", err)
		}
		st.staged = append(st.staged, stagedDir{name: rel, tmp: pd.PackageDir(p.Package)})
		p.Dir = final.PackageDir(p.Package)
		out = append(out, p)
	}
	return out, nil
}

// stageModules stages the fetched modules that are not reused, and the
// modules manifest. Modules are installed call by call, as tofu does: a
// module already installed that matches the lock file (by tflock, or
// tofu's own checkout with its .git) is kept as it is, and the
// directories of other calls are left alone.
func (r *run) stageModules(ctx context.Context, st *staging) error {
	mods, err := os.MkdirTemp(r.s.InstallDir, stagingPrefix+"modules-")
	if err != nil {
		return fmt.Errorf("install: %w", err)
	}
	st.scratch = append(st.scratch, mods)
	keys := make([]string, 0, len(r.fetched))
	for k := range r.fetched {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := ctx.Err(); err != nil {
			return err
		}
		if r.fetched[k].reused {
			continue
		}
		if err := cache.CopyDir(filepath.Join(mods, k), r.fetched[k].entry.Dir); err != nil {
			return fmt.Errorf("install: module %q: %w", k, err)
		}
		st.staged = append(st.staged, stagedDir{name: filepath.Join("modules", k), tmp: filepath.Join(mods, k)})
	}
	var recs []ManifestRecord
	for _, m := range r.moduleResults() {
		recs = append(recs, ManifestRecord{Key: m.Key, Source: m.Source, Version: m.Version, Dir: m.Dir})
	}
	b, err := MarshalManifest(recs)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(mods, ManifestFile), b, 0o644); err != nil {
		return fmt.Errorf("install: %w", err)
	}
	st.staged = append(st.staged, stagedDir{name: filepath.Join("modules", ManifestFile), tmp: filepath.Join(mods, ManifestFile)})
	return nil
}

// toPluginCache installs p in the shared plugin cache unless a package with
// the same contents is there already.
func (r *run) toPluginCache(ctx context.Context, shared *providercache.Dir, p ProviderResult) error {
	if inst, err := shared.Get(p.Package); err == nil {
		if h, err := inst.Hash(); err == nil && h == r.h1Of(p) {
			return nil
		}
	}
	if _, err := shared.InstallDir(ctx, p.Package, p.Dir); err != nil {
		return fmt.Errorf("install: plugin cache: %w", err)
	}
	return nil
}

// h1Of returns the h1: of a fetched provider package (its cache entry's name).
func (r *run) h1Of(p ProviderResult) hash.Hash {
	return p.h1
}

// stagingPrefix begins the name of everything an install makes in the
// install directory besides providers/ and modules/ (staging directories,
// the previous directories moved aside); installLockName is the lock that
// one install holds.
const (
	stagingPrefix   = ".tflock-"
	installLockName = ".tflock.lock"
)

// sweepStaging removes the staging directories a killed install left in
// dir. The caller holds the install lock.
func sweepStaging(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), stagingPrefix) && e.Name() != installLockName {
			removeAll(filepath.Join(dir, e.Name()))
		}
	}
}

// randomName is a name no other file in the install directory has.
func randomName() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// stagedDir is a directory built in tmp, to become INSTALLDIR/name (name
// may have several elements).
type stagedDir struct{ name, tmp string }

// swap moves each staged directory into place, moving the previous one
// aside first and restoring everything if a step fails. On success the
// staged entries' tmp names hold the previous directories, for removal.
func swap(dir string, staged []stagedDir) error {
	type moved struct {
		dst, old string
	}
	var done []moved
	rollback := func() {
		for i := len(done) - 1; i >= 0; i-- {
			m := done[i]
			failed := filepath.Join(dir, stagingPrefix+"failed-"+filepath.Base(m.dst))
			_ = os.Rename(m.dst, failed)
			removeAll(failed)
			if m.old != "" {
				_ = os.Rename(m.old, m.dst)
			}
		}
	}
	for i, sd := range staged {
		dst := filepath.Join(dir, sd.name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			rollback()
			return fmt.Errorf("install: %w", err)
		}
		old := ""
		if _, err := os.Lstat(dst); err == nil {
			old = filepath.Join(dir, stagingPrefix+"old-"+randomName())
			if err := os.Rename(dst, old); err != nil {
				rollback()
				return fmt.Errorf("install: moving %s aside: %w", dst, err)
			}
		}
		if err := os.Rename(sd.tmp, dst); err != nil {
			if old != "" {
				_ = os.Rename(old, dst)
			}
			rollback()
			return fmt.Errorf("install: moving %s into place: %w", dst, err)
		}
		done = append(done, moved{dst, old})
		staged[i].tmp = old
	}
	return nil
}
