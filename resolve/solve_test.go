package resolve_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
)

// mapLister is an in-memory [source.Lister]: versions keyed by the
// package's String() (a provider address, or a module source). A key in
// fail makes Versions fail with that error; a package in neither map is
// unknown (source.ErrNotFound). tags adds a Ref and a Pin to some listed
// versions. It counts the calls per package.
type mapLister struct {
	versions map[string][]versions.Version
	fail     map[string]error
	tags     map[string]map[versions.Version]source.Available

	mu    sync.Mutex
	calls map[string]int
}

func (l *mapLister) Versions(ctx context.Context, pkg source.Package) ([]source.Available, error) {
	key := pkg.String()
	l.mu.Lock()
	if l.calls == nil {
		l.calls = map[string]int{}
	}
	l.calls[key]++
	l.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err, ok := l.fail[key]; ok {
		return nil, &source.Error{Source: "test", Package: pkg, Err: err}
	}
	vs, ok := l.versions[key]
	if !ok {
		return nil, &source.Error{Source: "test", Package: pkg, Err: source.ErrNotFound}
	}
	out := make([]source.Available, len(vs))
	for i, v := range vs {
		out[i] = l.tags[key][v]
		out[i].Version = v
	}
	return out, nil
}

// scenario is one paragraph of testdata/solve/*.txt.
type scenario struct {
	file, name string
	line       int

	lister  *mapLister
	reqs    []resolve.Requirement
	lock    *lockfile.File
	opts    resolve.Options
	want    []string // expected picks, one line each
	wantErr []string // expected error lines
	after   []string // expected lock entries after Apply
	errType string   // expected errors.As target
	calls   int      // expected number of lister calls, -1 if unchecked
}

func provider(t *testing.T, s string) tfaddr.Provider {
	t.Helper()
	p, err := resolve.ParseProviderSource(s, "")
	if err != nil {
		t.Fatalf("provider %q: %v", s, err)
	}
	return p
}

// parseOrigin parses "@ MODULE FILE:LINE" (MODULE "." for the root).
func parseOrigin(t *testing.T, fields []string) resolve.Origin {
	t.Helper()
	if len(fields) != 3 || fields[0] != "@" {
		t.Fatalf("want origin @ MODULE FILE:LINE, got %q", fields)
	}
	o := resolve.Origin{Module: fields[1]}
	if o.Module == "." {
		o.Module = ""
	}
	file, line, ok := strings.Cut(fields[2], ":")
	n, err := strconv.Atoi(line)
	if !ok || err != nil {
		t.Fatalf("bad FILE:LINE %q", fields[2])
	}
	o.Range = hcl.Range{Filename: file, Start: hcl.Pos{Line: n, Column: 1}, End: hcl.Pos{Line: n, Column: 1}}
	return o
}

// splitAt splits fields at "@".
func splitAt(fields []string) (before, origin []string) {
	i := slices.Index(fields, "@")
	if i < 0 {
		return fields, nil
	}
	return fields[:i], fields[i:]
}

func parseScenarios(t *testing.T, path string) []*scenario {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []*scenario
	var sc *scenario
	for i, line := range strings.Split(string(data), "\n") {
		lineno := i + 1
		line = strings.TrimRight(line, " \t\r")
		if line == "" {
			sc = nil
			continue
		}
		if strings.HasPrefix(line, "#") {
			continue
		}
		if sc == nil {
			sc = &scenario{file: filepath.Base(path), line: lineno, lister: &mapLister{versions: map[string][]versions.Version{}, fail: map[string]error{}, tags: map[string]map[versions.Version]source.Available{}}, lock: lockfile.New(), calls: -1}
			out = append(out, sc)
		}
		verb, rest, _ := strings.Cut(line, " ")
		f := strings.Fields(rest)
		fatal := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("%s:%d: %s", path, lineno, fmt.Sprintf(format, args...))
		}
		switch verb {
		case "name":
			sc.name = rest
		case "versions": // versions ADDR V... | versions module SOURCE V...
			key, module := "", false
			if len(f) > 0 && f[0] == "module" {
				module = true
				f = f[1:]
				key = f[0]
			} else {
				key = provider(t, f[0]).String()
			}
			parse := versions.Parse
			if module {
				parse = versions.ParseModuleVersion
			}
			vs := []versions.Version{}
			for _, s := range f[1:] {
				v, err := parse(s)
				if err != nil {
					fatal("%v", err)
				}
				vs = append(vs, v)
			}
			sc.lister.versions[key] = vs
		case "tag": // tag module SOURCE VERSION [ref=REF] [pin=PIN]
			if len(f) < 3 || f[0] != "module" {
				fatal("want tag module SOURCE VERSION [ref=REF] [pin=PIN]")
			}
			v, err := versions.ParseModuleVersion(f[2])
			if err != nil {
				fatal("%v", err)
			}
			var a source.Available
			for _, kv := range f[3:] {
				switch k, val, _ := strings.Cut(kv, "="); k {
				case "ref":
					a.Ref = val
				case "pin":
					a.Pin = val
				default:
					fatal("unknown tag attribute %q", kv)
				}
			}
			if sc.lister.tags[f[1]] == nil {
				sc.lister.tags[f[1]] = map[versions.Version]source.Available{}
			}
			sc.lister.tags[f[1]][v] = a
		case "fail": // fail ADDR|module SOURCE MESSAGE...
			if f[0] == "module" {
				sc.lister.fail[f[1]] = errors.New(strings.Join(f[2:], " "))
			} else {
				sc.lister.fail[provider(t, f[0]).String()] = errors.New(strings.Join(f[1:], " "))
			}
		case "require": // require ADDR [CONSTRAINT...] @ MODULE FILE:LINE
			before, at := splitAt(f)
			c, err := versions.ParseConstraints(strings.Join(before[1:], " "))
			if err != nil {
				fatal("%v", err)
			}
			sc.reqs = append(sc.reqs, resolve.Requirement{
				Package:     source.ProviderPackage{Addr: provider(t, before[0])},
				Constraints: c,
				Origin:      parseOrigin(t, at),
			})
		case "call": // call PATH SOURCE[?ref=R] [CONSTRAINT...] @ MODULE FILE:LINE
			before, at := splitAt(f)
			var c versions.Constraints
			if len(before) > 2 {
				c, err = versions.ParseModuleConstraints(strings.Join(before[2:], " "))
				if err != nil {
					fatal("%v", err)
				}
			}
			pkg := source.ModulePackage{Source: before[1]}
			if s, ref, ok := strings.Cut(before[1], "?ref="); ok {
				pkg = source.ModulePackage{Source: s, Ref: ref}
			}
			sc.reqs = append(sc.reqs, resolve.Requirement{Package: pkg, Constraints: c, Origin: parseOrigin(t, at), Call: before[0]})
		case "state": // state ADDR...
			var addrs []tfaddr.Provider
			for _, s := range f {
				addrs = append(addrs, provider(t, s))
			}
			sc.reqs = append(sc.reqs, resolve.ProviderRequirements(addrs, resolve.Origin{State: true, Range: hcl.Range{Filename: "terraform.tfstate"}})...)
		case "lock": // lock ADDR VERSION [CONSTRAINT...] [hashes=N] | lock module PATH SOURCE [VERSION]
			if f[0] == "module" {
				ml := &lockfile.ModuleLock{Path: f[1], Source: f[2], Hashes: []hash.Hash{"h1:7MjN4eFisdTv4tlhXH5hL4QQd39Jy4baPhFxwAd/EFE="}, Commit: strings.Repeat("a", 40)}
				if src, ref, ok := strings.Cut(f[2], "?ref="); ok {
					ml.Source, ml.Ref = src, ref
				}
				if len(f) > 3 {
					ml.Version = versions.MustParseModuleVersion(f[3])
				}
				sc.lock.SetModule(ml)
				break
			}
			pl := &lockfile.ProviderLock{Addr: provider(t, f[0]), Version: versions.MustParse(f[1]), Hashes: []hash.Hash{"h1:DvLRiv4Pbjq3Rh0yNWtq+9dwVXqHF+bQspfhckLyFWU="}}
			pl.Constraints = strings.Join(f[2:], " ")
			sc.lock.SetProvider(pl)
		case "upgrade": // upgrade | upgrade ADDR... | upgrade module PATH...
			switch {
			case len(f) == 0:
				sc.opts.Upgrade = true
			case f[0] == "module":
				sc.opts.UpgradeModules = append(sc.opts.UpgradeModules, f[1:]...)
			default:
				for _, s := range f {
					sc.opts.UpgradeProviders = append(sc.opts.UpgradeProviders, provider(t, s))
				}
			}
		case "translate":
			sc.opts.TranslatePredecessor = true
		case "unify":
			sc.opts.UnifyModules = true
		case "reattach":
			sc.opts.Reattach = rest
		case "override":
			for _, s := range f {
				sc.opts.DevOverrides = append(sc.opts.DevOverrides, provider(t, s))
			}
		case "want":
			sc.want = append(sc.want, rest)
		case "error":
			sc.wantErr = append(sc.wantErr, rest)
		case "errtype":
			sc.errType = rest
		case "after":
			sc.after = append(sc.after, rest)
		case "calls":
			n, err := strconv.Atoi(rest)
			if err != nil {
				fatal("%v", err)
			}
			sc.calls = n
		default:
			fatal("unknown verb %q", verb)
		}
	}
	return out
}

// pickLines renders a selection in the form of "want" lines.
func pickLines(sel *resolve.Selection) []string {
	var out []string
	for _, p := range sel.Providers {
		v := "-"
		if !p.Version.IsZero() {
			v = p.Version.String()
		}
		out = append(out, fmt.Sprintf("%s %s %s", p.Addr, v, p.Reason))
	}
	for _, m := range sel.Modules {
		v := "-"
		if !m.Package.Version.IsZero() {
			v = m.Package.Version.String()
		}
		if m.Package.Ref != "" {
			v = "ref=" + m.Package.Ref
		}
		line := fmt.Sprintf("module %s %s %s %s", m.Call, m.Package.Source, v, m.Reason)
		if m.Tag != "" {
			line += " tag=" + m.Tag
		}
		if m.Package.Pin != "" {
			line += " pin=" + m.Package.Pin
		}
		out = append(out, line)
	}
	return out
}

// lockLines renders a lock file in the form of "after" lines.
func lockLines(f *lockfile.File) []string {
	var out []string
	for p := range f.Providers() {
		s := fmt.Sprintf("%s %s", p.Addr, p.Version)
		if p.Constraints != "" {
			s += " " + p.Constraints
		}
		out = append(out, fmt.Sprintf("%s hashes=%d", s, len(p.Hashes)))
	}
	for m := range f.Modules() {
		v := "-"
		if !m.Version.IsZero() {
			v = m.Version.String()
		}
		if m.Ref != "" {
			v = "ref=" + m.Ref
		}
		s := fmt.Sprintf("module %s %s %s", m.Path, m.Source, v)
		if m.Constraints != "" {
			s += " " + m.Constraints
		}
		out = append(out, fmt.Sprintf("%s hashes=%d commit=%v", s, len(m.Hashes), m.Commit != ""))
	}
	return out
}

func errTypeOK(err error, name string) bool {
	switch name {
	case "ConflictError":
		var e *resolve.ConflictError
		return errors.As(err, &e)
	case "NoMatchError":
		var e *resolve.NoMatchError
		return errors.As(err, &e)
	case "NoVersionsError":
		var e *resolve.NoVersionsError
		return errors.As(err, &e)
	case "UnknownPackageError":
		var e *resolve.UnknownPackageError
		return errors.As(err, &e) && errors.Is(err, source.ErrNotFound)
	case "ListError":
		var e *resolve.ListError
		return errors.As(err, &e)
	case "LockedMismatchError":
		var e *resolve.LockedMismatchError
		return errors.As(err, &e)
	case "LockedUnavailableError":
		var e *resolve.LockedUnavailableError
		return errors.As(err, &e)
	case "BuiltinConstraintError":
		var e *resolve.BuiltinConstraintError
		return errors.As(err, &e)
	case "UnknownBuiltinError":
		var e *resolve.UnknownBuiltinError
		return errors.As(err, &e)
	case "ReattachError":
		var e *resolve.ReattachError
		return errors.As(err, &e)
	}
	return false
}

func TestSolve(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "solve", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario files: %v", err)
	}
	n := 0
	for _, file := range files {
		for _, sc := range parseScenarios(t, file) {
			n++
			name := fmt.Sprintf("%s:%d", sc.file, sc.line)
			if sc.name != "" {
				name += "_" + sc.name
			}
			t.Run(name, func(t *testing.T) { runScenario(t, sc) })
		}
	}
	t.Logf("%d scenarios", n)
}

func runScenario(t *testing.T, sc *scenario) {
	if sc.want == nil && sc.wantErr == nil {
		t.Fatal("scenario expects nothing: add want or error lines")
	}
	opts := sc.opts
	opts.Lock = sc.lock
	sel, err := resolve.Resolve(context.Background(), sc.reqs, sc.lister, opts)
	for pkg, n := range sc.lister.calls {
		if n > 1 {
			t.Errorf("package %s listed %d times, want at most once", pkg, n)
		}
	}
	if sc.calls >= 0 {
		total := 0
		for _, n := range sc.lister.calls {
			total += n
		}
		if total != sc.calls {
			t.Errorf("lister called %d times (%v), want %d", total, sc.lister.calls, sc.calls)
		}
	}
	if sc.wantErr != nil {
		if err == nil {
			t.Fatalf("no error; selection:\n%s", strings.Join(pickLines(sel), "\n"))
		}
		if diff := cmp.Diff(strings.Join(sc.wantErr, "\n"), err.Error()); diff != "" {
			t.Errorf("error mismatch (-want +got):\n%s", diff)
		}
		if sc.errType != "" && !errTypeOK(err, sc.errType) {
			t.Errorf("error %T is not a %s", err, sc.errType)
		}
		return
	}
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if diff := cmp.Diff(sc.want, pickLines(sel)); diff != "" {
		t.Errorf("selection mismatch (-want +got):\n%s", diff)
	}
	var b strings.Builder
	if err := sel.Explain(&b); err != nil {
		t.Fatal(err)
	}
	for _, p := range sel.Providers {
		if !strings.Contains(b.String(), p.Addr.String()) {
			t.Errorf("explanation does not mention %s:\n%s", p.Addr, b.String())
		}
	}
	if sc.after != nil {
		sel.Apply(sc.lock)
		if diff := cmp.Diff(sc.after, lockLines(sc.lock)); diff != "" {
			t.Errorf("lock after Apply mismatch (-want +got):\n%s", diff)
		}
	}
}
