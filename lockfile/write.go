package lockfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/internal/flock"
	"github.com/tflock/tflock/internal/hclguard"
	"github.com/tflock/tflock/resolve/versions"
)

const (
	tofuHeaderLine      = `# This file is maintained automatically by "tofu init".`
	terraformHeaderLine = `# This file is maintained automatically by "terraform init".`
	headerSecondLine    = `# Manual edits may be lost in future updates.`
)

// String returns the first header line of the flavour.
func (h Header) String() string {
	if h == HeaderTerraform {
		return terraformHeaderLine
	}
	return tofuHeaderLine
}

// Bytes returns the file in canonical form. For a file holding only
// provider locks this is byte for byte what OpenTofu 1.12 writes (with the
// file's header flavour); module locks and kept unknown items follow in the
// canonical form the package documentation specifies.
func (f *File) Bytes() []byte {
	if b, ok := f.providersOnlyBytes(); ok {
		return b
	}
	return f.hclwriteBytes()
}

// hclwriteBytes renders f through hclwrite: the writer of every file,
// which providersOnlyBytes is a shortcut of for the common one.
func (f *File) hclwriteBytes() []byte {
	wf := hclwrite.NewEmptyFile()
	body := wf.Body()
	body.AppendUnstructuredTokens(hclwrite.Tokens{
		{Type: hclsyntax.TokenComment, Bytes: []byte(f.header.String() + "\n")},
		{Type: hclsyntax.TokenComment, Bytes: []byte(headerSecondLine + "\n")},
	})
	for p := range f.Providers() {
		body.AppendNewline()
		writeProvider(body, p)
	}
	for m := range f.Modules() {
		body.AppendNewline()
		writeModule(body, m)
	}
	for m := range f.SourceModules() {
		body.AppendNewline()
		writeBySource(body, m)
	}
	for _, u := range f.unknown {
		if u.Block {
			body.AppendNewline()
		}
		writeUnknown(body, u)
	}
	return wf.Bytes()
}

func writeProvider(parent *hclwrite.Body, p *ProviderLock) {
	body := parent.AppendNewBlock("provider", []string{p.Addr.String()}).Body()
	writeSelection(body, p.Version, canonicalConstraints(p.Constraints, versions.ParseConstraints), p.Hashes, p.Unknown)
}

// providersOnlyBytes renders a file of provider locks only, without
// unknown items, whose strings (addresses, versions, constraints, hashes)
// are all literalString: the file of every providers lock and init. It
// writes the bytes hclwrite writes for such a file (hclwriteBytes;
// TestProvidersOnlyBytesAsHCLWrite, FuzzProvidersOnlyBytes) without its
// token trees and formatter: for 50 providers of 8 hashes, about 2 ms of
// CPU and 15,000 allocations less, after the last response of a providers
// lock. It reports false, having written nothing, for any other file.
func (f *File) providersOnlyBytes() ([]byte, bool) {
	if len(f.modules) > 0 || len(f.bySource) > 0 || len(f.unknown) > 0 {
		return nil, false
	}
	type entry struct {
		label, version, constraints string
		hashes                      []hash.Hash
	}
	locks := make([]entry, 0, len(f.providers))
	size := len(tofuHeaderLine) + len(headerSecondLine) + 2
	for p := range f.Providers() {
		e := entry{
			label:       p.Addr.String(),
			version:     p.Version.String(),
			constraints: canonicalConstraints(p.Constraints, versions.ParseConstraints),
			hashes:      sortedHashes(p.Hashes),
		}
		if len(p.Unknown) > 0 || !literalString(e.label) || !literalString(e.version) || !literalString(e.constraints) {
			return nil, false
		}
		size += len(e.label) + len(e.version) + len(e.constraints) + 80
		for _, h := range e.hashes {
			if !literalString(string(h)) {
				return nil, false
			}
			size += len(h) + 8
		}
		locks = append(locks, e)
	}
	b := make([]byte, 0, size)
	b = append(b, f.header.String()...)
	b = append(b, '\n')
	b = append(b, headerSecondLine...)
	b = append(b, '\n')
	for _, e := range locks {
		b = append(b, "\nprovider \""...)
		b = append(b, e.label...)
		b = append(b, "\" {\n"...)
		// hclwrite's formatter aligns the equals signs of consecutive
		// one-line attributes; the hash list, over several lines, ends
		// the run.
		if e.constraints == "" {
			b = append(b, "  version = \""...)
		} else {
			b = append(b, "  version     = \""...)
		}
		b = append(b, e.version...)
		b = append(b, "\"\n"...)
		if e.constraints != "" {
			b = append(b, "  constraints = \""...)
			b = append(b, e.constraints...)
			b = append(b, "\"\n"...)
		}
		if len(e.hashes) > 0 {
			b = append(b, "  hashes = [\n"...)
			for _, h := range e.hashes {
				b = append(b, "    \""...)
				b = append(b, h...)
				b = append(b, "\",\n"...)
			}
			b = append(b, "  ]\n"...)
		}
		b = append(b, "}\n"...)
	}
	return b, true
}

// literalString reports whether s is written in a quoted string literal
// as it is: printable ASCII (which Unicode normalization leaves alone)
// with no quote, backslash, or template sequence ("${", "%{") that
// hclwrite would escape.
func literalString(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c > 0x7e || c == '"' || c == '\\':
			return false
		case (c == '$' || c == '%') && i+1 < len(s) && s[i+1] == '{':
			return false
		}
	}
	return true
}

// writeSelection writes the body of a block that records a selected
// version: version, constraints (if any), hashes (if any), then kept
// unknown items.
func writeSelection(body *hclwrite.Body, v versions.Version, constraints string, hashes []hash.Hash, unknown []Unknown) {
	body.SetAttributeValue("version", cty.StringVal(v.String()))
	if constraints != "" {
		body.SetAttributeValue("constraints", cty.StringVal(constraints))
	}
	if hs := sortedHashes(hashes); len(hs) > 0 {
		body.SetAttributeRaw("hashes", hashListTokens(hs))
	}
	for _, u := range unknown {
		writeUnknown(body, u)
	}
}

// writeModule writes a module block: version (if any), source, subdir
// (if any), ref (if any), tag (if any), constraints (if any), commit (if any), digest (if
// any), hashes (if any), then kept unknown items.
func writeModule(parent *hclwrite.Body, m *ModuleLock) {
	body := parent.AppendNewBlock("module", []string{m.Path}).Body()
	if !m.Version.IsZero() {
		body.SetAttributeValue("version", cty.StringVal(m.Version.String()))
	}
	body.SetAttributeValue("source", cty.StringVal(m.Source))
	if m.Subdir != "" {
		body.SetAttributeValue("subdir", cty.StringVal(m.Subdir))
	}
	if m.Ref != "" {
		body.SetAttributeValue("ref", cty.StringVal(m.Ref))
	}
	if m.Tag != "" {
		body.SetAttributeValue("tag", cty.StringVal(m.Tag))
	}
	if c := canonicalConstraints(m.Constraints, versions.ParseModuleConstraints); c != "" {
		body.SetAttributeValue("constraints", cty.StringVal(c))
	}
	if m.Commit != "" {
		body.SetAttributeValue("commit", cty.StringVal(m.Commit))
	}
	if m.Digest != "" {
		body.SetAttributeValue("digest", cty.StringVal(m.Digest))
	}
	if hs := sortedHashes(m.Hashes); len(hs) > 0 {
		body.SetAttributeRaw("hashes", hashListTokens(hs))
	}
	for _, u := range m.Unknown {
		writeUnknown(body, u)
	}
}

// canonicalConstraints returns s in normalized form, or s itself if it does
// not parse (so that nothing is lost; the parser will report it).
func canonicalConstraints(s string, parse func(string) (versions.Constraints, error)) string {
	if s == "" {
		return ""
	}
	c, err := parse(s)
	if err != nil {
		return s
	}
	return c.String()
}

// hashListTokens lays out a hash list as OpenTofu does: the opening
// bracket, then each hash on its own line with a trailing comma, then the
// closing bracket.
func hashListTokens(hs []hash.Hash) hclwrite.Tokens {
	toks := hclwrite.Tokens{
		{Type: hclsyntax.TokenOBrack, Bytes: []byte("[")},
		{Type: hclsyntax.TokenNewline, Bytes: []byte("\n")},
	}
	for _, h := range hs {
		toks = append(toks, hclwrite.TokensForValue(cty.StringVal(string(h)))...)
		toks = append(toks,
			&hclwrite.Token{Type: hclsyntax.TokenComma, Bytes: []byte(",")},
			&hclwrite.Token{Type: hclsyntax.TokenNewline, Bytes: []byte("\n")},
		)
	}
	return append(toks, &hclwrite.Token{Type: hclsyntax.TokenCBrack, Bytes: []byte("]")})
}

// writeUnknown writes back an item kept by a lenient parse. An item
// whose text does not parse, or nests too deeply to parse safely, is left
// out.
func writeUnknown(body *hclwrite.Body, u Unknown) {
	if hclguard.Native([]byte(u.Text), "") != nil {
		return
	}
	if u.Block {
		pf, diags := hclwrite.ParseConfig([]byte(u.Text+"\n"), "", hcl.InitialPos)
		if !diags.HasErrors() {
			body.AppendUnstructuredTokens(pf.BuildTokens(nil))
		}
		return
	}
	pf, diags := hclwrite.ParseConfig([]byte("x = "+u.Text+"\n"), "", hcl.InitialPos)
	if diags.HasErrors() {
		return
	}
	if a := pf.Body().GetAttribute("x"); a != nil {
		body.SetAttributeRaw(u.Name, a.Expr().BuildTokens(nil))
	}
}

// WriteFile writes f in canonical form to path atomically: it writes a
// temporary file in the same directory, flushes it to stable storage, gives
// it the mode of the file it replaces (0644 for a new file), and renames it
// over path. If any step fails the previous file is left as it was and the
// temporary file is removed. If path is a symbolic link, the link itself is
// replaced by the new file.
//
// WriteFile refuses to write a file that would not parse back (leniently),
// such as one with a provider lock without a version or a module lock
// without a source: it returns an error wrapping the *[ParseError] and
// leaves path as it was.
func WriteFile(path string, f *File) error {
	data := f.Bytes()
	if !f.plain() {
		if _, err := (ParseOptions{Lenient: true}).Parse(data, path); err != nil {
			return fmt.Errorf("not writing lock file %s, its content would be invalid: %w", path, err)
		}
	}
	return writeFileAtomic(path, data)
}

// plain reports whether f holds provider locks only, each of them plain
// (see plainProvider), and nothing else: the parser accepts the file the
// writer makes of it, which WriteFile then need not parse back (about 8 ms
// for 50 providers of 4 platforms). Any other file is parsed back.
func (f *File) plain() bool {
	if len(f.modules) > 0 || len(f.bySource) > 0 || len(f.unknown) > 0 {
		return false
	}
	for addr, p := range f.providers {
		// A lock whose address was changed through its pointer may now
		// share its block's label with another: the parser judges that.
		if p == nil || p.Addr != addr || !plainProvider(p) {
			return false
		}
	}
	return true
}

func writeFileAtomic(path string, data []byte) (err error) {
	mode := fs.FileMode(0o644)
	if st, statErr := os.Stat(path); statErr == nil {
		mode = st.Mode().Perm()
	} else if !errors.Is(statErr, fs.ErrNotExist) {
		return fmt.Errorf("writing lock file: %w", statErr)
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	pattern := "." + base + ".tmp-*"
	// The debris of killed writes is swept while this one writes and
	// syncs (the new temporary file is younger than tempGrace): the
	// directory's listing is off the path to the rename.
	swept := make(chan struct{})
	go func() {
		defer close(swept)
		sweepTemps(dir, pattern)
	}()
	defer func() { <-swept }()
	tmp, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return fmt.Errorf("writing lock file %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	// Held until the file is closed: a temporary file whose lock is free
	// was left by a process that died (see sweepTemps).
	_, _ = flock.LockOpenFile(tmp)
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("writing lock file %s: %w", path, err)
	}
	if err = tmp.Chmod(mode); err != nil {
		return fmt.Errorf("writing lock file %s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("writing lock file %s: %w", path, err)
	}
	if runtime.GOOS == "windows" {
		// Windows renames no open file; closing releases the lock first,
		// a moment tempGrace covers.
		if err = tmp.Close(); err != nil {
			return fmt.Errorf("writing lock file %s: %w", path, err)
		}
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing lock file %s: %w", path, err)
	}
	if runtime.GOOS != "windows" {
		// Closed only once renamed, so the lock covers the file's whole
		// life under its temporary name.
		if err = tmp.Close(); err != nil {
			return fmt.Errorf("writing lock file %s: %w", path, err)
		}
	}
	// Make the rename durable; not every platform can sync a directory.
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// tempGrace is how old a temporary lock file must be before sweepTemps
// may remove it: it covers the moment between creating a temporary file
// and taking its lock (and, on Windows, between closing it and renaming it).
const tempGrace = 5 * time.Second

// sweepTemps removes the temporary files of earlier writes of the same
// lock file that a killed process left behind: those matching pattern,
// older than tempGrace, whose advisory lock no process holds.
func sweepTemps(dir, pattern string) { flock.SweepTemps(dir, pattern, tempGrace) }
