package config

import (
	"cmp"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	hcljson "github.com/hashicorp/hcl/v2/json"
	tfaddr "github.com/hashicorp/terraform-registry-address"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/tflock/tflock/internal/hclguard"
	"github.com/tflock/tflock/internal/provaddr"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/address"
)

// ReadOptions tunes how configuration is read. The zero value is OpenTofu's
// behaviour.
type ReadOptions struct {
	// DefaultHost is the registry host of provider source addresses
	// without one ("hashicorp/aws") and of implied providers. Default
	// [address.DefaultRegistryHost]. It is never taken from the address
	// library, whose default is another host.
	DefaultHost string
	// Variables are the values given to the root module's input
	// variables, which a module call's source and version may use (with
	// locals and functions; see [Variables]). They apply to the module
	// read under the call path "" only; the zero value reads the
	// environment and the root directory's variables files as OpenTofu
	// does.
	Variables Variables
	// Caller is the module call whose arguments give the input variables
	// of a module read under a non-empty call path, for the early
	// evaluation of its own module calls; [ReadTree] sets it for the
	// local modules it follows. Nil: a variable a source or version uses
	// is not known early, an error.
	Caller *ModuleCall
}

// Module is what one module directory's configuration says about
// dependencies.
type Module struct {
	// Dir is the directory as given to [ReadModule].
	Dir string
	// Call is the module's call path: "" for the root module.
	Call string
	// Providers are the provider local names of the module, declared in
	// required_providers or implied by use, sorted by local name.
	Providers []ProviderEntry
	// Calls are the module's module blocks, sorted by name.
	Calls []ModuleCall
	// Requirements are the module's provider requirements (one per
	// provider entry, plus one per deprecated provider block version
	// argument) and one requirement per remote module call.
	Requirements []resolve.Requirement
}

// ProviderEntry is one provider local name of a module.
type ProviderEntry struct {
	// LocalName is the name the module uses for the provider ("aws").
	LocalName string
	// Addr is the provider's address (the source argument, or the implied one).
	Addr tfaddr.Provider
	// Constraints is the entry's version constraint; the zero value for none.
	Constraints versions.Constraints
	// Aliases are the configuration_aliases, as "aws.east".
	Aliases []string
	// Implied is set for a local name used without a required_providers
	// entry: its address is DefaultHost/hashicorp/NAME (or the built-in
	// terraform provider for "terraform").
	Implied bool
	// Range is the entry, or the first use of an implied local name.
	Range hcl.Range
}

// ModuleCall is one module block.
type ModuleCall struct {
	// Name is the module block's label.
	Name string
	// Path is the call path: the parent's path and Name, joined by ".".
	Path string
	// Source is the source argument's value: the string as written, or
	// what its expression evaluated to (variables, locals, functions;
	// see [Variables]).
	Source string
	// Address is Source parsed (with DefaultHost for registry addresses);
	// nil if it did not parse.
	Address address.ModuleSource
	// Kind says what kind of source Source is (local, registry, git, ...).
	Kind resolve.ModuleSourceKind
	// Constraints is the version argument (module dialect); HasVersion
	// says whether there was one.
	Constraints versions.Constraints
	// HasVersion says whether the call has a version constraint (a version
	// argument or a tflock annotation).
	HasVersion bool
	// SourceRange is the source argument's expression.
	SourceRange hcl.Range
	// VersionRange is the version argument's expression (or the annotation's);
	// the zero Range when there is none.
	VersionRange hcl.Range
	// DeclRange is the module block's header (`module "NAME"`).
	DeclRange hcl.Range
	// ManagedRef is set for a git or OCI call whose version constraint
	// is a "# tflock: version = ..." comment in its module block (see
	// [AnnotationPrefix]) rather than a version argument: Constraints and
	// HasVersion hold the constraint, VersionRange is the comment's, and
	// the git "ref" or OCI "tag" argument of Source is tflock's to write
	// (the selected version's tag). The call's requirement then has no
	// Ref. SourceRange is the source's string literal, quotes included,
	// whose text is exactly Source.
	ManagedRef bool

	// static is the scope of the module holding the call, where args
	// (the call's other arguments: the called module's input variables)
	// are evaluated.
	static *staticScope
	args   map[string]*hcl.Attribute
}

// Config is a module tree read by [ReadTree]: a module and the local
// modules it calls, directly or through other local modules.
type Config struct {
	// Modules holds the module ReadTree was given first, then the others
	// by call path.
	Modules []*Module
}

// Requirements returns the requirements of every module of the tree.
func (c *Config) Requirements() []resolve.Requirement {
	var out []resolve.Requirement
	for _, m := range c.Modules {
		out = append(out, m.Requirements...)
	}
	return out
}

// ReadTree reads the module in dir, under the call path call ("" for the
// root module), and the local modules ("./x", "../x") it calls,
// recursively, each under its own call path ("a.b"). Remote module calls
// become requirements; their configuration is not read here: once one is
// fetched, read its directory with ReadTree and the call's path. The
// diagnostics are the errors and warnings found on the way; the Config
// holds what could be read.
func ReadTree(dir, call string, opts ReadOptions) (*Config, hcl.Diagnostics) {
	return readTreeIn(osDirs{}, dir, call, opts)
}

func readTree(c *Config, d dirs, dir, call string, stack []string, opts ReadOptions) hcl.Diagnostics {
	m, diags := readModuleIn(d, dir, call, opts)
	c.Modules = append(c.Modules, m)
	stack = append(stack, d.key(dir))
	for _, mc := range m.Calls {
		if mc.Kind != resolve.ModuleSourceLocal {
			continue
		}
		bad := func(summary, detail string) {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: mc.SourceRange.Ptr()})
		}
		child, inside := d.join(dir, mc.Source)
		switch {
		case !inside:
			bad("Unreadable module directory", fmt.Sprintf("The local module %q refers to %q, which is outside the file system the configuration is read from.", mc.Path, mc.Source))
		case slices.Contains(stack, d.key(child)):
			bad("Module call cycle", fmt.Sprintf("Module %q calls %q, which is the module itself or one of its callers. Local module calls must form a tree.", mc.Path, mc.Source))
		case !d.isDir(child):
			bad("Unreadable module directory", fmt.Sprintf("The local module %q refers to %q, which is not a directory.", mc.Path, child))
		default:
			copts := opts
			copts.Caller = &mc
			diags = append(diags, readTree(c, d, child, mc.Path, stack, copts)...)
		}
	}
	return diags
}

// ReadModule reads the configuration files of one module directory: every
// ".tf", ".tf.json", ".tofu" and ".tofu.json" file (a ".tofu" file hides
// the ".tf" file of the same name, as in OpenTofu), override files
// ("override.tf", "*_override.tf", ...) last. call is the module's call
// path ("" for the root module); it goes into each requirement's origin.
func ReadModule(dir, call string, opts ReadOptions) (*Module, hcl.Diagnostics) {
	return readModuleIn(osDirs{}, dir, call, opts)
}

func readModuleIn(d dirs, dir, call string, opts ReadOptions) (*Module, hcl.Diagnostics) {
	m := &Module{Dir: dir, Call: call}
	entries, err := d.readDir(dir)
	if err != nil {
		return m, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Unreadable module directory",
			Detail:   fmt.Sprintf("Cannot read the module directory %s: %s.", dir, err),
		}}
	}
	names := map[string]bool{}
	for _, e := range entries {
		if !e.IsDir() && configSuffix(e.Name()) != "" {
			names[e.Name()] = true
		}
	}
	var files []File
	var diags hcl.Diagnostics
	for name := range names {
		if base, ok := strings.CutSuffix(name, ".tf"); ok && names[base+".tofu"] {
			continue
		}
		if base, ok := strings.CutSuffix(name, ".tf.json"); ok && names[base+".tofu.json"] {
			continue
		}
		path, _ := d.join(dir, name)
		src, err := d.readFile(path)
		if err != nil {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Unreadable configuration file",
				Detail:   fmt.Sprintf("Cannot read %s: %s.", path, err),
			})
			continue
		}
		files = append(files, File{Name: path, Src: src})
	}
	var rv *rootValues
	if call == "" {
		var more hcl.Diagnostics
		rv, more = collectRootValues(d, dir, opts.Variables)
		diags = append(diags, more...)
	}
	mod, more := readFiles(files, call, opts, dir, rv)
	mod.Dir = dir
	return mod, append(diags, more...)
}

// File is one configuration file's name and contents, for [ReadFiles].
type File struct {
	Name string // path or name; ".json" suffix selects the JSON syntax
	// Src is the file's contents.
	Src []byte
}

func configSuffix(name string) string {
	for _, s := range []string{".tf.json", ".tofu.json", ".tf", ".tofu"} {
		if strings.HasSuffix(name, s) {
			return s
		}
	}
	return ""
}

func isOverride(name string) bool {
	base := filepath.Base(name)
	base = strings.TrimSuffix(base, configSuffix(base))
	return base == "override" || strings.HasSuffix(base, "_override")
}

// ReadFiles reads one module from the given files, as [ReadModule] does
// from a directory. Files are processed sorted by name, override files
// last. With no directory, no automatic variables file is read for the
// root module (call ""); relative -var-file paths of opts.Variables are
// read from the process's working directory.
func ReadFiles(files []File, call string, opts ReadOptions) (*Module, hcl.Diagnostics) {
	var rv *rootValues
	var diags hcl.Diagnostics
	if call == "" {
		rv, diags = collectRootValues(nil, ".", opts.Variables)
	}
	m, more := readFiles(files, call, opts, ".", rv)
	return m, append(diags, more...)
}

// readFiles reads one module from files; dir is its directory (for
// path.module), rv the values given to a root module's variables.
func readFiles(files []File, call string, opts ReadOptions, dir string, rv *rootValues) (*Module, hcl.Diagnostics) {
	static := newStaticScope()
	static.dir, static.call, static.root, static.lookupEnv = dir, call, rv, opts.Variables.lookupEnv
	if call == "" {
		static.rootDir = dir
	} else if c := opts.Caller; c != nil && c.static != nil {
		static.caller, static.rootDir = c, c.static.rootDir
	}
	r := &reader{
		static:   static,
		call:     call,
		host:     cmp.Or(opts.DefaultHost, address.DefaultRegistryHost),
		declared: map[string]*ProviderEntry{},
		invalid:  map[string]bool{},
		calls:    map[string]*ModuleCall{},
	}
	files = slices.Clone(files)
	slices.SortFunc(files, func(a, b File) int {
		if oa, ob := isOverride(a.Name), isOverride(b.Name); oa != ob {
			if oa {
				return 1
			}
			return -1
		}
		return strings.Compare(a.Name, b.Name)
	})
	parsed := make([]*hcl.File, len(files))
	for i, f := range files {
		parsed[i] = r.parse(f)
		if parsed[i] != nil {
			static.declare(parsed[i].Body, isOverride(f.Name))
		}
	}
	for i, f := range files {
		if parsed[i] != nil {
			r.file(parsed[i], isOverride(f.Name))
		}
	}
	return r.finish(), r.diags
}

type use struct {
	name string
	rng  hcl.Range
}

type blockVersion struct {
	name string
	c    versions.Constraints
	rng  hcl.Range
}

type reader struct {
	// srcs are the native syntax files' contents by name, for the
	// annotations in comments; tokens their tokens, lexed on demand.
	srcs     map[string][]byte
	tokens   map[string]hclsyntax.Tokens
	syntax   map[string]*hclsyntax.Body // native syntax files' bodies
	static   *staticScope
	call     string
	host     string
	declared map[string]*ProviderEntry
	invalid  map[string]bool      // local names with an invalid entry
	versionR map[string]hcl.Range // range of each declared entry's version
	calls    map[string]*ModuleCall
	uses     []use
	blockVs  []blockVersion
	diags    hcl.Diagnostics
}

var fileSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
	{Type: "terraform"},
	{Type: "module", LabelNames: []string{"name"}},
	{Type: "provider", LabelNames: []string{"name"}},
	{Type: "resource", LabelNames: []string{"type", "name"}},
	{Type: "data", LabelNames: []string{"type", "name"}},
	{Type: "ephemeral", LabelNames: []string{"type", "name"}},
	{Type: "check", LabelNames: []string{"name"}},
}}

var terraformSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "required_providers"}}}

var resourceSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "provider"}}}

var checkSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "data", LabelNames: []string{"type", "name"}}}}

var providerSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "version"}}}

var moduleSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "source"}, {Name: "version"}, {Name: "providers"},
}}

// parse parses one configuration file; nil if it could not be.
func (r *reader) parse(f File) *hcl.File {
	var file *hcl.File
	var diags hcl.Diagnostics
	if strings.HasSuffix(f.Name, ".json") {
		if diags = hclguard.JSON(f.Src, f.Name); diags == nil {
			file, diags = hcljson.Parse(f.Src, f.Name)
		}
	} else {
		if diags = hclguard.Native(f.Src, f.Name); diags == nil {
			file, diags = hclsyntax.ParseConfig(f.Src, f.Name, hcl.InitialPos)
			if r.srcs == nil {
				r.srcs, r.syntax = map[string][]byte{}, map[string]*hclsyntax.Body{}
			}
			r.srcs[f.Name] = f.Src
			if file != nil {
				if body, ok := file.Body.(*hclsyntax.Body); ok {
					r.syntax[f.Name] = body
				}
			}
		}
	}
	r.diags = append(r.diags, diags...)
	if file == nil || file.Body == nil {
		return nil
	}
	return file
}

func (r *reader) file(file *hcl.File, override bool) {
	content, _, diags := file.Body.PartialContent(fileSchema)
	r.diags = append(r.diags, diags...)
	for _, b := range content.Blocks {
		switch b.Type {
		case "terraform":
			tc, _, diags := b.Body.PartialContent(terraformSchema)
			r.diags = append(r.diags, diags...)
			for _, rp := range tc.Blocks {
				r.requiredProviders(rp, override)
			}
		case "module":
			r.moduleBlock(b, override)
		case "provider":
			r.providerBlock(b)
		case "resource", "data", "ephemeral":
			r.resourceBlock(b)
		case "check":
			cc, _, diags := b.Body.PartialContent(checkSchema)
			r.diags = append(r.diags, diags...)
			for _, d := range cc.Blocks {
				r.resourceBlock(d)
			}
		}
	}
	r.strayAnnotations(file)
}

// badConstraint is the detail of the "Invalid version constraint" error:
// OpenTofu's sentence, naming the string, then which provider or module
// call it constrains and what is wrong with it.
func badConstraint(s, kind, name string, err error) string {
	return fmt.Sprintf("This string does not use correct version constraint syntax: %q, the version constraint of %s %q (%s).", s, kind, name, err)
}

func (r *reader) errorf(rng hcl.Range, summary, format string, args ...any) {
	r.diags = append(r.diags, &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  summary,
		Detail:   fmt.Sprintf(format, args...),
		Subject:  rng.Ptr(),
	})
}

// stringValue evaluates expr without variables and converts it to a
// string.
func (r *reader) stringValue(expr hcl.Expression, what string) (string, bool) {
	v, diags := expr.Value(nil)
	r.diags = append(r.diags, diags...)
	if diags.HasErrors() {
		return "", false
	}
	if v.IsNull() || !v.IsWhollyKnown() {
		r.errorf(expr.Range(), "Invalid "+what, "The %s must be a string, known before any evaluation.", what)
		return "", false
	}
	s, err := convert.Convert(v, cty.String)
	if err != nil {
		r.errorf(expr.Range(), "Invalid "+what, "The %s must be a string: %s.", what, err)
		return "", false
	}
	return s.AsString(), true
}

func (r *reader) requiredProviders(b *hcl.Block, override bool) {
	attrs, diags := b.Body.JustAttributes()
	r.diags = append(r.diags, diags...)
	names := make([]string, 0, len(attrs))
	for n := range attrs {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		attr := attrs[name]
		if _, err := provaddr.ParsePart(name); err != nil {
			r.errorf(attr.NameRange, "Invalid provider local name", "%q is not a valid provider local name: %s.", name, err)
			continue
		}
		e, vr, ok := r.requiredProvider(attr)
		if !ok {
			// Declared, if wrongly: uses of the name imply nothing.
			r.invalid[name] = true
			continue
		}
		if prev, dup := r.declared[name]; dup && !override {
			r.errorf(attr.NameRange, "Duplicate required provider", "The provider local name %q was already declared at %s. A module declares each local name once in required_providers.", name, prev.Range)
			continue
		}
		if override {
			if prev, dup := r.declared[name]; dup {
				// An override entry replaces what it sets.
				if e.Addr.IsZero() || !hasObjectKey(attr.Expr, "source") {
					e.Addr = prev.Addr
				}
				if !hasObjectKey(attr.Expr, "version") && isObjectForm(attr.Expr) {
					e.Constraints = prev.Constraints
					vr = r.versionR[name]
				}
			}
		}
		if r.versionR == nil {
			r.versionR = map[string]hcl.Range{}
		}
		r.versionR[name] = vr
		r.declared[name] = e
	}
}

func isObjectForm(expr hcl.Expression) bool {
	_, diags := hcl.ExprMap(expr)
	return !diags.HasErrors()
}

func hasObjectKey(expr hcl.Expression, key string) bool {
	pairs, diags := hcl.ExprMap(expr)
	if diags.HasErrors() {
		return false
	}
	for _, p := range pairs {
		if objectKey(p.Key) == key {
			return true
		}
	}
	return false
}

func objectKey(expr hcl.Expression) string {
	if k := hcl.ExprAsKeyword(expr); k != "" {
		return k
	}
	v, diags := expr.Value(nil)
	if diags.HasErrors() || v.IsNull() || !v.IsKnown() || v.Type() != cty.String {
		return ""
	}
	return v.AsString()
}

// requiredProvider decodes one required_providers entry: the object form
// or the legacy string form (a version constraint; the source is implied).
// It returns the entry and the range of its version constraint.
func (r *reader) requiredProvider(attr *hcl.Attribute) (*ProviderEntry, hcl.Range, bool) {
	name := attr.Name
	e := &ProviderEntry{LocalName: name, Range: attr.Range}
	vr := attr.Range
	pairs, mapDiags := hcl.ExprMap(attr.Expr)
	if mapDiags.HasErrors() {
		// Legacy string form: aws = "~> 1.0".
		s, ok := r.stringValue(attr.Expr, "required_providers entry")
		if !ok {
			return nil, vr, false
		}
		c, err := versions.ParseConstraints(s)
		if err != nil {
			r.errorf(attr.Expr.Range(), "Invalid version constraint", "%s", badConstraint(s, "provider", name, err))
			return nil, vr, false
		}
		e.Constraints = c
		e.Addr = r.impliedAddr(name)
		return e, attr.Expr.Range(), true
	}
	ok := true
	sourceSet := false
	for _, p := range pairs {
		key := objectKey(p.Key)
		switch key {
		case "source":
			s, good := r.stringValue(p.Value, "provider source address")
			if !good {
				ok = false
				continue
			}
			addr, err := provaddr.ParseNotLegacy(s, r.host)
			if err != nil {
				r.errorf(p.Value.Range(), "Invalid provider source address", "The source address %q of provider %q is invalid: %s.", s, name, err)
				ok = false
				continue
			}
			e.Addr, sourceSet = addr, true
		case "version":
			s, good := r.stringValue(p.Value, "version constraint")
			if !good {
				ok = false
				continue
			}
			c, err := versions.ParseConstraints(s)
			if err != nil {
				r.errorf(p.Value.Range(), "Invalid version constraint", "%s", badConstraint(s, "provider", name, err))
				ok = false
				continue
			}
			e.Constraints, vr = c, p.Value.Range()
		case "configuration_aliases":
			exprs, diags := hcl.ExprList(p.Value)
			r.diags = append(r.diags, diags...)
			for _, x := range exprs {
				t, diags := hcl.AbsTraversalForExpr(x)
				r.diags = append(r.diags, diags...)
				if diags.HasErrors() {
					ok = false
					continue
				}
				alias, good := aliasName(t)
				if !good || t.RootName() != name {
					r.errorf(x.Range(), "Invalid configuration alias", "A configuration alias of provider %q must be written %s.ALIAS.", name, name)
					ok = false
					continue
				}
				e.Aliases = append(e.Aliases, alias)
			}
		default:
			r.errorf(p.Key.Range(), "Invalid required_providers object", `A required_providers entry can only set "source", "version" and "configuration_aliases". To configure a provider, use a provider block.`)
			ok = false
		}
	}
	if !sourceSet {
		e.Addr = r.impliedAddr(name)
	}
	return e, vr, ok
}

func aliasName(t hcl.Traversal) (string, bool) {
	if len(t) != 2 {
		return "", false
	}
	a, ok := t[1].(hcl.TraverseAttr)
	if !ok {
		return "", false
	}
	return t.RootName() + "." + a.Name, true
}

// impliedAddr is the address OpenTofu gives a local name without a source:
// the built-in provider for "terraform", else DefaultHost/hashicorp/NAME.
func (r *reader) impliedAddr(name string) tfaddr.Provider {
	if name == "terraform" {
		return tfaddr.NewProvider(tfaddr.BuiltInProviderHost, tfaddr.BuiltInProviderNamespace, "terraform")
	}
	p, err := provaddr.ParseNotLegacy("hashicorp/"+name, r.host)
	if err != nil {
		return tfaddr.Provider{}
	}
	return p
}

func (r *reader) useTraversal(expr hcl.Expression) {
	t, diags := hcl.AbsTraversalForExpr(expr)
	if diags.HasErrors() {
		r.errorf(expr.Range(), "Invalid provider reference", "A provider reference must be a provider local name, optionally followed by an alias: aws or aws.west.")
		return
	}
	r.uses = append(r.uses, use{name: t.RootName(), rng: expr.Range()})
}

func (r *reader) resourceBlock(b *hcl.Block) {
	c, _, diags := b.Body.PartialContent(resourceSchema)
	r.diags = append(r.diags, diags...)
	if a, ok := c.Attributes["provider"]; ok {
		r.useTraversal(a.Expr)
		return
	}
	typ := b.Labels[0]
	name, _, _ := strings.Cut(typ, "_")
	r.uses = append(r.uses, use{name: name, rng: b.DefRange})
}

func (r *reader) providerBlock(b *hcl.Block) {
	name := b.Labels[0]
	r.uses = append(r.uses, use{name: name, rng: b.DefRange})
	c, _, diags := b.Body.PartialContent(providerSchema)
	r.diags = append(r.diags, diags...)
	a, ok := c.Attributes["version"]
	if !ok {
		return
	}
	s, good := r.stringValue(a.Expr, "version constraint")
	if !good {
		return
	}
	vc, err := versions.ParseConstraints(s)
	if err != nil {
		r.errorf(a.Expr.Range(), "Invalid version constraint", "%s", badConstraint(s, "provider", name, err))
		return
	}
	r.diags = append(r.diags, &hcl.Diagnostic{
		Severity: hcl.DiagWarning,
		Summary:  "Version constraints inside provider configuration blocks are deprecated",
		Detail:   fmt.Sprintf("Move the version constraint of provider %q into the required_providers block of the terraform block. It still applies.", name),
		Subject:  a.Range.Ptr(),
	})
	r.blockVs = append(r.blockVs, blockVersion{name: name, c: vc, rng: a.Expr.Range()})
}

func (r *reader) moduleBlock(b *hcl.Block, override bool) {
	name := b.Labels[0]
	if !hclsyntax.ValidIdentifier(name) {
		r.errorf(b.LabelRanges[0], "Invalid module instance name", "%q is not a valid module name: it must start with a letter or underscore and contain only letters, digits, underscores and dashes.", name)
		return
	}
	c, rest, diags := b.Body.PartialContent(moduleSchema)
	r.diags = append(r.diags, diags...)
	prev, dup := r.calls[name]
	if dup && !override {
		r.errorf(b.DefRange, "Duplicate module call", "A module call named %q was already declared at %s. Module calls must have unique names within a module.", name, prev.DeclRange)
		return
	}
	mc := &ModuleCall{Name: name, Path: joinPath(r.call, name), DeclRange: b.DefRange}
	if override {
		if !dup {
			r.errorf(b.DefRange, "Missing base module call to override", "There is no module call named %q. An override file can only override a module call of a primary configuration file.", name)
			return
		}
		cp := *prev
		mc = &cp
	}
	args, _ := rest.JustAttributes()
	mc.static = r.static
	mc.args = maps.Clone(mc.args)
	if mc.args == nil {
		mc.args = map[string]*hcl.Attribute{}
	}
	maps.Copy(mc.args, args)
	if a, ok := c.Attributes["source"]; ok {
		s, good, diags := r.static.stringValue(a.Expr, fmt.Sprintf("The source of module %q", name))
		r.diags = append(r.diags, diags...)
		if diags.HasErrors() {
			return
		}
		if !good {
			r.errorf(a.Expr.Range(), "Invalid module source", "The source of module %q is null; it must be a string.", name)
			return
		}
		ms, err := address.ParseModuleSourceWith(s, address.Options{DefaultRegistryHost: r.host})
		if err != nil {
			r.errorf(a.Expr.Range(), "Invalid module source address", "The source address of module %q is invalid: %s.", name, err)
			return
		}
		mc.Source, mc.SourceRange, mc.Address, mc.Kind = s, a.Expr.Range(), ms, resolve.ClassifyModuleAddress(ms)
	} else if !override {
		r.errorf(b.DefRange, "Missing required argument", "The module call %q has no source argument.", name)
		return
	}
	if !r.annotation(b, mc, c.Attributes["version"] != nil) {
		return
	}
	if a, ok := c.Attributes["version"]; ok {
		s, good, diags := r.static.stringValue(a.Expr, fmt.Sprintf("The version of module %q", name))
		r.diags = append(r.diags, diags...)
		if diags.HasErrors() {
			return
		}
		// A null version is no version, as in OpenTofu.
		if good {
			vc, err := versions.ParseModuleConstraints(s)
			if err != nil {
				r.errorf(a.Expr.Range(), "Invalid version constraint", "%s", badConstraint(s, "module", name, err))
				return
			}
			mc.Constraints, mc.HasVersion, mc.VersionRange = vc, true, a.Expr.Range()
		} else {
			// An override file's null version removes the version.
			mc.Constraints, mc.HasVersion, mc.VersionRange = versions.Constraints{}, false, hcl.Range{}
		}
	}
	if mc.HasVersion && mc.Kind == resolve.ModuleSourceLocal {
		r.errorf(mc.VersionRange, "Invalid version argument", "The module %q has a local source %q, which has no versions: remove the version argument.", name, mc.Source)
		return
	}
	if rem, ok := mc.Address.(address.Remote); ok && mc.HasVersion && rem.Kind != address.KindGit && rem.Kind != address.KindOCI {
		r.errorf(mc.VersionRange, "Invalid version argument", "Cannot apply a version constraint to module %q because its source %q is neither a module registry, a git repository nor an OCI registry, which are the sources with versions: remove the version argument, or pin the package in its source address.", name, address.Redact(mc.Source))
		return
	}
	if a, ok := c.Attributes["providers"]; ok {
		pairs, diags := hcl.ExprMap(a.Expr)
		r.diags = append(r.diags, diags...)
		for _, p := range pairs {
			r.useTraversal(p.Value)
		}
	}
	r.calls[name] = mc
}

func joinPath(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

// finish builds the module read: its providers (declared and implied),
// the requirements of its providers and of its module calls, and its
// calls.
func (r *reader) finish() *Module {
	m := &Module{Call: r.call}
	implied := r.impliedProviders()
	r.addProviders(m, implied)
	r.addBlockVersions(m, implied)
	r.addCalls(m)
	return m
}

// impliedProviders is the entry of every provider local name used but not
// declared, by local name, with a warning for each one that is not built
// in.
func (r *reader) impliedProviders() map[string]*ProviderEntry {
	implied := map[string]*ProviderEntry{}
	for _, u := range r.uses {
		if _, ok := r.declared[u.name]; ok || r.invalid[u.name] {
			continue
		}
		if _, ok := implied[u.name]; ok {
			continue
		}
		if _, err := provaddr.ParsePart(u.name); err != nil {
			r.errorf(u.rng, "Invalid provider local name", "%q is not a valid provider local name: %s.", u.name, err)
			continue
		}
		e := &ProviderEntry{LocalName: u.name, Implied: true, Range: u.rng, Addr: r.impliedAddr(u.name)}
		if e.Addr.IsZero() {
			continue
		}
		implied[u.name] = e
		if !provaddr.IsBuiltIn(e.Addr) {
			r.diags = append(r.diags, &hcl.Diagnostic{
				Severity: hcl.DiagWarning,
				Summary:  "Provider without a required_providers entry",
				Detail:   fmt.Sprintf("The provider local name %q is used but not declared in required_providers, so it means %q. Declare it with an explicit source and version constraint.", u.name, e.Addr.ForDisplay()),
				Subject:  u.rng.Ptr(),
			})
		}
	}
	return implied
}

// addProviders adds to m its declared and implied providers, by local
// name, and the requirement of each, refusing a provider declared under
// two local names.
func (r *reader) addProviders(m *Module, implied map[string]*ProviderEntry) {
	byAddr := map[tfaddr.Provider]string{}
	for _, e := range r.declared {
		m.Providers = append(m.Providers, *e)
	}
	for _, e := range implied {
		m.Providers = append(m.Providers, *e)
	}
	slices.SortFunc(m.Providers, func(a, b ProviderEntry) int { return strings.Compare(a.LocalName, b.LocalName) })
	for _, e := range m.Providers {
		if e.Addr.IsZero() {
			continue
		}
		if other, dup := byAddr[e.Addr]; dup && !e.Implied {
			r.errorf(e.Range, "Duplicate required provider", "The provider %s is declared under two local names, %q and %q. A module declares each provider once.", e.Addr.ForDisplay(), other, e.LocalName)
			continue
		}
		byAddr[e.Addr] = e.LocalName
		rng := e.Range
		if vr, ok := r.versionR[e.LocalName]; ok && !e.Implied {
			rng = vr
		}
		m.Requirements = append(m.Requirements, resolve.Requirement{
			Package:     source.ProviderPackage{Addr: e.Addr},
			Constraints: e.Constraints,
			Origin:      resolve.Origin{Module: r.call, Range: rng},
		})
	}
}

// addBlockVersions adds to m the requirement of each version argument of
// a provider block, for the provider its local name means.
func (r *reader) addBlockVersions(m *Module, implied map[string]*ProviderEntry) {
	for _, bv := range r.blockVs {
		var addr tfaddr.Provider
		if e, ok := r.declared[bv.name]; ok {
			addr = e.Addr
		} else if e, ok := implied[bv.name]; ok {
			addr = e.Addr
		}
		if addr.IsZero() {
			continue
		}
		m.Requirements = append(m.Requirements, resolve.Requirement{
			Package:     source.ProviderPackage{Addr: addr},
			Constraints: bv.c,
			Origin:      resolve.Origin{Module: r.call, Range: bv.rng},
		})
	}
}

// addCalls adds to m its module calls, by name, and the requirement of
// each remote one, refusing a call pinned by its source that also has a
// version argument.
func (r *reader) addCalls(m *Module) {
	names := make([]string, 0, len(r.calls))
	for n := range r.calls {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		mc := r.calls[n]
		m.Calls = append(m.Calls, *mc)
		if mc.Kind == resolve.ModuleSourceLocal {
			continue
		}
		pkg, lockSource := modulePackage(mc.Address, mc.Source)
		var managedTag string
		if mc.ManagedRef {
			// The ref or tag is tflock's output, not the call's pin.
			managedTag, pkg.Ref = pkg.Ref, ""
		}
		if pkg.Ref != "" && mc.HasVersion {
			r.errorf(mc.VersionRange, "Invalid version argument", "The module %q is pinned to %q by its source address; it cannot also have a version constraint.", mc.Name, pkg.Ref)
			continue
		}
		rng := mc.SourceRange
		if mc.HasVersion {
			rng = mc.VersionRange
		}
		m.Requirements = append(m.Requirements, resolve.Requirement{
			Package:     pkg,
			Constraints: mc.Constraints,
			Origin:      resolve.Origin{Module: r.call, Range: rng},
			Call:        mc.Path,
			LockSource:  lockSource,
			Managed:     mc.ManagedRef,
			ManagedTag:  managedTag,
		})
	}
}

// modulePackage returns the package a lister is asked about for a remote
// module source (the package address, and the git ref, OCI digest or
// explicit OCI tag that pins it), and the source its lock entry records.
func modulePackage(ms address.ModuleSource, raw string) (source.ModulePackage, string) {
	pkg, _ := source.NewModulePackage(ms)
	if r, ok := ms.(address.Remote); ok {
		switch r.Kind {
		case address.KindGit:
			pkg.Ref = r.Ref
		case address.KindOCI:
			switch {
			case r.Digest != "":
				pkg.Ref = r.Digest
			case strings.Contains(raw, "tag="):
				pkg.Ref = r.Tag
			}
		}
	}
	return pkg, ms.LockSource()
}
