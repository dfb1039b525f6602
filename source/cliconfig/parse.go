package cliconfig

import (
	"fmt"
	"math/big"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/json"
	tfaddr "github.com/hashicorp/terraform-registry-address"
	svchost "github.com/hashicorp/terraform-svchost"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/tflock/tflock/internal/hclguard"
	"github.com/tflock/tflock/internal/provaddr"
	"github.com/tflock/tflock/source"
)

var topSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "plugin_cache_dir"},
		{Name: "plugin_cache_may_break_dependency_lock_file"},
		{Name: "disable_checkpoint"},
		{Name: "disable_checkpoint_signature"},
	},
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "host", LabelNames: []string{"hostname"}},
		{Type: "credentials", LabelNames: []string{"hostname"}},
		{Type: "credentials_helper", LabelNames: []string{"name"}},
		{Type: "provider_installation"},
		{Type: "providers"},    // legacy, ignored
		{Type: "provisioners"}, // legacy, ignored
	},
}

var installSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "dev_overrides"}},
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "direct"},
		{Type: "filesystem_mirror"},
		{Type: "network_mirror"},
		{Type: "oci_mirror"},
	},
}

// Parse parses one CLI configuration file. A filename ending in ".json" is
// read as HCL's JSON syntax, any other as the native syntax. Environment
// variables in plugin_cache_dir are not expanded here (see [Load]).
//
// OpenTofu reads these files with the first version of HCL, which allows
// quoted argument names; the one place where they matter, the
// dev_overrides block ("hashicorp/null" = "/path"), is accepted here too.
// Unknown top-level arguments and blocks are reported as warnings, since
// OpenTofu ignores them.
//
// The diagnostics may hold warnings even when the configuration is usable;
// check HasErrors. The returned Config is never nil and holds what could be
// read.
func Parse(src []byte, filename string) (*Config, hcl.Diagnostics) {
	cfg := &Config{Files: []string{filename}}
	var file *hcl.File
	var diags hcl.Diagnostics
	isJSON := strings.HasSuffix(filename, ".json")
	if isJSON {
		if diags = hclguard.JSON(src, filename); diags == nil {
			file, diags = json.Parse(src, filename)
		}
	} else {
		if diags = hclguard.Native(src, filename); diags == nil {
			file, diags = hclsyntax.ParseConfig(rewriteDevOverrides(src, filename), filename, hcl.InitialPos)
		}
	}
	if diags.HasErrors() || file == nil {
		return cfg, diags
	}
	if sb, ok := file.Body.(*hclsyntax.Body); ok {
		diags = append(diags, unknownTopLevel(sb)...)
	}
	content, _, moreDiags := file.Body.PartialContent(topSchema)
	diags = append(diags, moreDiags...)

	for name, attr := range content.Attributes {
		switch name {
		case "plugin_cache_dir":
			s, d := stringValue(attr.Expr, "plugin_cache_dir")
			diags = append(diags, d...)
			cfg.PluginCacheDir = s
		case "plugin_cache_may_break_dependency_lock_file":
			b, d := boolValue(attr.Expr, name)
			diags = append(diags, d...)
			cfg.PluginCacheMayBreakDependencyLockFile = b
		}
	}
	for _, block := range content.Blocks {
		switch block.Type {
		case "host":
			diags = append(diags, decodeHost(cfg, block)...)
		case "credentials":
			diags = append(diags, decodeCredentials(cfg, block)...)
		case "credentials_helper":
			diags = append(diags, decodeHelper(cfg, block)...)
		case "provider_installation":
			diags = append(diags, decodeInstallation(cfg, block)...)
		}
	}
	diags = append(diags, cfg.Validate()...)
	return cfg, diags
}

// unknownTopLevel warns about top-level items OpenTofu would ignore.
func unknownTopLevel(body *hclsyntax.Body) hcl.Diagnostics {
	known := map[string]bool{}
	for _, a := range topSchema.Attributes {
		known[a.Name] = true
	}
	for _, b := range topSchema.Blocks {
		known[b.Type] = true
	}
	var diags hcl.Diagnostics
	names := make([]string, 0, len(body.Attributes))
	for n := range body.Attributes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !known[n] {
			r := body.Attributes[n].NameRange
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Unsupported argument",
				Detail: fmt.Sprintf("An argument named %q is not expected in the CLI configuration; it is ignored.", n), Subject: &r})
			delete(body.Attributes, n) // so that PartialContent does not report it as well
		}
	}
	kept := body.Blocks[:0]
	for _, b := range body.Blocks {
		if known[b.Type] {
			kept = append(kept, b)
			continue
		}
		r := b.TypeRange
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Unsupported block type",
			Detail: fmt.Sprintf("Blocks of type %q are not expected in the CLI configuration; this one is ignored.", b.Type), Subject: &r})
	}
	body.Blocks = kept
	return diags
}

// rewriteDevOverrides turns `dev_overrides {` into `dev_overrides={` (same
// length, same lines), so that the block's quoted provider addresses parse
// as the keys of an object expression, as HCL 1 accepts them.
func rewriteDevOverrides(src []byte, filename string) []byte {
	if !strings.Contains(string(src), "dev_overrides") {
		return src
	}
	tokens, _ := hclsyntax.LexConfig(src, filename, hcl.InitialPos)
	var out []byte
	for i := 0; i+1 < len(tokens); i++ {
		t := tokens[i]
		if t.Type != hclsyntax.TokenIdent || string(t.Bytes) != "dev_overrides" {
			continue
		}
		if i > 0 && tokens[i-1].Type != hclsyntax.TokenNewline && tokens[i-1].Type != hclsyntax.TokenOBrace {
			continue
		}
		next := tokens[i+1]
		if next.Type != hclsyntax.TokenOBrace {
			continue
		}
		if out == nil {
			out = append([]byte(nil), src...)
		}
		end := t.Range.End.Byte
		if gap := out[end:next.Range.Start.Byte]; len(gap) > 0 && strings.Trim(string(gap), " \t") == "" {
			out[end] = '='
		} else {
			// No room: insert, shifting the rest of this line by one column.
			out = append(out[:end], append([]byte{'='}, out[end:]...)...)
			return rewriteDevOverrides(out, filename)
		}
	}
	if out == nil {
		return src
	}
	return out
}

// literalContext makes each variable an expression refers to evaluate to
// its own "${name}" spelling. OpenTofu reads the CLI configuration with HCL
// 1, which has no interpolation: "${HOME}/cache" and the oci_mirror
// template "${namespace}/${type}" are literal text there, expanded later.
func literalContext(expr hcl.Expression) *hcl.EvalContext {
	vars := map[string]cty.Value{}
	for _, tr := range expr.Variables() {
		name := tr.RootName()
		vars[name] = cty.StringVal("${" + name + "}")
	}
	return &hcl.EvalContext{Variables: vars}
}

func stringValue(expr hcl.Expression, what string) (string, hcl.Diagnostics) {
	v, diags := expr.Value(literalContext(expr))
	if diags.HasErrors() {
		return "", diags
	}
	if v.IsNull() || !v.IsKnown() {
		return "", invalid(expr, what, "a string")
	}
	v, err := convert.Convert(v, cty.String)
	if err != nil {
		return "", invalid(expr, what, "a string")
	}
	return v.AsString(), nil
}

func boolValue(expr hcl.Expression, what string) (bool, hcl.Diagnostics) {
	v, diags := expr.Value(nil)
	if diags.HasErrors() {
		return false, diags
	}
	if v.IsNull() || !v.IsKnown() {
		return false, invalid(expr, what, "true or false")
	}
	v, err := convert.Convert(v, cty.Bool)
	if err != nil {
		return false, invalid(expr, what, "true or false")
	}
	return v.True(), nil
}

func stringList(expr hcl.Expression, what string) ([]string, hcl.Diagnostics) {
	v, diags := expr.Value(nil)
	if diags.HasErrors() {
		return nil, diags
	}
	if v.IsNull() || !v.IsWhollyKnown() || !(v.Type().IsListType() || v.Type().IsTupleType() || v.Type().IsSetType()) {
		return nil, invalid(expr, what, "a list of strings")
	}
	var out []string
	for it := v.ElementIterator(); it.Next(); {
		_, ev := it.Element()
		s, err := convert.Convert(ev, cty.String)
		if err != nil || s.IsNull() {
			return nil, invalid(expr, what, "a list of strings")
		}
		out = append(out, s.AsString())
	}
	return out, nil
}

func invalid(expr hcl.Expression, what, want string) hcl.Diagnostics {
	r := expr.Range()
	return hcl.Diagnostics{{
		Severity: hcl.DiagError,
		Summary:  "Invalid " + what,
		Detail:   fmt.Sprintf("The %s argument must be %s.", what, want),
		Subject:  &r,
	}}
}

func hostLabel(block *hcl.Block, kind string) (string, hcl.Diagnostics) {
	given := block.Labels[0]
	h, err := svchost.ForComparison(given)
	if err != nil {
		r := block.LabelRanges[0]
		return "", hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Invalid hostname",
			Detail:   fmt.Sprintf("The %s %q block has an invalid hostname: %s.", kind, given, err),
			Subject:  &r,
		}}
	}
	return h.String(), nil
}

func decodeHost(cfg *Config, block *hcl.Block) hcl.Diagnostics {
	host, diags := hostLabel(block, "host")
	content, d := block.Body.Content(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "services"}}})
	diags = append(diags, d...)
	if diags.HasErrors() {
		return diags
	}
	h := &Host{Services: map[string]any{}, DeclRange: block.DefRange}
	if attr, ok := content.Attributes["services"]; ok {
		v, d := attr.Expr.Value(nil)
		diags = append(diags, d...)
		if d.HasErrors() {
			return diags
		}
		if !v.IsWhollyKnown() || v.IsNull() || !(v.Type().IsObjectType() || v.Type().IsMapType()) {
			return append(diags, invalid(attr.Expr, "services", "an object mapping service identifiers to URLs")...)
		}
		for it := v.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			h.Services[k.AsString()] = goValue(ev)
		}
	}
	if cfg.Hosts == nil {
		cfg.Hosts = map[string]*Host{}
	}
	cfg.Hosts[host] = h
	return diags
}

// goValue converts a known cty value to string, bool, *big.Float,
// []any or map[string]any.
func goValue(v cty.Value) any {
	if v.IsNull() || !v.IsKnown() {
		return nil
	}
	t := v.Type()
	switch {
	case t == cty.String:
		return v.AsString()
	case t == cty.Bool:
		return v.True()
	case t == cty.Number:
		return new(big.Float).Copy(v.AsBigFloat())
	case t.IsObjectType() || t.IsMapType():
		m := map[string]any{}
		for it := v.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			m[k.AsString()] = goValue(ev)
		}
		return m
	case t.IsListType() || t.IsTupleType() || t.IsSetType():
		var l []any
		for it := v.ElementIterator(); it.Next(); {
			_, ev := it.Element()
			l = append(l, goValue(ev))
		}
		return l
	}
	return nil
}

func decodeCredentials(cfg *Config, block *hcl.Block) hcl.Diagnostics {
	host, diags := hostLabel(block, "credentials")
	attrs, d := block.Body.JustAttributes()
	diags = append(diags, d...)
	if diags.HasErrors() {
		return diags
	}
	c := &Credentials{DeclRange: block.DefRange}
	if attr, ok := attrs["token"]; ok {
		v, d := attr.Expr.Value(nil)
		if d.HasErrors() || v.IsNull() || !v.IsKnown() || v.Type() != cty.String {
			// Never echo the value: it is a secret.
			r := attr.Expr.Range()
			return append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid token",
				Detail: "The token argument of a credentials block must be a literal string.", Subject: &r})
		}
		c.Token = v.AsString()
	}
	if cfg.Credentials == nil {
		cfg.Credentials = map[string]*Credentials{}
	}
	cfg.Credentials[host] = c
	return diags
}

func decodeHelper(cfg *Config, block *hcl.Block) hcl.Diagnostics {
	content, diags := block.Body.Content(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "args"}}})
	h := &CredentialsHelper{Name: block.Labels[0], DeclRange: block.DefRange}
	if attr, ok := content.Attributes["args"]; ok {
		args, d := stringList(attr.Expr, "args")
		diags = append(diags, d...)
		h.Args = args
	}
	cfg.helperBlocks = append(cfg.helperBlocks, block.DefRange)
	if cfg.CredentialsHelper == nil {
		cfg.CredentialsHelper = h
	}
	return diags
}

func decodeInstallation(cfg *Config, block *hcl.Block) hcl.Diagnostics {
	cfg.installBlocks = append(cfg.installBlocks, block.DefRange)
	if cfg.ProviderInstallation != nil {
		return nil // Validate reports the duplicate
	}
	pi := &ProviderInstallation{DeclRange: block.DefRange}
	cfg.ProviderInstallation = pi
	content, diags := block.Body.Content(installSchema)
	if attr, ok := content.Attributes["dev_overrides"]; ok {
		diags = append(diags, decodeDevOverrides(pi, attr)...)
		for _, b := range content.Blocks {
			if b.DefRange.Start.Byte < attr.Range.Start.Byte {
				r := attr.NameRange
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid provider_installation method block",
					Detail:  "The dev_overrides block must appear before all other installation methods, because development overrides always have the highest priority.",
					Subject: &r})
				break
			}
		}
	}
	for _, b := range content.Blocks {
		m := Method{DeclRange: b.DefRange}
		var locAttr string
		switch b.Type {
		case "direct":
			m.Kind = Direct
		case "filesystem_mirror":
			m.Kind, locAttr = FilesystemMirror, "path"
		case "network_mirror":
			m.Kind, locAttr = NetworkMirror, "url"
		case "oci_mirror":
			m.Kind, locAttr = OCIMirror, "repository_template"
		}
		schema := &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "include"}, {Name: "exclude"}}}
		if m.Kind == Direct || m.Kind == NetworkMirror {
			schema.Attributes = append(schema.Attributes, hcl.AttributeSchema{Name: "download_retry_count"})
		}
		if m.Kind == NetworkMirror {
			schema.Attributes = append(schema.Attributes, hcl.AttributeSchema{Name: "trust_all_hashes"})
		}
		if locAttr != "" {
			schema.Attributes = append(schema.Attributes, hcl.AttributeSchema{Name: locAttr, Required: true})
		}
		mc, d := b.Body.Content(schema)
		diags = append(diags, d...)
		if d.HasErrors() {
			continue
		}
		if locAttr != "" {
			expr := mc.Attributes[locAttr].Expr
			var s string
			var d hcl.Diagnostics
			s, d = stringValue(expr, locAttr)
			diags = append(diags, d...)
			if s == "" && !d.HasErrors() {
				r := mc.Attributes[locAttr].Expr.Range()
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid " + b.Type + " block",
					Detail: fmt.Sprintf("The %s argument of a %s block must not be empty.", locAttr, b.Type), Subject: &r})
			}
			m.Location = s
		}
		for _, which := range []string{"include", "exclude"} {
			attr, ok := mc.Attributes[which]
			if !ok {
				continue
			}
			list, d := stringList(attr.Expr, which)
			diags = append(diags, d...)
			for _, p := range list {
				if _, err := source.ParseProviderPattern(p); err != nil {
					r := attr.Expr.Range()
					diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid provider source " + map[string]string{"include": "inclusion", "exclude": "exclusion"}[which] + " patterns",
						Detail: fmt.Sprintf("CLI config specifies invalid provider %s patterns: %s.", map[string]string{"include": "inclusion", "exclude": "exclusion"}[which], err), Subject: &r})
				}
			}
			if which == "include" {
				m.Include = list
			} else {
				m.Exclude = list
			}
		}
		if attr, ok := mc.Attributes["download_retry_count"]; ok {
			n, d := intValue(attr.Expr, "download_retry_count")
			diags = append(diags, d...)
			if !d.HasErrors() {
				m.DownloadRetryCount = &n
			}
		}
		if attr, ok := mc.Attributes["trust_all_hashes"]; ok {
			b, d := boolValue(attr.Expr, "trust_all_hashes")
			diags = append(diags, d...)
			m.TrustAllHashes = b && !d.HasErrors()
		}
		if m.Kind == OCIMirror && m.Location != "" {
			diags = append(diags, checkOCITemplate(m, mc.Attributes["repository_template"].Expr.Range())...)
		}
		pi.Methods = append(pi.Methods, m)
	}
	return diags
}

func intValue(expr hcl.Expression, what string) (int, hcl.Diagnostics) {
	v, diags := expr.Value(nil)
	if diags.HasErrors() {
		return 0, diags
	}
	if v.IsNull() || !v.IsKnown() || v.Type() != cty.Number {
		return 0, invalid(expr, what, "a whole number")
	}
	bf := v.AsBigFloat()
	n, acc := bf.Int64()
	if acc != big.Exact || n < 0 || n > 1000 {
		return 0, invalid(expr, what, "a whole number between 0 and 1000")
	}
	return int(n), nil
}

func decodeDevOverrides(pi *ProviderInstallation, attr *hcl.Attribute) hcl.Diagnostics {
	v, diags := attr.Expr.Value(nil)
	if diags.HasErrors() {
		return diags
	}
	if v.IsNull() || !v.IsWhollyKnown() || !(v.Type().IsObjectType() || v.Type().IsMapType()) {
		return invalid(attr.Expr, "dev_overrides", `a block mapping provider addresses to directories, such as "hashicorp/null" = "/path"`)
	}
	pi.DevOverrides = map[tfaddr.Provider]string{}
	for it := v.ElementIterator(); it.Next(); {
		k, ev := it.Element()
		r := attr.Expr.Range()
		addr, err := parseProviderAddr(k.AsString())
		if err != nil {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid provider installation dev overrides",
				Detail: fmt.Sprintf("The entry %q is not a valid provider source string: %s.", k.AsString(), err), Subject: &r})
			continue
		}
		s, err := convert.Convert(ev, cty.String)
		if err != nil || s.IsNull() || s.AsString() == "" {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid provider directory",
				Detail: fmt.Sprintf("The dev_overrides value for %q must be a directory path.", k.AsString()), Subject: &r})
			continue
		}
		pi.DevOverrides[addr] = filepath.Clean(s.AsString())
	}
	return diags
}

// parseProviderAddr parses a provider source address with OpenTofu's
// default registry host, as tflock's one provider-address parser reads it.
func parseProviderAddr(s string) (tfaddr.Provider, error) {
	return provaddr.Parse(s, "")
}
