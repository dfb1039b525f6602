package lockfile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"

	"github.com/tflock/tflock/internal/hclguard"
)

// ParseOptions controls parsing. The zero value parses strictly, as
// OpenTofu 1.12 does (with the differences listed in the package
// documentation).
type ParseOptions struct {
	// Lenient turns what strict parsing rejects for forward compatibility
	// into warnings: blocks and arguments of unknown type are kept (and
	// written back), and "h1:"/"zh:" hashes with malformed values, which
	// OpenTofu accepts, are kept as they are. Default false: such input is
	// an error.
	Lenient bool
}

// Parse parses the content of a lock file strictly. The filename is used
// in diagnostics only. See [ParseOptions.Parse].
func Parse(src []byte, filename string) (*File, error) {
	return ParseOptions{}.Parse(src, filename)
}

// ParseFile reads and strictly parses the lock file at path. A missing file
// is an empty lock file (as for a configuration never initialized), not an
// error. See [ParseOptions.ParseFile].
func ParseFile(path string) (*File, error) {
	return ParseOptions{}.ParseFile(path)
}

// ParseFile reads and parses the lock file at path. A missing file gives an
// empty [File] with the OpenTofu header and no error.
func (o ParseOptions) ParseFile(path string) (*File, error) {
	src, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return New(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading lock file: %w", err)
	}
	return o.Parse(src, path)
}

// Parse parses the content of a lock file. The filename is used in
// diagnostics only.
//
// If there is any error diagnostic, Parse returns a *[ParseError] holding
// every diagnostic, and a File holding whatever could be decoded (never
// nil). Otherwise the error is nil and warnings, if any, are available from
// [File.Warnings].
func (o ParseOptions) Parse(src []byte, filename string) (*File, error) {
	f := New()
	d := &decoder{opts: o, src: src, file: f}
	if diags := conflictMarkers(src, filename); len(diags) > 0 {
		return f, &ParseError{Filename: filename, Diagnostics: diags}
	}
	if diags := hclguard.Native(src, filename); diags != nil {
		return f, &ParseError{Filename: filename, Diagnostics: diags}
	}
	hf, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	d.diags = append(d.diags, diags...)
	if diags.HasErrors() || hf == nil {
		return f, &ParseError{Filename: filename, Diagnostics: d.diags}
	}
	f.header = detectHeader(src)
	d.decodeFile(hf.Body.(*hclsyntax.Body))
	if d.diags.HasErrors() {
		return f, &ParseError{Filename: filename, Diagnostics: d.diags}
	}
	f.warnings = d.diags
	return f, nil
}

// Warnings returns the warning diagnostics of the parse that produced the
// file (such as the unknown blocks a lenient parse kept), or nil.
func (f *File) Warnings() hcl.Diagnostics { return slices.Clone(f.warnings) }

type decoder struct {
	opts  ParseOptions
	src   []byte
	file  *File
	diags hcl.Diagnostics
}

func (d *decoder) add(diag *hcl.Diagnostic) { d.diags = append(d.diags, diag) }

// unknownSeverity is the severity of a forward-compatibility fault.
func (d *decoder) unknownSeverity() hcl.DiagnosticSeverity {
	if d.opts.Lenient {
		return hcl.DiagWarning
	}
	return hcl.DiagError
}

// unknownAdvice ends the detail of a forward-compatibility diagnostic.
func (d *decoder) unknownAdvice() string {
	if d.opts.Lenient {
		return " It was kept as it is, for a newer version of the lock file format."
	}
	return " Remove it, or parse leniently to keep it."
}

func (d *decoder) decodeFile(body *hclsyntax.Body) {
	seenProviders := make(map[string]hcl.Range)
	seenModules := make(map[string]hcl.Range)
	seenBySource := make(map[string]hcl.Range)
	for _, item := range sortedItems(body) {
		if item.attr != nil {
			d.unknownAttr(item.attr, "at the top level of a lock file", &d.file.unknown)
			continue
		}
		block := item.block
		switch block.Type {
		case "provider":
			if !d.checkLabels(block, "source_addr") {
				continue
			}
			p := d.decodeProvider(block)
			if p == nil {
				continue
			}
			key := p.Addr.String()
			if prev, ok := seenProviders[key]; ok {
				d.add(&hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Duplicate provider lock",
					Detail:   fmt.Sprintf("This lockfile already declared a lock for provider %s at %s. Remove one of the two blocks.", key, prev.String()),
					Subject:  block.TypeRange.Ptr(),
				})
				continue
			}
			seenProviders[key] = block.DefRange()
			d.file.providers[p.Addr] = p
		case "module":
			if !d.checkLabels(block, "path") {
				continue
			}
			var m *ModuleLock
			switch formOf(block) {
			case formBySource:
				if m = d.decodeBySource(block); m != nil {
					key := m.Source + "@" + m.Version.String()
					if prev, ok := seenBySource[key]; ok {
						d.add(&hcl.Diagnostic{
							Severity: hcl.DiagError,
							Summary:  "Duplicate module lock",
							Detail:   fmt.Sprintf("This lockfile already declared a lock for module %s at version %s at %s. Remove one of the two blocks.", m.Source, m.Version, prev.String()),
							Subject:  block.TypeRange.Ptr(),
						})
						continue
					}
					seenBySource[key] = block.DefRange()
					d.file.bySource = append(d.file.bySource, m)
					d.converted(block, formBySource, m)
				}
				continue
			case formByCallPath:
				m = d.decodeByCallPath(block)
			default:
				m = d.decodeModule(block)
			}
			if m == nil {
				continue
			}
			if prev, ok := seenModules[m.Path]; ok {
				d.add(&hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Duplicate module lock",
					Detail:   fmt.Sprintf("This lockfile already declared a lock for module call %q at %s. Remove one of the two blocks.", m.Path, prev.String()),
					Subject:  block.TypeRange.Ptr(),
				})
				continue
			}
			seenModules[m.Path] = block.DefRange()
			d.file.modules[m.Path] = m
			if form := formOf(block); form != formTflock {
				d.converted(block, form, m)
			}
		default:
			d.unknownBlock(block, `Blocks of type %q are not expected here.`, &d.file.unknown)
		}
	}
}

// checkLabels reports a block without exactly one label, as HCL does.
func (d *decoder) checkLabels(block *hclsyntax.Block, labelName string) bool {
	switch {
	case len(block.Labels) > 1:
		d.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  fmt.Sprintf("Extraneous label for %s", block.Type),
			Detail:   fmt.Sprintf("Only 1 labels (%s) are expected for %s blocks.", labelName, block.Type),
			Subject:  block.LabelRanges[1].Ptr(),
			Context:  hcl.RangeBetween(block.TypeRange, block.OpenBraceRange).Ptr(),
		})
		return false
	case len(block.Labels) == 0:
		d.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  fmt.Sprintf("Missing %s for %s", labelName, block.Type),
			Detail:   fmt.Sprintf("All %s blocks must have 1 labels (%s).", block.Type, labelName),
			Subject:  block.OpenBraceRange.Ptr(),
			Context:  hcl.RangeBetween(block.TypeRange, block.OpenBraceRange).Ptr(),
		})
		return false
	}
	return true
}

func (d *decoder) unknownAttr(attr *hclsyntax.Attribute, where string, keep *[]Unknown) {
	d.add(&hcl.Diagnostic{
		Severity: d.unknownSeverity(),
		Summary:  "Unsupported argument",
		Detail:   fmt.Sprintf("An argument named %q is not expected %s.", attr.Name, where) + d.unknownAdvice(),
		Subject:  attr.NameRange.Ptr(),
	})
	*keep = append(*keep, Unknown{Name: attr.Name, Text: d.formatted(attr.Expr.Range())})
}

func (d *decoder) unknownBlock(block *hclsyntax.Block, format string, keep *[]Unknown) {
	d.add(&hcl.Diagnostic{
		Severity: d.unknownSeverity(),
		Summary:  "Unsupported block type",
		Detail:   fmt.Sprintf(format, block.Type) + d.unknownAdvice(),
		Subject:  block.TypeRange.Ptr(),
	})
	*keep = append(*keep, Unknown{Name: block.Type, Block: true, Text: d.formatted(block.Range())})
}

// formatted returns the source in rng in canonical layout.
func (d *decoder) formatted(rng hcl.Range) string {
	return formatFragment(d.src[rng.Start.Byte:rng.End.Byte])
}

func formatFragment(b []byte) string {
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	return strings.TrimSpace(string(hclwrite.Format(b)))
}

// item is an attribute or a block of a body, for walking in source order.
type item struct {
	attr  *hclsyntax.Attribute
	block *hclsyntax.Block
}

func (it item) start() int {
	if it.attr != nil {
		return it.attr.SrcRange.Start.Byte
	}
	return it.block.TypeRange.Start.Byte
}

func sortedItems(body *hclsyntax.Body) []item {
	items := make([]item, 0, len(body.Attributes)+len(body.Blocks))
	for _, a := range body.Attributes {
		items = append(items, item{attr: a})
	}
	for _, b := range body.Blocks {
		items = append(items, item{block: b})
	}
	slices.SortFunc(items, func(a, b item) int { return a.start() - b.start() })
	return items
}

// decodeString decodes an expression that must be a static string. It
// returns ok=false (with diagnostics added) if it is not, and null=true for
// the null literal.
func (d *decoder) decodeString(expr hcl.Expression) (s string, null, ok bool) {
	var raw *string
	diags := gohcl.DecodeExpression(expr, nil, &raw)
	d.diags = append(d.diags, diags...)
	if diags.HasErrors() {
		return "", false, false
	}
	if raw == nil {
		return "", true, true
	}
	return *raw, false, true
}

// missingArgument reports a required argument that is absent. The subject
// is the block's opening brace (HCL's zero-width "missing item" position,
// widened to the brace so that it can be shown, as OpenTofu shows it).
func missingArgument(body *hclsyntax.Body, name string) *hcl.Diagnostic {
	rng := body.MissingItemRange()
	rng.End.Byte++
	rng.End.Column++
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Missing required argument",
		Detail:   fmt.Sprintf("The argument %q is required, but no definition was found. Add it, or remove the block and run the locking command again.", name),
		Subject:  &rng,
	}
}

// detectHeader reports Terraform's header flavour if the comments before
// the first block or argument include Terraform's standard first header
// line, and OpenTofu's otherwise.
func detectHeader(src []byte) Header {
	for line := range strings.Lines(string(src)) {
		t := strings.TrimSpace(line)
		switch {
		case t == "":
			continue
		case t == terraformHeaderLine:
			return HeaderTerraform
		case strings.HasPrefix(t, "#"), strings.HasPrefix(t, "//"):
			continue
		}
		break
	}
	return HeaderTofu
}

// conflictMarkers reports version-control merge conflict markers, which
// would otherwise give confusing syntax errors.
func conflictMarkers(src []byte, filename string) hcl.Diagnostics {
	var diags hcl.Diagnostics
	pos := hcl.InitialPos
	for line := range strings.Lines(string(src)) {
		content := strings.TrimRight(line, "\r\n")
		if isConflictMarker(content) {
			end := pos
			end.Byte += len(content)
			end.Column += len([]rune(content))
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Unresolved merge conflict",
				Detail:   "This line is a version control merge conflict marker. Resolve the conflict in the lock file (for example take one side, then run the locking command again to update it) before using the file.",
				Subject:  &hcl.Range{Filename: filename, Start: pos, End: end},
			})
		}
		pos.Byte += len(line)
		pos.Line++
		pos.Column = 1
	}
	return diags
}

func isConflictMarker(line string) bool {
	for _, m := range []string{"<<<<<<<", ">>>>>>>", "|||||||"} {
		if line == m || strings.HasPrefix(line, m+" ") {
			return true
		}
	}
	return line == "=======" || strings.HasPrefix(line, "======= ")
}
