package lockfile

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/internal/lazyre"
	"github.com/tflock/tflock/internal/provaddr"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source/address"
)

// decodeProvider decodes one provider block, or returns nil if its address
// is unusable. Faults in its arguments are reported and the lock is still
// returned, so that one bad block gives all its diagnostics.
func (d *decoder) decodeProvider(block *hclsyntax.Block) *ProviderLock {
	raw := block.Labels[0]
	addr, diag := parseLockedProvider(raw)
	if diag != nil {
		diag.Subject = block.LabelRanges[0].Ptr()
		d.add(diag)
		return nil
	}
	p := &ProviderLock{Addr: addr}
	what := "provider " + addr.String()
	var haveVersion bool
	for _, it := range sortedItems(block.Body) {
		if it.block != nil {
			d.unknownBlock(it.block, `Blocks of type %q are not expected in a provider lock block.`, &p.Unknown)
			continue
		}
		attr := it.attr
		switch attr.Name {
		case "version":
			haveVersion = true
			p.Version = d.decodeVersion(attr.Expr, what, "provider", "A provider lock block must contain a \"version\" argument.")
		case "constraints":
			p.Constraints = d.decodeConstraints(attr.Expr, what, "provider", versions.ParseConstraints)
		case "hashes":
			p.Hashes = d.decodeHashes(attr.Expr, what, "provider")
		default:
			d.unknownAttr(attr, "in a provider lock block", &p.Unknown)
		}
	}
	if !haveVersion {
		d.add(missingArgument(block.Body, "version"))
	}
	return p
}

// parseLockedProvider checks that raw is a lockable provider address in
// canonical form. The returned diagnostic has no Subject yet.
func parseLockedProvider(raw string) (tfaddr.Provider, *hcl.Diagnostic) {
	invalid := func(detail string) (tfaddr.Provider, *hcl.Diagnostic) {
		return tfaddr.Provider{}, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid provider source address",
			Detail:   detail,
		}
	}
	parts := strings.Split(raw, "/")
	if len(parts) == 3 && parts[1] == tfaddr.LegacyProviderNamespace {
		return invalid(fmt.Sprintf("Provider source address %s is a special provider that is not eligible for dependency locking. Remove this block and lock the provider under its real namespace.", raw))
	}
	// The one provider-address parser, with OpenTofu's default host: an
	// address without a host is refused below with its canonical form.
	addr, err := provaddr.Parse(raw, "")
	if err != nil {
		return invalid(`The provider source address for a provider lock must be a valid, fully-qualified address of the form "hostname/namespace/type".`)
	}
	if addr.Namespace == tfaddr.LegacyProviderNamespace {
		return invalid(fmt.Sprintf("Provider source address %s is a special provider that is not eligible for dependency locking. Remove this block and lock the provider under its real namespace.", provaddr.String(addr)))
	}
	if provaddr.IsBuiltIn(addr) {
		return invalid(fmt.Sprintf("Cannot lock a version for built-in provider %s. Built-in providers are bundled inside OpenTofu itself, so you can't select a version for them independently of the OpenTofu release you are currently running. Remove this block.", addr))
	}
	if canon := provaddr.String(addr); canon != raw {
		return tfaddr.Provider{}, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Non-normalized provider source address",
			Detail:   fmt.Sprintf("The provider source address for this provider lock must be written as %q, the fully-qualified and normalized form.", canon),
		}
	}
	return addr, nil
}

// decodeVersion decodes a version argument, which must be canonical.
func (d *decoder) decodeVersion(expr hcl.Expression, what, kind, nullDetail string) versions.Version {
	raw, null, ok := d.decodeString(expr)
	if !ok {
		return versions.Version{}
	}
	if null {
		// A provider's version is required (OpenTofu's summary); a
		// module's is optional, so null is merely a bad value.
		summary := "Missing required argument"
		if kind != "provider" {
			summary = fmt.Sprintf("Invalid %s version number", kind)
		}
		d.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  summary,
			Detail:   nullDetail,
			Subject:  expr.Range().Ptr(),
		})
		return versions.Version{}
	}
	v, err := versions.Parse(raw)
	if err == nil && v.String() == raw {
		return v
	}
	detail := ""
	if canon, ok := normalizedVersion(raw); ok {
		detail = fmt.Sprintf("The selected version number for %s must be written in normalized form: %q.", what, canon)
	} else if err != nil {
		reason := err.Error()
		var ve *versions.VersionError
		if errors.As(err, &ve) {
			reason = ve.Reason
		}
		detail = fmt.Sprintf("The selected version number for %s is invalid: %s. Write the exact version that was selected, such as \"1.2.3\".", what, strings.TrimSuffix(reason, "."))
	} else {
		detail = fmt.Sprintf("The selected version number for %s must be written in normalized form: %q.", what, v.String())
	}
	d.add(&hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  fmt.Sprintf("Invalid %s version number", kind),
		Detail:   detail,
		Subject:  expr.Range().Ptr(),
	})
	return versions.Version{}
}

// normalizedVersion returns the canonical spelling of a version written in
// a looser form ("v1.0", "1.02"), if it has one that strict parsing accepts.
func normalizedVersion(raw string) (string, bool) {
	lv, err := versions.ParseModuleVersion(raw)
	if err != nil || raw == "" || lv.String() == raw {
		return "", false
	}
	v, err := versions.Parse(lv.String())
	return v.String(), err == nil
}

// decodeConstraints decodes a constraints argument, which must be in
// normalized form.
func (d *decoder) decodeConstraints(expr hcl.Expression, what, kind string, parse func(string) (versions.Constraints, error)) string {
	raw, null, ok := d.decodeString(expr)
	if !ok {
		return ""
	}
	c, err := parse(raw)
	var detail string
	switch {
	case null:
		detail = fmt.Sprintf("The recorded version constraints for %s must be a string. Omit the argument if there are none.", what)
	case err != nil:
		detail = fmt.Sprintf("The recorded version constraints for %s are invalid: %s.", what, strings.TrimSuffix(err.Error(), "."))
	case c.String() != raw:
		detail = fmt.Sprintf("The recorded version constraints for %s must be written in normalized form: %q.", what, c.String())
	default:
		return raw
	}
	d.add(&hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  fmt.Sprintf("Invalid %s version constraints", kind),
		Detail:   detail,
		Subject:  expr.Range().Ptr(),
	})
	return ""
}

// decodeHashes decodes a hashes argument: a non-empty list of hash strings.
func (d *decoder) decodeHashes(expr hcl.Expression, what, kind string) []hash.Hash {
	exprs, diags := hcl.ExprList(expr)
	d.diags = append(d.diags, diags...)
	if diags.HasErrors() {
		return nil
	}
	if len(exprs) == 0 {
		d.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  fmt.Sprintf("Invalid %s hash set", kind),
			Detail:   `The "hashes" argument must either be omitted or contain at least one hash value.`,
			Subject:  expr.Range().Ptr(),
		})
		return nil
	}
	var out []hash.Hash
	for _, e := range exprs {
		raw, null, ok := d.decodeString(e)
		if !ok {
			continue
		}
		if null {
			d.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  fmt.Sprintf("Invalid %s hash string", kind),
				Detail:   fmt.Sprintf("A hash for %s is null. Remove it.", what),
				Subject:  e.Range().Ptr(),
			})
			continue
		}
		h, err := hash.ParseHash(raw)
		if err == nil {
			out = append(out, h)
			continue
		}
		reason := err.Error()
		var pe *hash.ParseError
		if errors.As(err, &pe) {
			reason = pe.Reason
		}
		// OpenTofu accepts any "scheme:value" string; a lenient parse keeps
		// those whose value alone is malformed.
		colon := strings.IndexByte(raw, ':')
		sev := hcl.DiagError
		advice := " Remove it and record the package's hashes again."
		if d.opts.Lenient && colon > 0 {
			sev = hcl.DiagWarning
			advice = " It was kept as it is; it can never match a package."
			out = append(out, hash.Hash(raw))
		}
		d.add(&hcl.Diagnostic{
			Severity: sev,
			Summary:  fmt.Sprintf("Invalid %s hash string", kind),
			Detail:   fmt.Sprintf("Cannot interpret %q as a %s hash: %s.%s", raw, kind, reason, advice),
			Subject:  e.Range().Ptr(),
		})
	}
	return normalizeHashes(out)
}

var (
	commitRe = lazyre.New(`^[0-9a-f]{40}$`)
	digestRe = lazyre.New(`^(sha256:[0-9a-f]{64}|sha512:[0-9a-f]{128})$`)
	// ociTagRe is the OCI distribution specification's tag grammar.
	ociTagRe = lazyre.New(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
)

// decodeModule decodes one module block, or returns nil if its call path
// is unusable.
func (d *decoder) decodeModule(block *hclsyntax.Block) *ModuleLock {
	path, ok := d.callPathLabel(block)
	if !ok {
		return nil
	}
	m := &ModuleLock{Path: path}
	what := fmt.Sprintf("module call %q", path)
	var haveSource bool
	var refExpr, tagExpr hcl.Expression
	for _, it := range sortedItems(block.Body) {
		if it.block != nil {
			d.unknownBlock(it.block, `Blocks of type %q are not expected in a module lock block.`, &m.Unknown)
			continue
		}
		attr := it.attr
		switch attr.Name {
		case "version":
			m.Version = d.decodeVersion(attr.Expr, what, "module", "Omit the \"version\" argument of a module lock that has no version, rather than setting it to null.")
		case "source":
			haveSource = true
			var addr address.ModuleSource
			m.Source, addr = d.decodeSource(attr.Expr, what)
			m.setAddress(addr)
		case "subdir":
			m.Subdir = d.decodeSubdir(attr.Expr, what)
		case "ref":
			refExpr = attr.Expr
			m.Ref = d.decodeRef(attr.Expr, what)
		case "tag":
			tagExpr = attr.Expr
			m.Tag = d.decodePattern(attr.Expr, ociTagRe(), "Invalid module tag",
				"The tag of %s must be an OCI tag as written in the module source's \"tag\" argument: a letter, digit or underscore, then up to 127 letters, digits, underscores, dots and dashes, not %q.", what)
		case "constraints":
			m.Constraints = d.decodeConstraints(attr.Expr, what, "module", versions.ParseModuleConstraints)
		case "hashes":
			m.Hashes = d.decodeHashes(attr.Expr, what, "module")
		case "commit":
			m.Commit = d.decodePattern(attr.Expr, commitRe(), "Invalid module commit",
				"The commit of %s must be a full git commit id: 40 lower-case hexadecimal digits, not %q.", what)
		case "digest":
			m.Digest = d.decodePattern(attr.Expr, digestRe(), "Invalid module digest",
				"The digest of %s must be an OCI manifest digest such as \"sha256:\" followed by 64 lower-case hexadecimal digits, not %q.", what)
		default:
			d.unknownAttr(attr, "in a module lock block", &m.Unknown)
		}
	}
	if !haveSource {
		d.add(missingArgument(block.Body, "source"))
	}
	d.checkPinned(m, what, refExpr, tagExpr)
	return m
}

// decodeSubdir decodes a module lock's "subdir": the subdirectory of its
// package, in the canonical form address.PackageSubdir gives.
func (d *decoder) decodeSubdir(expr hcl.Expression, what string) string {
	raw, null, ok := d.decodeString(expr)
	if !ok {
		return ""
	}
	var reason string
	switch {
	case null || raw == "":
		reason = "omit the \"subdir\" argument of a module installed from its package's root"
	default:
		if err := address.CheckPackageSubdir(raw); err != nil {
			reason = err.Error()
			if c, err := address.PackageSubdir(raw); err == nil && c != "" {
				reason += fmt.Sprintf("; write %q", c)
			}
		}
	}
	if reason != "" {
		d.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid module subdirectory",
			Detail:   fmt.Sprintf("The subdir of %s must be a clean relative path inside its package, as its location names it, such as \"modules/vpc\": %s.", what, reason),
			Subject:  expr.Range().Ptr(),
		})
		return ""
	}
	return raw
}

// callPathLabel returns the label of a module block, reporting it if it
// is not a module call path.
func (d *decoder) callPathLabel(block *hclsyntax.Block) (string, bool) {
	path := block.Labels[0]
	if msg := checkCallPath(path); msg != "" {
		d.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid module call path",
			Detail:   fmt.Sprintf("The label of a module lock block must be a module call path: the call names from the root module joined with dots, such as \"vpc\" or \"vpc.nested\"; %s.", msg),
			Subject:  block.LabelRanges[0].Ptr(),
		})
		return "", false
	}
	return path, true
}

// checkPinned reports the combinations of a module lock's "ref" and "tag"
// with its other arguments that no module call can produce: a git ref
// beside an OCI tag, on an OCI source, or with a version; an OCI tag on
// another source, or with a version.
func (d *decoder) checkPinned(m *ModuleLock, what string, refExpr, tagExpr hcl.Expression) {
	oci := false
	if addr, err := m.Address(); err == nil {
		r, ok := addr.(address.Remote)
		oci = ok && r.Kind == address.KindOCI
	}
	var summary, detail string
	var subject hcl.Expression
	switch {
	case m.Ref != "" && m.Tag != "":
		summary, subject = "Invalid module tag", tagExpr
		detail = fmt.Sprintf("The lock of %s records both a git ref and an OCI tag; a module source has at most one of them.", what)
	case m.Ref != "" && oci:
		summary, subject = "Invalid module ref", refExpr
		detail = fmt.Sprintf("The lock of %s records a git ref for an OCI source; an OCI source is pinned by \"tag\" or \"digest\".", what)
	case m.Tag != "" && !oci && m.Source != "":
		summary, subject = "Invalid module tag", tagExpr
		detail = fmt.Sprintf("The lock of %s records an OCI tag for a source that is not an OCI repository (oci://...).", what)
	case m.Ref != "" && (!m.Version.IsZero() || m.Constraints != ""):
		summary, subject = "Invalid module ref", refExpr
		detail = fmt.Sprintf("The lock of %s records a git ref and a version: a call pinned by the \"ref\" argument of its source has no version constraint.", what)
	case m.Tag != "" && (!m.Version.IsZero() || m.Constraints != ""):
		summary, subject = "Invalid module tag", tagExpr
		detail = fmt.Sprintf("The lock of %s records an OCI tag and a version: a call pinned by the \"tag\" argument of its source has no version constraint.", what)
	default:
		return
	}
	d.add(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: subject.Range().Ptr()})
}

// decodeRef decodes a module lock's git ref: a name git accepts for a
// branch or tag ("main", "v1.2.0", "refs/tags/v1") or a commit id.
func (d *decoder) decodeRef(expr hcl.Expression, what string) string {
	raw, null, ok := d.decodeString(expr)
	if !ok {
		return ""
	}
	reason := "it is null"
	if !null {
		if reason = badRef(raw); reason == "" {
			return raw
		}
	}
	d.add(&hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Invalid module ref",
		Detail:   fmt.Sprintf("The ref of %s must be the \"ref\" argument of its git source as written, a branch, tag or commit name; %q is not one: %s.", what, raw, reason),
		Subject:  expr.Range().Ptr(),
	})
	return ""
}

// badRef says why s is not a git ref name (the rules of "git
// check-ref-format" for a branch or tag), or returns "".
func badRef(s string) string {
	switch {
	case s == "":
		return "it is empty"
	case strings.HasPrefix(s, "-"), strings.HasPrefix(s, "/"):
		return "it starts with \"" + s[:1] + "\""
	case strings.HasSuffix(s, "/"), strings.HasSuffix(s, "."), strings.HasSuffix(s, ".lock"):
		return "it ends with \"/\", \".\" or \".lock\""
	case strings.Contains(s, ".."), strings.Contains(s, "//"), strings.Contains(s, "@{"), strings.Contains(s, "/."):
		return "it contains \"..\", \"//\", \"/.\" or \"@{\""
	case s == "@":
		return "it is \"@\""
	}
	for _, c := range s {
		if c < 0x20 || c == 0x7f || c == ' ' || strings.ContainsRune("~^:?*[\\", c) {
			return fmt.Sprintf("it contains %q", c)
		}
	}
	return ""
}

// checkCallPath returns why path is not a module call path, or "".
func checkCallPath(path string) string {
	if path == "" {
		return "it is empty"
	}
	for _, name := range strings.Split(path, ".") {
		if !hclsyntax.ValidIdentifier(name) {
			return fmt.Sprintf("%q is not a valid module call name", name)
		}
	}
	return ""
}

// decodeSource decodes a module lock's "source", the canonical address of
// its package, and returns it with its parse (see [ModuleLock.Address]):
// the one place the reader reads it.
func (d *decoder) decodeSource(expr hcl.Expression, what string) (string, address.ModuleSource) {
	raw, null, ok := d.decodeString(expr)
	if !ok {
		return "", nil
	}
	msg := ""
	switch {
	case null || raw == "":
		msg = "The source of %s must not be empty: write the canonical address of the module package."
	case strings.ContainsAny(raw, " \t\r\n"):
		msg = "The source of %s must not contain white space."
	case strings.HasPrefix(raw, "./"), strings.HasPrefix(raw, "../"), strings.HasPrefix(raw, "/"):
		msg = "Local module %s is never locked: it is part of the configuration. Remove this block."
	default:
		// A source that does not parse is kept as written (a lock of a
		// kind of source this version does not know is not refused):
		// its Address says why it cannot be used.
		addr, _ := parseLockSource(raw)
		return raw, addr
	}
	d.add(&hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Invalid module source address",
		Detail:   fmt.Sprintf(msg, what),
		Subject:  expr.Range().Ptr(),
	})
	return "", nil
}

func (d *decoder) decodePattern(expr hcl.Expression, re *regexp.Regexp, summary, format, what string) string {
	raw, null, ok := d.decodeString(expr)
	if !ok {
		return ""
	}
	if !null && re.MatchString(raw) {
		return raw
	}
	d.add(&hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  summary,
		Detail:   fmt.Sprintf(format, what, raw),
		Subject:  expr.Range().Ptr(),
	})
	return ""
}
