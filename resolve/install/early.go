package install

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/config"
)

// parsedTree is a called module tree read, not yet recorded.
type parsedTree struct {
	cfg   *config.Config
	diags hcl.Diagnostics
}

// parseCalledTree reads the module tree of a fetched remote module called
// by mc, from dir in the package in pkgRoot: its input variables, which
// its own module calls' sources and versions may use, take the arguments
// of mc. It records nothing ([run.useTree] does), so it may run beside
// the level's other fetches.
func (r *run) parseCalledTree(dir string, mc *config.ModuleCall, pkgRoot string) *parsedTree {
	opts := r.readOptions()
	opts.Caller = mc
	cfg, diags := config.ReadTree(dir, mc.Path, opts)
	if !diags.HasErrors() {
		diags = append(diags, packageDiags(cfg, pkgRoot)...)
	}
	return &parsedTree{cfg: cfg, diags: diags}
}

// uncovered says why the directory dir of a local module, inside the
// module package in pkgRoot by its call, is not covered by the package's
// hashes: it leads out of the package (with tofu's summary of that), or
// lies in its version-control metadata; "" when it is covered. Init
// ([packageDiags]) and Check ([checkLocalCall]) share it.
func uncovered(pkgRoot, dir string) (summary, why string) {
	root, err1 := filepath.Abs(pkgRoot)
	d, err2 := filepath.Abs(dir)
	rel, err3 := filepath.Rel(root, d)
	switch {
	case errors.Join(err1, err2, err3) != nil || rel != "." && !filepath.IsLocal(rel):
		return "Local module path escapes module package", "leads out of the module package it is part of"
	case hash.IsVCSMetadata(filepath.ToSlash(rel)):
		return "Invalid local module path", "is version-control metadata of its module package, not covered by the package's hashes"
	}
	return "", ""
}

// packageDiags reports the local module calls of a remote package's module
// tree (read from its package directory pkgRoot) whose directory leads
// out of the package, which tofu refuses too, or lies in its
// version-control metadata: the package's hashes cover neither, so what
// such a call runs is not what the lock file names.
func packageDiags(cfg *config.Config, pkgRoot string) hcl.Diagnostics {
	dirOf := map[string]string{}
	for _, m := range cfg.Modules {
		dirOf[m.Call] = m.Dir
	}
	var diags hcl.Diagnostics
	for _, m := range cfg.Modules {
		for _, mc := range m.Calls {
			d, ok := dirOf[mc.Path]
			if mc.Kind != resolve.ModuleSourceLocal || !ok {
				continue
			}
			if summary, why := uncovered(pkgRoot, d); why != "" {
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary,
					Detail: fmt.Sprintf("The local module %q refers to %q, which %s.", mc.Path, mc.Source, why), Subject: mc.SourceRange.Ptr()})
			}
		}
	}
	return diags
}

// callerIndex holds the module calls of the modules read so far by call
// path, so that a module read later evaluates its own calls' sources and
// versions with its caller's arguments.
type callerIndex map[string]*config.ModuleCall

func (ix callerIndex) add(m *config.Module) {
	for i := range m.Calls {
		ix[m.Calls[i].Path] = &m.Calls[i]
	}
}

// readAllInstalled reads the modules of recs (modules.json records),
// callers before the modules they call, and returns their requirements in
// the order of recs. A module whose directory is missing is not read: its
// key is added to missing.
func readAllInstalled(dir string, recs []ManifestRecord, ropts config.ReadOptions, callers callerIndex, missing map[string]bool) ([]resolve.Requirement, error) {
	depth := func(key string) int {
		if key == "" {
			return -1
		}
		return strings.Count(key, ".")
	}
	order := slices.Clone(recs)
	slices.SortStableFunc(order, func(a, b ManifestRecord) int { return cmp.Compare(depth(a.Key), depth(b.Key)) })
	read := map[string][]resolve.Requirement{}
	for _, rec := range order {
		if fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(rec.Dir))); rec.Key != "" && (err != nil || !fi.IsDir()) {
			missing[rec.Key] = true
			continue
		}
		o := ropts
		o.Caller = callers[rec.Key]
		m, err := readInstalled(dir, rec, o)
		if err != nil {
			return nil, err
		}
		callers.add(m)
		read[rec.Key] = m.Requirements
	}
	var reqs []resolve.Requirement
	for _, rec := range recs {
		reqs = append(reqs, read[rec.Key]...)
	}
	return reqs, nil
}
