package lockfile

import (
	"bytes"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	tfaddr "github.com/hashicorp/terraform-registry-address"
	"github.com/zclconf/go-cty/cty"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/internal/hclguard"
	"github.com/tflock/tflock/internal/provaddr"
	"github.com/tflock/tflock/resolve/versions"
)

// Patch is the preserving writer, for bots and wrappers that edit a lock
// file people also read. It returns src changed as little as possible so
// that it holds the provider and module locks of f:
//
//   - a block for a lock f does not have is removed, with the comment lines
//     directly above it;
//   - in a block for a lock f has, only the arguments whose value differs
//     are rewritten (an unchanged hash set is left as it is, even if it is
//     not sorted), missing ones are added before the closing brace with
//     the indentation of the block's other arguments (a single-line block
//     is first opened up into one argument per line), and ones f leaves
//     empty are removed;
//   - a lock src has no block for is added in canonical form, next to the
//     blocks of its kind, in sorted position when src is sorted;
//   - everything else (the header, comments, blank lines, unknown blocks
//     and arguments, blocks whose label it cannot read, line endings) is
//     kept byte for byte.
//
// src must be syntactically valid HCL; its content need not be a valid
// lock file. Use [File.Bytes] for the canonical form instead.
func Patch(src []byte, filename string, f *File) ([]byte, error) {
	if diags := hclguard.Native(src, filename); diags != nil {
		return nil, &ParseError{Filename: filename, Diagnostics: diags}
	}
	hf, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, &ParseError{Filename: filename, Diagnostics: diags}
	}
	p := &patcher{src: src, nl: "\n", opened: map[*hclsyntax.Block]bool{}}
	if bytes.Contains(src, []byte("\r\n")) {
		p.nl = "\r\n"
	}
	w := &patchWalk{
		p:       p,
		f:       f,
		seenP:   map[tfaddr.Provider]bool{},
		seenM:   map[string]bool{},
		seenS:   map[string]bool{},
		lastMod: -1,
	}
	for _, blk := range hf.Body.(*hclsyntax.Body).Blocks {
		if len(blk.Labels) != 1 {
			continue
		}
		start, end := p.lineStart(blk.TypeRange.Start.Byte), p.lineEnd(blk.CloseBraceRange.End.Byte)
		switch blk.Type {
		case "provider":
			w.patchProvider(blk, start, end)
		case "module":
			if form := formOf(blk); form == formBySource {
				w.patchBySource(blk, start, end)
			} else {
				w.patchModule(blk, form, start, end)
			}
		}
	}
	w.insertProviders()
	w.insertModules()
	w.insertBySource()
	return p.apply(), nil
}

// patchWalk is Patch's walk over the blocks of a lock file: the blocks
// kept, and the locks already in the file.
type patchWalk struct {
	p           *patcher
	f           *File
	provs, mods []keptBlock
	seenP       map[tfaddr.Provider]bool
	seenM       map[string]bool
	seenS       map[string]bool // locks keyed by source address, by source and version
	lastMod     int             // end of the last module block kept
}

// keptBlock is a block Patch keeps (patched or not).
type keptBlock struct {
	key   string
	start int // offset of the block's first line
	end   int // offset after the block's last line
}

// patchProvider patches a provider block to the file's lock of its
// provider, or removes it if the file has none. A block of an unreadable
// address, or a second block of one provider, is left as it is.
func (w *patchWalk) patchProvider(blk *hclsyntax.Block, start, end int) {
	addr, diag := parseLockedProvider(blk.Labels[0])
	if diag != nil || w.seenP[addr] {
		return
	}
	w.seenP[addr] = true
	lock := w.f.providers[addr]
	if lock == nil {
		w.p.removeBlock(blk)
		return
	}
	w.p.patchProvider(blk, lock)
	w.provs = append(w.provs, keptBlock{addr.String(), start, end})
}

// patchBySource rewrites a module lock keyed by source address to the
// file's lock of that source and version if the two differ, or removes it
// if the file has none. An unreadable block is left as it is.
func (w *patchWalk) patchBySource(blk *hclsyntax.Block, start, end int) {
	m := decodeAlone(w.p.src, blk, formBySource)
	if m == nil {
		return // unreadable or unmappable: kept as it is
	}
	w.lastMod = max(w.lastMod, end)
	key := m.Source + "@" + m.Version.String()
	if w.seenS[key] {
		return
	}
	w.seenS[key] = true
	i := slices.IndexFunc(w.f.bySource, func(o *ModuleLock) bool { return compareBySource(o, m) == 0 })
	switch {
	case i < 0:
		w.p.removeBlock(blk)
	case !sameModuleLock(m, w.f.bySource[i]):
		wf := hclwrite.NewEmptyFile()
		writeBySource(wf.Body(), w.f.bySource[i])
		w.p.replaceBlock(start, end, wf.Bytes())
	}
}

// patchModule patches a module block keyed by call path (in tflock's form
// or the RFC's) to the file's lock of that call, or removes it if the file
// has none. An unreadable block, or a second block of one call, is left as
// it is.
func (w *patchWalk) patchModule(blk *hclsyntax.Block, form moduleForm, start, end int) {
	path := blk.Labels[0]
	var rfc *ModuleLock
	if form == formByCallPath {
		if rfc = decodeAlone(w.p.src, blk, form); rfc == nil {
			return // unreadable or unmappable: kept as it is
		}
	}
	if w.seenM[path] {
		return
	}
	w.seenM[path] = true
	lock := w.f.modules[path]
	switch {
	case lock == nil:
		w.p.removeBlock(blk)
		return
	case rfc == nil:
		w.p.patchModule(blk, lock)
	case !sameModuleLock(rfc, lock):
		// A changed lock in an RFC form is written in tflock's
		// form: the two forms do not mix in one block.
		wf := hclwrite.NewEmptyFile()
		writeModule(wf.Body(), lock)
		w.p.replaceBlock(start, end, wf.Bytes())
	}
	w.mods = append(w.mods, keptBlock{path, start, end})
}

// insertAt finds where a new block goes among the kept blocks of its
// kind: before the first one that sorts after it, else after the last, or
// where fallback says if none is kept.
func insertAt(list []keptBlock, less func(a, b string) bool, key string, fallback func() (int, bool)) (int, bool) {
	for _, k := range list {
		if less(key, k.key) {
			return k.start, true
		}
	}
	if len(list) > 0 {
		return list[len(list)-1].end, false
	}
	return fallback()
}

// beforeModules is where a provider block goes when none is kept: before
// the first kept module block, else at the end of the file.
func (w *patchWalk) beforeModules() (int, bool) {
	if len(w.mods) > 0 {
		return w.mods[0].start, true
	}
	return len(w.p.src), false
}

// afterProviders is where a module block goes when none is kept: after
// the last kept provider block, else where a provider block would go.
func (w *patchWalk) afterProviders() (int, bool) {
	if len(w.provs) > 0 {
		return w.provs[len(w.provs)-1].end, false
	}
	return w.beforeModules()
}

// insertProviders inserts the blocks of the provider locks not in the
// file, each in the order of provider addresses.
func (w *patchWalk) insertProviders() {
	for lock := range w.f.Providers() {
		if w.seenP[lock.Addr] {
			continue
		}
		pos, before := insertAt(w.provs, func(a, b string) bool {
			// Both are the String of a parsed address, so they parse.
			pa, _ := provaddr.Parse(a, "")
			pb, _ := provaddr.Parse(b, "")
			return compareProviders(pa, pb) < 0
		}, lock.Addr.String(), w.beforeModules)
		wf := hclwrite.NewEmptyFile()
		writeProvider(wf.Body(), lock)
		w.p.insertBlock(pos, before, wf.Bytes())
	}
}

// insertModules inserts the blocks of the module locks keyed by call path
// not in the file, each in the order of call paths.
func (w *patchWalk) insertModules() {
	for lock := range w.f.Modules() {
		if w.seenM[lock.Path] {
			continue
		}
		pos, before := insertAt(w.mods, func(a, b string) bool { return a < b }, lock.Path, w.afterProviders)
		wf := hclwrite.NewEmptyFile()
		writeModule(wf.Body(), lock)
		w.p.insertBlock(pos, before, wf.Bytes())
	}
}

// insertBySource inserts the blocks of the module locks keyed by source
// address not in the file, after the last module block.
func (w *patchWalk) insertBySource() {
	for _, lock := range w.f.sortedBySource() {
		if w.seenS[lock.Source+"@"+lock.Version.String()] {
			continue
		}
		pos, before := w.lastMod, false
		if len(w.mods) > 0 {
			pos = max(pos, w.mods[len(w.mods)-1].end)
		}
		if pos < 0 {
			pos, before = w.afterProviders()
		}
		wf := hclwrite.NewEmptyFile()
		writeBySource(wf.Body(), lock)
		w.p.insertBlock(pos, before, wf.Bytes())
	}
}

// decodeAlone reads one module block in an RFC form, or returns nil if it
// is invalid or cannot be mapped (Patch then keeps it as it is).
func decodeAlone(src []byte, blk *hclsyntax.Block, form moduleForm) *ModuleLock {
	d := &decoder{opts: ParseOptions{Lenient: true}, src: src, file: New()}
	var m *ModuleLock
	if form == formBySource {
		m = d.decodeBySource(blk)
	} else {
		m = d.decodeByCallPath(blk)
	}
	if d.diags.HasErrors() {
		return nil
	}
	return m
}

// sameModuleLock reports whether two module locks hold the same things.
func sameModuleLock(a, b *ModuleLock) bool {
	return a.Source == b.Source && a.Subdir == b.Subdir && a.Version == b.Version && a.Ref == b.Ref && a.Tag == b.Tag &&
		canonicalConstraints(a.Constraints, versions.ParseModuleConstraints) == canonicalConstraints(b.Constraints, versions.ParseModuleConstraints) &&
		a.Commit == b.Commit && a.Digest == b.Digest &&
		slices.Equal(normalizeHashes(slices.Clone(a.Hashes)), normalizeHashes(slices.Clone(b.Hashes))) &&
		slices.Equal(a.Unknown, b.Unknown)
}

// replaceBlock replaces the lines of a block (start and end as from
// lineStart and lineEnd) by canonical block text.
func (p *patcher) replaceBlock(start, end int, text []byte) {
	block := strings.TrimLeft(string(text), "\n")
	if end == len(p.src) && !bytes.HasSuffix(p.src, []byte("\n")) {
		block = strings.TrimSuffix(block, "\n")
	}
	p.add(start, end, block)
}

type edit struct {
	start, end int
	text       string
	seq        int
}

type patcher struct {
	src    []byte
	nl     string
	edits  []edit
	opened map[*hclsyntax.Block]bool // single-line blocks already opened up
}

func (p *patcher) add(start, end int, text string) {
	p.edits = append(p.edits, edit{start, end, strings.ReplaceAll(text, "\n", p.nl), len(p.edits)})
}

func (p *patcher) apply() []byte {
	slices.SortStableFunc(p.edits, func(a, b edit) int {
		if a.start != b.start {
			return a.start - b.start
		}
		// Insertions before a deletion at the same place.
		return (a.end - a.start) - (b.end - b.start)
	})
	var out bytes.Buffer
	cur := 0
	for _, e := range p.edits {
		if e.start < cur { // overlapping edit: cannot happen, but never corrupt
			continue
		}
		out.Write(p.src[cur:e.start])
		out.WriteString(e.text)
		cur = e.end
	}
	out.Write(p.src[cur:])
	return out.Bytes()
}

func (p *patcher) lineStart(off int) int {
	return bytes.LastIndexByte(p.src[:off], '\n') + 1
}

func (p *patcher) lineEnd(off int) int {
	if i := bytes.IndexByte(p.src[off:], '\n'); i >= 0 {
		return off + i + 1
	}
	return len(p.src)
}

func isBlankLine(b []byte) bool { return len(bytes.TrimSpace(b)) == 0 }

// removeBlock deletes a block's lines and the comment lines directly
// above it, and one blank line so that the spacing stays the same.
func (p *patcher) removeBlock(blk *hclsyntax.Block) {
	start := p.lineStart(blk.TypeRange.Start.Byte)
	end := p.lineEnd(blk.CloseBraceRange.End.Byte)
	for start > 0 {
		prev := p.lineStart(start - 1)
		t := bytes.TrimSpace(p.src[prev:start])
		if !bytes.HasPrefix(t, []byte("#")) && !bytes.HasPrefix(t, []byte("//")) {
			break
		}
		start = prev
	}
	if start > 0 {
		prev := p.lineStart(start - 1)
		if isBlankLine(p.src[prev:start]) && (end == len(p.src) || isBlankLine(p.src[end:p.lineEnd(end)])) {
			start = prev
		}
	}
	p.add(start, end, "")
}

// insertBlock inserts canonical block text (which starts with a newline
// from the writer) before or after a position at a line start.
func (p *patcher) insertBlock(pos int, before bool, text []byte) {
	block := strings.TrimLeft(string(text), "\n")
	if before {
		p.add(pos, pos, block+"\n")
		return
	}
	prefix := "\n"
	if pos > 0 && p.src[pos-1] != '\n' {
		prefix = "\n\n"
	}
	if pos == 0 {
		prefix = ""
	}
	p.add(pos, pos, prefix+block)
}

func quoted(s string) string {
	return string(hclwrite.TokensForValue(cty.StringVal(s)).Bytes())
}

// stringValue returns an attribute's static string value.
func stringValue(attr *hclsyntax.Attribute) (string, bool) {
	v, diags := attr.Expr.Value(nil)
	if diags.HasErrors() || v.IsNull() || !v.IsKnown() || v.Type() != cty.String {
		return "", false
	}
	return v.AsString(), true
}

// setString makes the attribute hold want ("" removes it).
func (p *patcher) setString(blk *hclsyntax.Block, name, want string, same func(have string) bool) {
	attr := blk.Body.Attributes[name]
	switch {
	case attr == nil && want == "":
	case attr == nil:
		p.addAttr(blk, name+" = "+quoted(want))
	case want == "":
		p.removeAttr(attr)
	default:
		if have, ok := stringValue(attr); ok && (have == want || same != nil && same(have)) {
			return
		}
		r := attr.Expr.Range()
		p.add(r.Start.Byte, r.End.Byte, quoted(want))
	}
}

func (p *patcher) removeAttr(attr *hclsyntax.Attribute) {
	start, end := attr.SrcRange.Start.Byte, attr.SrcRange.End.Byte
	ls, le := p.lineStart(start), p.lineEnd(end)
	if isBlankLine(p.src[ls:start]) && isBlankLine(p.src[end:le]) {
		start, end = ls, le
	}
	p.add(start, end, "")
}

// indents returns the indentation of a block's own line, the indentation
// of its arguments (that of its first argument on a line of its own, else
// the block's plus two spaces), and the step between the two (used to
// indent list elements below an argument).
func (p *patcher) indents(blk *hclsyntax.Block) (block, attr, step string) {
	ts := blk.TypeRange.Start.Byte
	if pre := p.src[p.lineStart(ts):ts]; isBlankLine(pre) {
		block = string(pre)
	}
	attr = block + "  "
	first := -1
	for _, a := range blk.Body.Attributes {
		if s := a.SrcRange.Start.Byte; first < 0 || s < first {
			first = s
		}
	}
	if first >= 0 {
		if pre := p.src[p.lineStart(first):first]; len(pre) > 0 && isBlankLine(pre) {
			attr = string(pre)
		}
	}
	step = "  "
	if rest, ok := strings.CutPrefix(attr, block); ok && rest != "" {
		step = rest
	}
	return block, attr, step
}

// addAttr inserts an argument (its text may span lines, unindented) as a
// line of its own before the block's closing brace. A single-line block
// (`provider "x" { version = "1.0.0" }`) is first opened up into the
// multi-line form, since HCL allows one argument only in a single-line block.
func (p *patcher) addAttr(blk *hclsyntax.Block, text string) {
	blockIndent, attrIndent, _ := p.indents(blk)
	text = attrIndent + strings.ReplaceAll(text, "\n", "\n"+attrIndent) + "\n"
	brace := blk.CloseBraceRange.Start.Byte
	if blk.OpenBraceRange.Start.Line == blk.CloseBraceRange.Start.Line {
		if !p.opened[blk] {
			p.opened[blk] = true
			open := blk.OpenBraceRange.End.Byte
			inner := p.src[open:brace]
			if len(bytes.TrimSpace(inner)) == 0 {
				p.add(open, brace, "\n")
			} else {
				first := open + len(inner) - len(bytes.TrimLeft(inner, " \t"))
				last := open + len(bytes.TrimRight(inner, " \t"))
				p.add(open, first, "\n"+attrIndent)
				p.add(last, brace, "\n")
			}
		}
		p.add(brace, brace, text+blockIndent)
		return
	}
	ls := p.lineStart(brace)
	if isBlankLine(p.src[ls:brace]) {
		p.add(ls, ls, text)
		return
	}
	p.add(brace, brace, "\n"+text+blockIndent)
}

func (p *patcher) setHashes(blk *hclsyntax.Block, want []hash.Hash) {
	want = normalizeHashes(slices.Clone(want))
	attr := blk.Body.Attributes["hashes"]
	if attr == nil {
		if len(want) > 0 {
			_, _, step := p.indents(blk)
			p.addAttr(blk, "hashes = "+hashListText(want, "", step))
		}
		return
	}
	if len(want) == 0 {
		p.removeAttr(attr)
		return
	}
	if exprs, diags := hcl.ExprList(attr.Expr); !diags.HasErrors() {
		var have []hash.Hash
		for _, e := range exprs {
			v, diags := e.Value(nil)
			if diags.HasErrors() || v.IsNull() || v.Type() != cty.String {
				have = nil
				break
			}
			have = append(have, hash.Hash(v.AsString()))
		}
		if have != nil && slices.Equal(normalizeHashes(have), want) {
			return
		}
	}
	_, indent, step := p.indents(blk)
	as := attr.SrcRange.Start.Byte
	if pre := p.src[p.lineStart(as):as]; isBlankLine(pre) {
		indent = string(pre)
	}
	r := attr.Expr.Range()
	p.add(r.Start.Byte, r.End.Byte, hashListText(want, indent, step))
}

// hashListText lays out a hash list one per line, indented one step below
// an argument at the given indentation.
func hashListText(hs []hash.Hash, indent, step string) string {
	var b strings.Builder
	b.WriteString("[\n")
	for _, h := range hs {
		b.WriteString(indent + step + quoted(string(h)) + ",\n")
	}
	b.WriteString(indent + "]")
	return b.String()
}

func (p *patcher) patchProvider(blk *hclsyntax.Block, lock *ProviderLock) {
	p.setString(blk, "version", lock.Version.String(), nil)
	p.setString(blk, "constraints", canonicalConstraints(lock.Constraints, versions.ParseConstraints), func(have string) bool {
		return canonicalConstraints(have, versions.ParseConstraints) == canonicalConstraints(lock.Constraints, versions.ParseConstraints)
	})
	p.setHashes(blk, lock.Hashes)
}

func (p *patcher) patchModule(blk *hclsyntax.Block, lock *ModuleLock) {
	v := ""
	if !lock.Version.IsZero() {
		v = lock.Version.String()
	}
	p.setString(blk, "version", v, nil)
	p.setString(blk, "source", lock.Source, nil)
	p.setString(blk, "subdir", lock.Subdir, nil)
	p.setString(blk, "ref", lock.Ref, nil)
	p.setString(blk, "tag", lock.Tag, nil)
	p.setString(blk, "constraints", canonicalConstraints(lock.Constraints, versions.ParseModuleConstraints), func(have string) bool {
		return canonicalConstraints(have, versions.ParseModuleConstraints) == canonicalConstraints(lock.Constraints, versions.ParseModuleConstraints)
	})
	p.setString(blk, "commit", lock.Commit, nil)
	p.setString(blk, "digest", lock.Digest, nil)
	p.setHashes(blk, lock.Hashes)
}
