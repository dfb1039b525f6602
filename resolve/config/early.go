package config

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/tryfunc"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	hcljson "github.com/hashicorp/hcl/v2/json"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"

	"github.com/tflock/tflock/internal/hclguard"
)

// Variables are the values of the root module's input variables given
// from outside the configuration, for the early evaluation of module
// source and version arguments (OpenTofu 1.8 and later, Terraform 1.15:
// a module's source and version may use variables, locals and
// functions). The zero value reads the values as OpenTofu does: the
// environment variables TF_VAR_NAME, then the root module directory's
// terraform.tfvars, terraform.tfvars.json and *.auto.tfvars(.json) files
// in lexical order; each source overrides the ones before it.
type Variables struct {
	// Args are the -var and -var-file options, in command-line order;
	// they override the files and the environment, a later one an
	// earlier one.
	Args []VarArg
	// LookupEnv looks up an environment variable (TF_VAR_NAME for
	// variable NAME; TF_WORKSPACE and TF_DATA_DIR for
	// terraform.workspace, else the workspace recorded in
	// .terraform/environment, else "default"). Nil means
	// os.LookupEnv; a function that finds nothing ignores the
	// environment.
	LookupEnv func(key string) (string, bool)
}

// VarArg is one -var or -var-file option: set exactly one field.
type VarArg struct {
	// Var is a -var option's value, "NAME=VALUE". VALUE is read as
	// OpenTofu reads it: the string itself for a variable of a primitive
	// type or without a type, else an HCL expression.
	Var string
	// File is a -var-file option's path, relative to the root module
	// directory unless absolute (OpenTofu reads it from its working
	// directory, which is the root module's, -chdir included). A file
	// ending in ".json", or not in ".tfvars" and starting with "{", is
	// JSON.
	File string
}

func (v Variables) lookupEnv(key string) (string, bool) {
	if v.LookupEnv != nil {
		return v.LookupEnv(key)
	}
	return os.LookupEnv(key)
}

// givenValue is a variable's value given from outside the module: an
// expression of a variables file or a string of a -var option or the
// environment.
type givenValue struct {
	expr hcl.Expression
	str  string
	from string // where the value was given, for messages
}

// rootValues are the values given for the root module's variables.
type rootValues struct {
	vars      Variables
	given     map[string]givenValue
	workspace string // the selected workspace, for terraform.workspace
}

func (rv *rootValues) lookup(name string) (givenValue, bool) {
	if g, ok := rv.given[name]; ok {
		return g, true
	}
	if s, ok := rv.vars.lookupEnv("TF_VAR_" + name); ok {
		return givenValue{str: s, from: "the environment variable TF_VAR_" + name}, true
	}
	return givenValue{}, false
}

// collectRootValues reads the variable values given for a root module:
// its directory's automatic variables files (when d is not nil) and the
// -var and -var-file options. Relative -var-file paths are read from
// dir through d, or from the process's working directory when d is nil.
func collectRootValues(d dirs, dir string, vars Variables) (*rootValues, hcl.Diagnostics) {
	rv := &rootValues{vars: vars, given: map[string]givenValue{}, workspace: "default"}
	var diags hcl.Diagnostics
	// The workspace as OpenTofu selects it: TF_WORKSPACE, else the one
	// "tofu workspace select" recorded in the data directory.
	if ws, ok := vars.lookupEnv("TF_WORKSPACE"); ok && ws != "" {
		rv.workspace = ws
	} else if d != nil {
		dataDir, ok := vars.lookupEnv("TF_DATA_DIR")
		if !ok || dataDir == "" {
			dataDir = ".terraform"
		}
		p, ok := filepath.Join(dataDir, "environment"), true
		if !filepath.IsAbs(dataDir) {
			p, ok = d.join(dir, filepath.ToSlash(dataDir)+"/environment")
		}
		if ok {
			if b, err := d.readFile(p); err == nil && strings.TrimSpace(string(b)) != "" {
				rv.workspace = strings.TrimSpace(string(b))
			}
		}
	}
	if d != nil {
		entries, err := d.readDir(dir)
		if err == nil {
			var auto []string
			for _, e := range entries {
				if e.IsDir() {
					continue
				}
				if n := e.Name(); strings.HasSuffix(n, ".auto.tfvars") || strings.HasSuffix(n, ".auto.tfvars.json") {
					auto = append(auto, n)
				}
			}
			slices.Sort(auto)
			names := []string{"terraform.tfvars", "terraform.tfvars.json"}
			for _, n := range append(names, auto...) {
				if !slices.ContainsFunc(entries, func(e os.DirEntry) bool { return !e.IsDir() && e.Name() == n }) {
					continue
				}
				p, _ := d.join(dir, n)
				diags = append(diags, rv.readFile(d, p)...)
			}
		}
	}
	for _, a := range vars.Args {
		switch {
		case a.Var != "" && a.File != "":
			diags = append(diags, sourceless("Invalid variable option", fmt.Sprintf("A variable option sets either a -var value (%q) or a -var-file path (%q), not both.", a.Var, a.File)))
		case a.File != "":
			p, ok := a.File, true
			if d != nil && !filepath.IsAbs(p) {
				p, ok = d.join(dir, filepath.ToSlash(p))
			}
			if !ok {
				diags = append(diags, sourceless("Failed to read variables file", fmt.Sprintf("The variables file %s is outside the file system the configuration is read from.", a.File)))
				continue
			}
			rd := d
			if rd == nil {
				rd = osDirs{}
			}
			diags = append(diags, rv.readFile(rd, p)...)
		default:
			name, val, ok := strings.Cut(a.Var, "=")
			switch {
			case !ok:
				diags = append(diags, sourceless("Invalid -var option", fmt.Sprintf("The -var option %q is not a variable name and a value separated by an equals sign, like -var=\"key=value\".", a.Var)))
			case strings.HasSuffix(name, " "):
				// The value is not repeated: it may be a secret.
				diags = append(diags, sourceless("Invalid -var option", fmt.Sprintf("The variable name %q of a -var option ends with a space. Did you mean -var=\"%s=...\"?", name, strings.TrimSuffix(name, " "))))
			default:
				rv.given[name] = givenValue{str: val, from: "the -var option"}
			}
		}
	}
	return rv, diags
}

func sourceless(summary, detail string) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail}
}

var varBlockSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "variable", LabelNames: []string{"name"}}}}

// readFile reads one variables file into rv.given.
func (rv *rootValues) readFile(d dirs, name string) hcl.Diagnostics {
	src, err := d.readFile(name)
	if err != nil {
		if os.IsNotExist(err) {
			return hcl.Diagnostics{sourceless("Failed to read variables file", fmt.Sprintf("The variables file %s does not exist.", name))}
		}
		return hcl.Diagnostics{sourceless("Failed to read variables file", fmt.Sprintf("Cannot read the variables file %s: %s.", name, err))}
	}
	isJSON := strings.HasSuffix(name, ".json") ||
		!strings.HasSuffix(name, ".tfvars") && strings.HasPrefix(strings.TrimSpace(string(src)), "{")
	var f *hcl.File
	var diags hcl.Diagnostics
	if isJSON {
		if diags = hclguard.JSON(src, name); diags == nil {
			f, diags = hcljson.Parse(src, name)
		}
	} else {
		if diags = hclguard.Native(src, name); diags == nil {
			f, diags = hclsyntax.ParseConfig(src, name, hcl.InitialPos)
		}
	}
	if f == nil || f.Body == nil || diags.HasErrors() {
		return diags
	}
	content, _, _ := f.Body.PartialContent(varBlockSchema)
	for _, b := range content.Blocks {
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Variable declaration in .tfvars file",
			Detail:   fmt.Sprintf("A variables file assigns values to variables declared in the configuration; it does not declare them. To set variable %q here, write %s = VALUE.", b.Labels[0], b.Labels[0]),
			Subject:  b.TypeRange.Ptr(),
		})
	}
	if diags.HasErrors() {
		return diags
	}
	attrs, more := f.Body.JustAttributes()
	diags = append(diags, more...)
	for n, a := range attrs {
		rv.given[n] = givenValue{expr: a.Expr, from: a.Range.String()}
	}
	return diags
}

// varDecl is a variable block: its attributes, an override file's
// replacing the primary file's one by one.
type varDecl struct {
	name  string
	attrs map[string]*hcl.Attribute
	decl  hcl.Range
}

var varDeclSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "default"}, {Name: "type"}, {Name: "nullable"}, {Name: "sensitive"}, {Name: "ephemeral"}, {Name: "const"},
}}

// staticScope evaluates a module's source and version arguments before
// anything else is known: from literals, the module's input variables,
// its locals, path.*, terraform.workspace and functions, as OpenTofu's
// static evaluation does.
type staticScope struct {
	dir     string // module directory, for path.module
	rootDir string // the root module's directory as given, "" if not known
	call    string // the module's call path, "" for the root
	vars    map[string]*varDecl
	locals  map[string]*hcl.Attribute
	// root holds the given values of a root module; nil for a module
	// called by another, whose variables come from its caller.
	root *rootValues
	// caller is the call of a module that is not the root: its
	// arguments give the variables' values.
	caller    *ModuleCall
	lookupEnv func(string) (string, bool)

	mu        sync.Mutex // held while a called module evaluates an argument
	varVals   map[string]cty.Value
	localVals map[string]cty.Value
	stack     []string // locals being evaluated, for cycles
	subject   string   // what is evaluated, for messages: `the source of module "x"`
}

func newStaticScope() *staticScope {
	return &staticScope{
		vars:      map[string]*varDecl{},
		locals:    map[string]*hcl.Attribute{},
		varVals:   map[string]cty.Value{},
		localVals: map[string]cty.Value{},
	}
}

var localsSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
	{Type: "variable", LabelNames: []string{"name"}},
	{Type: "locals"},
}}

// declare records the variable and locals blocks of one file.
func (s *staticScope) declare(body hcl.Body, override bool) {
	content, _, _ := body.PartialContent(localsSchema)
	for _, b := range content.Blocks {
		switch b.Type {
		case "variable":
			attrs, _, _ := b.Body.PartialContent(varDeclSchema)
			v := s.vars[b.Labels[0]]
			if v == nil || !override {
				v = &varDecl{name: b.Labels[0], attrs: map[string]*hcl.Attribute{}, decl: b.DefRange}
				s.vars[v.name] = v
			}
			for n, a := range attrs.Attributes {
				v.attrs[n] = a
			}
		case "locals":
			attrs, _ := b.Body.JustAttributes()
			for n, a := range attrs {
				s.locals[n] = a
			}
		}
	}
}

// marks of values that must not become a module source or version.
const (
	markSensitive = staticMark("sensitive")
	markEphemeral = staticMark("ephemeral")
)

type staticMark string

// stringValue evaluates one argument of a module call and converts it to
// a string. null is false with no diagnostics.
func (s *staticScope) stringValue(expr hcl.Expression, subject string) (string, bool, hcl.Diagnostics) {
	s.subject = subject
	v, diags := s.eval(expr)
	if diags.HasErrors() {
		return "", false, diags
	}
	bad := func(summary, detail string) (string, bool, hcl.Diagnostics) {
		return "", false, append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: expr.Range().Ptr()})
	}
	switch {
	case slices.ContainsFunc(markList(v), func(m any) bool { return m == markSensitive }):
		return bad("Sensitive value not allowed", fmt.Sprintf("Sensitive values, or values derived from sensitive values, cannot be used as %s.", lowerFirst(subject)))
	case slices.ContainsFunc(markList(v), func(m any) bool { return m == markEphemeral }):
		return bad("Ephemeral value not allowed", fmt.Sprintf("Ephemeral values, or values derived from ephemeral values, cannot be used as %s.", lowerFirst(subject)))
	}
	v, _ = v.UnmarkDeep()
	if v.IsNull() {
		return "", false, diags
	}
	if !v.IsWhollyKnown() {
		return bad("Unknown value", fmt.Sprintf("The value of %s is not known before anything is applied; it must be known when the configuration is read.", lowerFirst(subject)))
	}
	str, err := convert.Convert(v, cty.String)
	if err != nil {
		return bad("Invalid value", fmt.Sprintf("The value of %s must be a string: %s.", lowerFirst(subject), err))
	}
	return str.AsString(), true, diags
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

func markList(v cty.Value) []any {
	var out []any
	_, pvm := v.UnmarkDeepWithPaths()
	for _, pm := range pvm {
		for m := range pm.Marks {
			out = append(out, m)
		}
	}
	return out
}

// modulePath is path.module as OpenTofu gives it, running in the root
// module's directory: "." for the root module, else the module's
// directory relative to the root's (slash-separated), or as given when
// that is not known.
func (s *staticScope) modulePath() string {
	if s.call == "" {
		return "."
	}
	if s.rootDir != "" {
		if rel, err := filepath.Rel(s.rootDir, s.dir); err == nil {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.ToSlash(s.dir)
}

// workspace is the selected workspace: the root module's, else
// TF_WORKSPACE, else "default".
func (s *staticScope) workspace() string {
	for sc := s; sc != nil; {
		if sc.root != nil {
			return sc.root.workspace
		}
		if sc.caller == nil {
			break
		}
		sc = sc.caller.static
	}
	if ws, ok := s.lookupEnv("TF_WORKSPACE"); ok && ws != "" {
		return ws
	}
	return "default"
}

// evalAs evaluates expr for a called module: subject is what the value
// becomes there, for messages.
func (s *staticScope) evalAs(expr hcl.Expression, subject string) (cty.Value, hcl.Diagnostics) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.subject
	s.subject = subject
	defer func() { s.subject = prev }()
	return s.eval(expr)
}

// eval evaluates expr in the static scope.
func (s *staticScope) eval(expr hcl.Expression) (cty.Value, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	vars := map[string]map[string]cty.Value{}
	set := func(root, name string, v cty.Value) {
		if vars[root] == nil {
			vars[root] = map[string]cty.Value{}
		}
		vars[root][name] = v
	}
	for _, t := range expr.Variables() {
		root := t.RootName()
		name := ""
		if len(t) > 1 {
			if a, ok := t[1].(hcl.TraverseAttr); ok {
				name = a.Name
			}
		}
		rng := t.SourceRange()
		bad := func(summary, detail string) {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: rng.Ptr()})
		}
		switch {
		case (root == "var" || root == "local" || root == "path" || root == "terraform") && name == "":
			bad("Invalid reference", fmt.Sprintf("A reference to %s must name an attribute, like %s.NAME.", root, root))
		case root == "var":
			v, more := s.variable(name, rng)
			diags = append(diags, more...)
			set(root, name, v)
		case root == "local":
			v, more := s.local(name, rng)
			diags = append(diags, more...)
			set(root, name, v)
		case root == "path":
			switch name {
			case "module":
				set(root, name, cty.StringVal(s.modulePath()))
			case "root":
				if s.rootDir == "" {
					bad("Root module directory not known", fmt.Sprintf("%s uses path.root, which is not known when module %q is read on its own.", s.subject, s.call))
					continue
				}
				// OpenTofu runs in the root module's directory.
				set(root, name, cty.StringVal("."))
			case "cwd":
				wd, err := os.Getwd()
				if err != nil {
					bad("Failed to get working directory", fmt.Sprintf("The value of path.cwd cannot be determined: %s.", err))
					continue
				}
				set(root, name, cty.StringVal(filepath.ToSlash(wd)))
			default:
				bad(`Invalid "path" attribute`, fmt.Sprintf(`The "path" object has no attribute %q: it has cwd, module and root.`, name))
			}
		case root == "terraform" && name == "workspace":
			set(root, name, cty.StringVal(s.workspace()))
		case root == "module":
			bad("Module output not supported in static context", fmt.Sprintf("%s cannot use %s: it must be known when the configuration is read, before any module is installed.", s.subject, traversalString(t)))
		default:
			bad("Dynamic value in static context", fmt.Sprintf("%s cannot use %s: it must be known when the configuration is read, from literals, variables, locals, path and terraform.workspace only.", s.subject, traversalString(t)))
		}
	}
	if diags.HasErrors() {
		return cty.DynamicVal, diags
	}
	ctx := &hcl.EvalContext{Variables: map[string]cty.Value{}, Functions: staticFunctions}
	for root, m := range vars {
		ctx.Variables[root] = cty.ObjectVal(m)
	}
	v, more := expr.Value(ctx)
	return v, append(diags, more...)
}

func traversalString(t hcl.Traversal) string {
	var b strings.Builder
	for _, step := range t {
		switch st := step.(type) {
		case hcl.TraverseRoot:
			b.WriteString(st.Name)
		case hcl.TraverseAttr:
			b.WriteString("." + st.Name)
		default:
			b.WriteString("[...]")
		}
	}
	return b.String()
}

// variable returns the value of input variable name, used at rng.
func (s *staticScope) variable(name string, rng hcl.Range) (cty.Value, hcl.Diagnostics) {
	if v, ok := s.varVals[name]; ok {
		return v, nil
	}
	decl, ok := s.vars[name]
	if !ok {
		return cty.DynamicVal, variableDiag("Reference to undeclared input variable", fmt.Sprintf("%s uses var.%s, which is not declared: declare it with a variable block.", s.subject, name), rng)
	}
	spec, diags := s.readDeclaration(decl, rng)
	if diags.HasErrors() {
		return cty.DynamicVal, diags
	}
	val, from, more := s.givenValue(decl, spec, rng)
	if diags = append(diags, more...); diags.HasErrors() {
		return cty.DynamicVal, diags
	}
	if spec.typeDefaults != nil && !val.IsNull() {
		val = spec.typeDefaults.Apply(val)
	}
	cv, err := convert.Convert(val, spec.ty)
	if err != nil {
		return cty.DynamicVal, variableDiag("Invalid value for input variable", fmt.Sprintf("The value of var.%s from %s does not match its type: %s.", name, from, err), rng)
	}
	if cv.IsNull() && !spec.nullable {
		if spec.def == cty.NilVal {
			return cty.DynamicVal, variableDiag("Required variable not set", fmt.Sprintf("var.%s, declared at %s, may not be null.", name, decl.decl), rng)
		}
		cv = spec.def
	}
	if spec.sensitive {
		cv = cv.Mark(markSensitive)
	}
	if spec.ephemeral {
		cv = cv.Mark(markEphemeral)
	}
	s.varVals[name] = cv
	return cv, nil
}

// variableDiag is the one error diagnostic of a variable reference.
func variableDiag(summary, detail string, subject hcl.Range) hcl.Diagnostics {
	return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: subject.Ptr()}}
}

// variableSpec is what a variable block declares, read without
// evaluation: its type (and the type's defaults), how a string given for
// it is parsed, its flags, and its default (cty.NilVal if none),
// converted to its type.
type variableSpec struct {
	ty                             cty.Type
	mode                           parseMode
	typeDefaults                   *typeexpr.Defaults
	nullable, sensitive, ephemeral bool
	def                            cty.Value
}

// literal is the value of the declaration's attribute attr, a literal, or
// cty.NilVal if it is not set.
func (decl *varDecl) literal(attr string) (cty.Value, hcl.Diagnostics) {
	a, ok := decl.attrs[attr]
	if !ok {
		return cty.NilVal, nil
	}
	v, diags := a.Expr.Value(nil)
	return v, diags
}

// flag is the value of the declaration's boolean attribute attr, or def
// if it is not set.
func (decl *varDecl) flag(attr string, def bool) (bool, hcl.Diagnostics) {
	v, diags := decl.literal(attr)
	if diags.HasErrors() || v == cty.NilVal {
		return def, diags
	}
	b, err := convert.Convert(v, cty.Bool)
	if err != nil || b.IsNull() || !b.IsKnown() {
		a := decl.attrs[attr]
		return def, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid variable declaration", Detail: fmt.Sprintf("The %s argument of variable %q must be true or false.", attr, decl.name), Subject: a.Expr.Range().Ptr()}}
	}
	return b.True(), nil
}

// readDeclaration reads the variable block decl, referred to at rng. A
// variable declared "const = false" cannot be read early.
func (s *staticScope) readDeclaration(decl *varDecl, rng hcl.Range) (variableSpec, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	spec := variableSpec{ty: cty.DynamicPseudoType, mode: modeLiteral}
	if a, ok := decl.attrs["type"]; ok {
		switch hcl.ExprAsKeyword(a.Expr) {
		case "list":
			spec.ty, spec.mode = cty.List(cty.DynamicPseudoType), modeHCL
		case "map":
			spec.ty, spec.mode = cty.Map(cty.DynamicPseudoType), modeHCL
		default:
			t, d, more := typeexpr.TypeConstraintWithDefaults(a.Expr)
			diags = append(diags, more...)
			spec.ty, spec.typeDefaults = t, d
			if !t.IsPrimitiveType() {
				spec.mode = modeHCL
			}
		}
	}
	var more hcl.Diagnostics
	spec.nullable, more = decl.flag("nullable", true)
	diags = append(diags, more...)
	spec.sensitive, more = decl.flag("sensitive", false)
	diags = append(diags, more...)
	spec.ephemeral, more = decl.flag("ephemeral", false)
	diags = append(diags, more...)
	if a, ok := decl.attrs["const"]; ok {
		c, more := decl.flag("const", false)
		diags = append(diags, more...)
		if !more.HasErrors() && !c {
			return spec, variableDiag("Unable to use variable in static context", fmt.Sprintf("%s uses var.%s, which is declared \"const = false\" at %s.", s.subject, decl.name, a.Range), rng)
		}
	}
	spec.def, more = decl.literal("default")
	diags = append(diags, more...)
	if diags.HasErrors() {
		return spec, diags
	}
	if spec.def != cty.NilVal {
		d, err := convert.Convert(spec.def, spec.ty)
		if err != nil {
			return spec, variableDiag("Invalid default value for variable", fmt.Sprintf("The default value of variable %q does not match its type: %s.", decl.name, err), decl.attrs["default"].Expr.Range())
		}
		spec.def = d
	}
	return spec, diags
}

// givenValue is the value the variable declared by decl is given, and
// where it comes from: the root module's values (-var, files, the
// environment), the argument of the module call, or the default. A
// variable with none of these cannot be read early.
func (s *staticScope) givenValue(decl *varDecl, spec variableSpec, rng hcl.Range) (cty.Value, string, hcl.Diagnostics) {
	name := decl.name
	given, ok := givenValue{}, false
	if s.root != nil {
		given, ok = s.root.lookup(name)
	}
	switch {
	case ok && given.expr != nil:
		val, diags := given.expr.Value(nil)
		return val, given.from, diags
	case ok:
		val, diags := spec.mode.parse(name, given.str)
		return val, given.from, diags
	case s.caller != nil && s.caller.args[name] != nil:
		arg := s.caller.args[name]
		val, diags := s.caller.static.evalAs(arg.Expr, fmt.Sprintf("The argument %s of the call of module %q", name, s.caller.Path))
		return val, "the argument at " + arg.Range.String(), diags
	case spec.def != cty.NilVal && (s.root != nil || s.caller != nil):
		return spec.def, "its default", nil
	case s.caller != nil:
		return cty.DynamicVal, "", variableDiag("Missing required variable in module call", fmt.Sprintf("%s uses var.%s, which has no default, and the call of module %q at %s gives no argument %s.", s.subject, name, s.caller.Path, s.caller.DeclRange, name), rng)
	case s.root != nil:
		return cty.DynamicVal, "", variableDiag("No value for required variable", fmt.Sprintf("%s uses var.%s, which has no default and was given no value, so it is not known when the configuration is read. Give it a value with -var, -var-file, terraform.tfvars, a *.auto.tfvars file or the environment variable TF_VAR_%s, or a default in its declaration at %s.", s.subject, name, name, decl.decl), rng)
	default:
		return cty.DynamicVal, "", variableDiag("Variable not known early", fmt.Sprintf("%s uses var.%s, whose value comes from the call of module %q, which was not given to the reader (ReadOptions.Caller).", s.subject, name, s.call), rng)
	}
}

// local returns the value of local value name, used at rng.
func (s *staticScope) local(name string, rng hcl.Range) (cty.Value, hcl.Diagnostics) {
	if v, ok := s.localVals[name]; ok {
		return v, nil
	}
	a, ok := s.locals[name]
	if !ok {
		return cty.DynamicVal, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Reference to undeclared local value", Detail: fmt.Sprintf("%s uses local.%s, which is not declared in a locals block.", s.subject, name), Subject: rng.Ptr()}}
	}
	if slices.Contains(s.stack, name) {
		return cty.DynamicVal, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Circular reference", Detail: fmt.Sprintf("local.%s refers to itself, through %s.", name, strings.Join(s.stack, ", ")), Subject: a.Range.Ptr()}}
	}
	s.stack = append(s.stack, name)
	v, diags := s.eval(a.Expr)
	s.stack = s.stack[:len(s.stack)-1]
	if !diags.HasErrors() {
		s.localVals[name] = v
	}
	return v, diags
}

type parseMode bool

const (
	modeLiteral parseMode = false
	modeHCL     parseMode = true
)

// parse reads a -var or environment value as OpenTofu does: the string
// itself for a primitive-typed or untyped variable, else an expression.
func (m parseMode) parse(name, s string) (cty.Value, hcl.Diagnostics) {
	if m == modeLiteral {
		return cty.StringVal(s), nil
	}
	src := []byte(s)
	file := fmt.Sprintf("<value for var.%s>", name)
	if diags := hclguard.Native(src, file); diags != nil {
		return cty.DynamicVal, diags
	}
	expr, diags := hclsyntax.ParseExpression(src, file, hcl.InitialPos)
	if diags.HasErrors() {
		return cty.DynamicVal, diags
	}
	v, more := expr.Value(nil)
	return v, append(diags, more...)
}

// replaceFunc is OpenTofu's replace: substr between slashes is a regular
// expression, else a plain string.
var replaceFunc = function.New(&function.Spec{
	Params: []function.Parameter{
		{Name: "str", Type: cty.String},
		{Name: "substr", Type: cty.String},
		{Name: "replace", Type: cty.String},
	},
	Type: function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		if sub := args[1].AsString(); len(sub) > 1 && sub[0] == '/' && sub[len(sub)-1] == '/' {
			return stdlib.RegexReplace(args[0], cty.StringVal(sub[1:len(sub)-1]), args[2])
		}
		return stdlib.Replace(args[0], args[1], args[2])
	},
})

// lengthFunc is OpenTofu's length: of a string (in characters), a
// collection or a structural value.
var lengthFunc = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "value", Type: cty.DynamicPseudoType, AllowDynamicType: true}},
	Type:   function.StaticReturnType(cty.Number),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		if args[0].Type() == cty.String {
			return stdlib.Strlen(args[0])
		}
		return stdlib.Length(args[0])
	},
})

// staticFunctions are the functions of OpenTofu's language that early
// evaluation offers: those go-cty's standard library implements with
// OpenTofu's meaning, and replace and length. Others are "Call to
// unknown function" errors.
var staticFunctions = map[string]function.Function{
	"abs":             stdlib.AbsoluteFunc,
	"can":             tryfunc.CanFunc,
	"ceil":            stdlib.CeilFunc,
	"chomp":           stdlib.ChompFunc,
	"chunklist":       stdlib.ChunklistFunc,
	"coalescelist":    stdlib.CoalesceListFunc,
	"compact":         stdlib.CompactFunc,
	"concat":          stdlib.ConcatFunc,
	"contains":        stdlib.ContainsFunc,
	"csvdecode":       stdlib.CSVDecodeFunc,
	"distinct":        stdlib.DistinctFunc,
	"element":         stdlib.ElementFunc,
	"flatten":         stdlib.FlattenFunc,
	"floor":           stdlib.FloorFunc,
	"format":          stdlib.FormatFunc,
	"formatlist":      stdlib.FormatListFunc,
	"indent":          stdlib.IndentFunc,
	"join":            stdlib.JoinFunc,
	"jsondecode":      stdlib.JSONDecodeFunc,
	"jsonencode":      stdlib.JSONEncodeFunc,
	"keys":            stdlib.KeysFunc,
	"length":          lengthFunc,
	"log":             stdlib.LogFunc,
	"lookup":          stdlib.LookupFunc,
	"lower":           stdlib.LowerFunc,
	"max":             stdlib.MaxFunc,
	"merge":           stdlib.MergeFunc,
	"min":             stdlib.MinFunc,
	"parseint":        stdlib.ParseIntFunc,
	"pow":             stdlib.PowFunc,
	"range":           stdlib.RangeFunc,
	"regex":           stdlib.RegexFunc,
	"regexall":        stdlib.RegexAllFunc,
	"replace":         replaceFunc,
	"reverse":         stdlib.ReverseListFunc,
	"setintersection": stdlib.SetIntersectionFunc,
	"setproduct":      stdlib.SetProductFunc,
	"setsubtract":     stdlib.SetSubtractFunc,
	"setunion":        stdlib.SetUnionFunc,
	"signum":          stdlib.SignumFunc,
	"slice":           stdlib.SliceFunc,
	"sort":            stdlib.SortFunc,
	"split":           stdlib.SplitFunc,
	"strrev":          stdlib.ReverseFunc,
	"substr":          stdlib.SubstrFunc,
	"title":           stdlib.TitleFunc,
	"tobool":          stdlib.MakeToFunc(cty.Bool),
	"tolist":          stdlib.MakeToFunc(cty.List(cty.DynamicPseudoType)),
	"tomap":           stdlib.MakeToFunc(cty.Map(cty.DynamicPseudoType)),
	"tonumber":        stdlib.MakeToFunc(cty.Number),
	"toset":           stdlib.MakeToFunc(cty.Set(cty.DynamicPseudoType)),
	"tostring":        stdlib.MakeToFunc(cty.String),
	"trim":            stdlib.TrimFunc,
	"trimprefix":      stdlib.TrimPrefixFunc,
	"trimspace":       stdlib.TrimSpaceFunc,
	"trimsuffix":      stdlib.TrimSuffixFunc,
	"try":             tryfunc.TryFunc,
	"upper":           stdlib.UpperFunc,
	"values":          stdlib.ValuesFunc,
	"zipmap":          stdlib.ZipmapFunc,
}
