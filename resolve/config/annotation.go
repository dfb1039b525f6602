package config

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/tflock/tflock/internal/lazyre"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source/address"
)

// AnnotationPrefix starts a tflock annotation: a comment inside a module
// block of a native syntax file, "# tflock: version = "~> 1.0"" (or with
// "//" or "/* */"), that gives a git or OCI module call a version
// constraint which OpenTofu and Terraform do not read. They refuse a
// version argument on such a call, which is the module-locking RFC's form;
// a comment they ignore. With the annotation, the call's git "ref" or OCI
// "tag" argument is managed by tflock: Init writes the selected version's
// tag there, so that a stock tofu or terraform installs the locked
// version (see [ModuleCall].ManagedRef). "version" is the only key.
const AnnotationPrefix = "tflock:"

var annotationVersion = lazyre.New(`^version\s*=\s*"([^"\\]*)"$`)

// annotation reads the tflock annotation of module block b into mc, if
// it has one; versionArg says whether the block has a version argument.
// It returns false after reporting an error.
//
// An annotation is a comment between the block's braces, outside its
// arguments and nested blocks: on a line of its own, after an argument
// (also in a block written on one line), never inside an argument's
// value or a nested block, where it is reported as ignored (see also
// strayAnnotations).
func (r *reader) annotation(b *hcl.Block, mc *ModuleCall, versionArg bool) bool {
	blk := r.syntaxBlock(b)
	if blk == nil {
		return true // JSON syntax: no comments
	}
	name := mc.Name
	var found []hclsyntax.Token
	for _, tok := range r.annotationTokens(blk.Body.SrcRange.Filename) {
		if !insideBraces(blk, tok.Range) {
			continue
		}
		if where := nestedIn(blk.Body, tok.Range); where != "" {
			r.warnAnnotation(tok.Range, "The comment %q is inside %s of module block %q, where tflock does not read it: a tflock annotation constrains the module block it is written in, directly between the block's braces. Move it there, or remove it.", strings.TrimSpace(string(tok.Bytes)), where, name)
			continue
		}
		found = append(found, tok)
	}
	if len(found) == 0 {
		if versionArg {
			// An override's version argument replaces a base block's
			// annotation.
			mc.ManagedRef = false
		}
		return true
	}
	rng := found[0].Range
	bad := func(summary, format string, args ...any) bool {
		r.errorf(rng, summary, format, args...)
		return false
	}
	if len(found) > 1 {
		rng = found[1].Range
		return bad("Duplicate tflock annotation", "The module block %q has more than one %q comment; give its version constraint once.", name, AnnotationPrefix)
	}
	text, _ := annotationText(found[0].Bytes)
	m := annotationVersion().FindStringSubmatch(text)
	if m == nil {
		return bad("Invalid tflock annotation", "The comment %q in module block %q is not a tflock annotation tflock knows: write # %s version = \"CONSTRAINT\".", strings.TrimSpace(string(found[0].Bytes)), name, AnnotationPrefix)
	}
	if versionArg {
		return bad("Invalid tflock annotation", "The module %q has both a version argument and a %q comment: keep one.", name, AnnotationPrefix)
	}
	vc, err := versions.ParseModuleConstraints(m[1])
	if err != nil {
		return bad("Invalid version constraint", "%s", badConstraint(m[1], "module", name, fmt.Errorf("in its %q comment: %w", AnnotationPrefix, err)))
	}
	rem, ok := mc.Address.(address.Remote)
	switch {
	case !ok || (rem.Kind != address.KindGit && rem.Kind != address.KindOCI):
		return bad("Invalid tflock annotation", "The module %q has the source %q: a %q version comment applies only to git and OCI sources (a registry module takes a version argument).", name, address.Redact(mc.Source), AnnotationPrefix)
	case rem.Kind == address.KindOCI && rem.Digest != "":
		return bad("Invalid tflock annotation", "The module %q is pinned by the digest in its source %q; tflock can only manage a tag: remove the digest argument or the %q comment.", name, address.Redact(mc.Source), AnnotationPrefix)
	}
	// The source is rewritten in place: it must be a plain string literal.
	src := r.srcs[mc.SourceRange.Filename]
	if lit := `"` + mc.Source + `"`; mc.SourceRange.End.Byte > len(src) || string(src[mc.SourceRange.Start.Byte:mc.SourceRange.End.Byte]) != lit {
		return bad("Invalid tflock annotation", "The source of module %q must be a plain quoted string (no variables, functions or escapes) for tflock to manage its %s argument.", name, ManagedArgument(rem))
	}
	mc.Constraints, mc.HasVersion, mc.VersionRange, mc.ManagedRef = vc, true, rng, true
	return true
}

// ManagedArgument is the source argument a managed call's version is
// written to (see [ModuleCall].ManagedRef): "ref" for git, "tag" for
// OCI.
func ManagedArgument(rem address.Remote) string {
	if rem.Kind == address.KindOCI {
		return "tag"
	}
	return "ref"
}

// syntaxBlock returns the native syntax block of b, or nil for JSON.
func (r *reader) syntaxBlock(b *hcl.Block) *hclsyntax.Block {
	body, ok := r.syntax[b.DefRange.Filename]
	if !ok {
		return nil
	}
	for _, blk := range body.Blocks {
		if blk.DefRange() == b.DefRange {
			return blk
		}
	}
	return nil
}

// insideBraces reports whether rng is between blk's braces.
func insideBraces(blk *hclsyntax.Block, rng hcl.Range) bool {
	return rng.Start.Byte >= blk.OpenBraceRange.End.Byte && rng.End.Byte <= blk.CloseBraceRange.Start.Byte
}

// nestedIn names the argument or nested block of body that holds rng
// ("the argument \"tags\""), or "" if none does.
func nestedIn(body *hclsyntax.Body, rng hcl.Range) string {
	for name, a := range body.Attributes {
		if a.SrcRange.ContainsOffset(rng.Start.Byte) {
			return fmt.Sprintf("the argument %q", name)
		}
	}
	for _, nb := range body.Blocks {
		if nb.Range().ContainsOffset(rng.Start.Byte) {
			return fmt.Sprintf("a nested %q block", nb.Type)
		}
	}
	return ""
}

// annotationTokens returns the annotation comments of a native syntax
// file read by r, in order.
func (r *reader) annotationTokens(name string) []hclsyntax.Token {
	// An annotation comment spells the prefix whole, on one line: a file
	// that does not has none, and is not lexed a second time (a third of
	// the time of reading a file).
	if !bytes.Contains(r.srcs[name], []byte(AnnotationPrefix)) {
		return nil
	}
	var out []hclsyntax.Token
	for _, tok := range r.fileTokens(name) {
		if tok.Type != hclsyntax.TokenComment {
			continue
		}
		if _, ok := annotationText(tok.Bytes); ok {
			out = append(out, tok)
		}
	}
	return out
}

// strayAnnotations warns about each annotation comment of a native
// syntax file that no module block holds between its braces (above a
// block, at the top level, in another kind of block): tflock reads none
// of them, and a user who wrote one meant a constraint.
func (r *reader) strayAnnotations(file *hcl.File) {
	body, ok := file.Body.(*hclsyntax.Body)
	if !ok {
		return
	}
	var modules []*hclsyntax.Block
	for _, blk := range body.Blocks {
		if blk.Type == "module" {
			modules = append(modules, blk)
		}
	}
	for _, tok := range r.annotationTokens(body.SrcRange.Filename) {
		if slices.ContainsFunc(modules, func(blk *hclsyntax.Block) bool { return insideBraces(blk, tok.Range) }) {
			continue
		}
		where := "outside any module block"
		for _, blk := range body.Blocks {
			if blk.Range().ContainsOffset(tok.Range.Start.Byte) {
				where = fmt.Sprintf("inside a %q block", blk.Type)
				if blk.Type == "module" && len(blk.Labels) > 0 {
					where = fmt.Sprintf("in the header of module block %q, outside its braces", blk.Labels[0])
				}
				break
			}
			if blk.Range().Start.Byte >= tok.Range.End.Byte {
				if blk.Type == "module" && len(blk.Labels) > 0 && r.startsLine(tok.Range) {
					where = fmt.Sprintf("above module block %q, outside its braces", blk.Labels[0])
				}
				break
			}
		}
		r.warnAnnotation(tok.Range, "The comment %q is %s, where tflock does not read it: a tflock annotation constrains the module block it is written in, directly between the block's braces. Move it there, or remove it.", strings.TrimSpace(string(tok.Bytes)), where)
	}
}

// startsLine reports whether only spaces precede rng on its line.
func (r *reader) startsLine(rng hcl.Range) bool {
	src := r.srcs[rng.Filename]
	if rng.Start.Byte > len(src) {
		return false
	}
	line := src[:rng.Start.Byte]
	if i := bytes.LastIndexByte(line, '\n'); i >= 0 {
		line = line[i+1:]
	}
	return len(bytes.TrimSpace(line)) == 0
}

// warnAnnotation reports a tflock annotation that is ignored.
func (r *reader) warnAnnotation(rng hcl.Range, format string, args ...any) {
	r.diags = append(r.diags, &hcl.Diagnostic{
		Severity: hcl.DiagWarning,
		Summary:  "Ignored tflock annotation",
		Detail:   fmt.Sprintf(format, args...),
		Subject:  rng.Ptr(),
	})
}

// fileTokens returns the tokens of a native syntax file read by r.
func (r *reader) fileTokens(name string) hclsyntax.Tokens {
	if toks, ok := r.tokens[name]; ok {
		return toks
	}
	toks, _ := hclsyntax.LexConfig(r.srcs[name], name, hcl.InitialPos)
	if r.tokens == nil {
		r.tokens = map[string]hclsyntax.Tokens{}
	}
	r.tokens[name] = toks
	return toks
}

// annotationText returns a comment's text after [AnnotationPrefix], if it
// is an annotation.
func annotationText(comment []byte) (string, bool) {
	c := bytes.TrimSpace(comment)
	switch {
	case bytes.HasPrefix(c, []byte("#")):
		c = c[1:]
	case bytes.HasPrefix(c, []byte("//")):
		c = c[2:]
	case bytes.HasPrefix(c, []byte("/*")):
		// A block comment over several lines may start each with "*".
		var lines [][]byte
		for _, l := range bytes.Split(bytes.TrimSuffix(c[2:], []byte("*/")), []byte("\n")) {
			if l = bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(l), []byte("*"))); len(l) > 0 {
				lines = append(lines, l)
			}
		}
		c = bytes.Join(lines, []byte(" "))
	}
	rest, ok := bytes.CutPrefix(bytes.TrimSpace(c), []byte(AnnotationPrefix))
	if !ok {
		return "", false
	}
	return string(bytes.TrimSpace(rest)), true
}

// ManagedAddress reads src, a managed call's source that [ManagedSource]
// returned, as the configuration reader reads a module source: the
// [ModuleCall].Address of the call whose source becomes src. It fails
// for a source that is not git or OCI.
func ManagedAddress(src string) (address.ModuleSource, error) {
	ms, err := address.ParseModuleSource(src)
	if err != nil {
		return nil, err
	}
	if rem, ok := ms.(address.Remote); !ok || (rem.Kind != address.KindGit && rem.Kind != address.KindOCI) {
		return nil, fmt.Errorf("module source %q is neither git nor OCI", address.Redact(src))
	}
	return ms, nil
}

// ManagedSource returns a managed call's source (see
// [ModuleCall].ManagedRef) with its git "ref" or OCI "tag" argument set
// to tag, everything else byte for byte as it was: the argument's value
// is replaced where it stands, or the argument is appended to the query.
// It fails for a source that is not git or OCI.
func ManagedSource(src, tag string) (string, error) {
	ms, err := address.ParseModuleSource(src)
	if err != nil {
		return "", err
	}
	rem, ok := ms.(address.Remote)
	if !ok || (rem.Kind != address.KindGit && rem.Kind != address.KindOCI) {
		return "", fmt.Errorf("module source %q is neither git nor OCI", address.Redact(src))
	}
	key := ManagedArgument(rem) + "="
	base, query, hasQuery := strings.Cut(src, "?")
	if !hasQuery {
		return base + "?" + key + tag, nil
	}
	args := strings.Split(query, "&")
	for i, a := range args {
		if strings.HasPrefix(a, key) {
			args[i] = key + tag
			return base + "?" + strings.Join(args, "&"), nil
		}
	}
	// Appended: after a bare "?" or a trailing "&", no separator.
	if query == "" || strings.HasSuffix(query, "&") {
		return src + key + tag, nil
	}
	return src + "&" + key + tag, nil
}
