package lockfile

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source/address"
)

// moduleForm is the form of a module block: tflock's own, or one of the
// forms proposed by OpenTofu's module-locking RFC pull requests.
type moduleForm int

const (
	formTflock     moduleForm = iota
	formBySource              // RFC PR #3540: labelled by the module's registry source address
	formByCallPath            // RFC PR #4071: labelled by call path, with "package" or "floating"
)

// formOf tells the form of a module block with one label: a label with a
// "/" is a source address (a call path never has one); a call path with a
// "package" or "floating" argument is PR #4071's form.
func formOf(block *hclsyntax.Block) moduleForm {
	switch {
	case strings.Contains(block.Labels[0], "/"):
		return formBySource
	case block.Body.Attributes["package"] != nil, block.Body.Attributes["floating"] != nil:
		return formByCallPath
	}
	return formTflock
}

// tflockOnly are the arguments of tflock's form that PR #4071's form
// replaces by "package" (and a "source" as written).
var tflockOnly = map[string]bool{"version": true, "subdir": true, "ref": true, "tag": true, "commit": true, "digest": true}

// registryPackagePrefix starts PR #4071's "package" of a module a registry
// hosts itself: "registry::HOST/NAMESPACE/NAME/SYSTEM@VERSION".
const registryPackagePrefix = "registry::"

// unmappable reports a module block in an RFC form that is valid there but
// that tflock's model cannot hold. Strict parsing rejects it; lenient
// parsing keeps the whole block as an unknown top-level block.
func (d *decoder) unmappable(block *hclsyntax.Block, subject hcl.Range, reason string) {
	d.add(&hcl.Diagnostic{
		Severity: d.unknownSeverity(),
		Summary:  "Unsupported module lock",
		Detail:   reason + d.unknownAdvice(),
		Subject:  subject.Ptr(),
	})
	d.file.unknown = append(d.file.unknown, Unknown{Name: block.Type, Block: true, Text: d.formatted(block.Range())})
}

// converted notes that a block in an RFC form was read into the model.
func (d *decoder) converted(block *hclsyntax.Block, form moduleForm, m *ModuleLock) {
	what := fmt.Sprintf("module call %q", m.Path)
	var detail string
	switch {
	case form == formBySource:
		detail = fmt.Sprintf("This block is in the form of OpenTofu's module-locking RFC (PR #3540), keyed by the source address %s rather than by a module call. It applies to the calls with that source whose constraints allow version %s: File.BindModules gives it to them as tflock locks; until then it is written back in this form.", m.Source, m.Version)
	case block.Body.Attributes["floating"] != nil && block.Body.Attributes["package"] == nil:
		detail = fmt.Sprintf("This floating block is in the form of OpenTofu's module-locking RFC (PR #4071); it was read as a lock of %s with no selection, pin or hashes, and is written in tflock's form, where the next lock records what is installed.", what)
	default:
		detail = fmt.Sprintf("This block is in the form of OpenTofu's module-locking RFC (PR #4071, keyed by call path, with \"package\"); it was read as the lock of %s and is written in tflock's form.", what)
	}
	d.add(&hcl.Diagnostic{
		Severity: hcl.DiagWarning,
		Summary:  "Module lock in RFC form",
		Detail:   detail,
		Subject:  block.LabelRanges[0].Ptr(),
	})
}

// decodeByCallPath decodes a module block in the form of PR #4071 (see the
// package documentation for the mapping). It returns nil when the block is
// invalid (errors added) or cannot be mapped (see [decoder.unmappable]).
func (d *decoder) decodeByCallPath(block *hclsyntax.Block) *ModuleLock {
	path, ok := d.callPathLabel(block)
	if !ok {
		return nil
	}
	m := &ModuleLock{Path: path}
	what := fmt.Sprintf("module call %q", path)
	nerr := len(d.diags.Errs())
	var src address.ModuleSource
	var pkgAttr *hclsyntax.Attribute
	var pkg string
	floating := false
	for _, it := range sortedItems(block.Body) {
		if it.block != nil {
			d.unknownBlock(it.block, `Blocks of type %q are not expected in a module lock block.`, &m.Unknown)
			continue
		}
		attr := it.attr
		switch {
		case attr.Name == "source":
			src = d.decodeWrittenSource(attr.Expr, what, m)
		case attr.Name == "constraints":
			m.Constraints = d.decodeConstraints(attr.Expr, what, "module", versions.ParseModuleConstraints)
		case attr.Name == "hashes":
			m.Hashes = d.decodeHashes(attr.Expr, what, "module")
		case attr.Name == "package":
			if raw, null, ok := d.decodeString(attr.Expr); ok && !null {
				pkgAttr, pkg = attr, raw
			} else if ok {
				d.add(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid module package address",
					Detail: fmt.Sprintf("The package of %s must be a string.", what), Subject: attr.Expr.Range().Ptr()})
			}
		case attr.Name == "floating":
			var b *bool
			diags := gohcl.DecodeExpression(attr.Expr, nil, &b)
			d.diags = append(d.diags, diags...)
			floating = b != nil && *b
		case tflockOnly[attr.Name]:
			d.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Mixed module lock forms",
				Detail:   fmt.Sprintf("The lock of %s has a \"package\" or \"floating\" argument, the form of OpenTofu's module-locking RFC, and also %q, an argument of tflock's form. Write one form: %q belongs to tflock's form only.", what, attr.Name, attr.Name),
				Subject:  attr.NameRange.Ptr(),
			})
		default:
			d.unknownAttr(attr, "in a module lock block", &m.Unknown)
		}
	}
	if block.Body.Attributes["source"] == nil {
		d.add(missingArgument(block.Body, "source"))
	}
	switch {
	case floating && pkgAttr != nil:
		d.add(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid module package address",
			Detail:  fmt.Sprintf("The lock of %s is floating and also records a package: a floating lock has no package.", what),
			Subject: pkgAttr.Expr.Range().Ptr()})
	case floating && len(m.Hashes) > 0:
		d.add(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid module hash set",
			Detail:  fmt.Sprintf("The lock of %s is floating and also records hashes: a floating lock records none.", what),
			Subject: block.Body.Attributes["hashes"].Expr.Range().Ptr()})
	case !floating && pkgAttr == nil && block.Body.Attributes["package"] == nil:
		d.add(missingArgument(block.Body, "package"))
	}
	if len(d.diags.Errs()) > nerr || src == nil {
		return nil
	}
	if pkgAttr != nil {
		if reason := d.mapPackage(m, src, pkg, pkgAttr, what); reason != "" {
			d.unmappable(block, pkgAttr.Expr.Range(), reason)
			return nil
		}
		if len(d.diags.Errs()) > nerr {
			return nil
		}
	}
	d.checkPinned(m, what, block.Body.Attributes["source"].Expr, block.Body.Attributes["source"].Expr)
	if len(d.diags.Errs()) > nerr {
		return nil
	}
	return m
}

// decodeWrittenSource decodes PR #4071's "source", the module source
// address as the configuration writes it, into the lock's Source and the
// pin the address itself carries (git "ref", OCI "tag" or "digest").
func (d *decoder) decodeWrittenSource(expr hcl.Expression, what string, m *ModuleLock) address.ModuleSource {
	raw, null, ok := d.decodeString(expr)
	if !ok {
		return nil
	}
	bad := func(detail string) address.ModuleSource {
		d.add(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid module source address", Detail: detail, Subject: expr.Range().Ptr()})
		return nil
	}
	if null || raw == "" {
		return bad(fmt.Sprintf("The source of %s must not be empty: write the source address of the module call.", what))
	}
	src, err := address.ParseModuleSource(raw)
	if err != nil {
		var pe *address.ParseError
		reason := err.Error()
		if errors.As(err, &pe) {
			reason = pe.Err.Error()
		}
		return bad(fmt.Sprintf("The source of %s is not a module source address: %s.", what, strings.TrimSuffix(reason, ".")))
	}
	switch s := src.(type) {
	case address.Local:
		return bad(fmt.Sprintf("Local module %s is never locked: it is part of the configuration. Remove this block.", what))
	case address.Remote:
		switch s.Kind {
		case address.KindGit:
			if s.Ref != "" {
				if reason := badRef(s.Ref); reason != "" {
					return bad(fmt.Sprintf("The \"ref\" argument of the source of %s is not a branch, tag or commit name: %s.", what, reason))
				}
			}
			m.Ref = s.Ref
		case address.KindOCI:
			if strings.Contains(raw, "tag=") {
				m.Tag = s.Tag
			}
			m.Digest = s.Digest
		}
	}
	m.Source = src.LockSource()
	if addr, err := parseLockSource(m.Source); err == nil {
		// Typed as the lock records it: no pin, no credentials.
		m.setAddress(addr)
	}
	return src
}

// mapPackage maps PR #4071's "package" onto the lock: a registry package's
// version, a git package's commit, an OCI package's digest. It returns why
// the package cannot be mapped, or "" (invalid values are reported as
// errors).
func (d *decoder) mapPackage(m *ModuleLock, src address.ModuleSource, pkg string, attr *hclsyntax.Attribute, what string) string {
	bad := func(format string, args ...any) string {
		d.add(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid module package address",
			Detail: fmt.Sprintf(format, args...), Subject: attr.Expr.Range().Ptr()})
		return ""
	}
	if rest, ok := strings.CutPrefix(pkg, registryPackagePrefix); ok {
		reg, isReg := src.(address.Registry)
		addr, ver, ok := strings.Cut(rest, "@")
		switch {
		case !isReg:
			return bad("The package of %s is a registry package, but its source is not a registry address.", what)
		case !ok:
			return bad("The package of %s must be %q followed by the registry address, \"@\" and the version selected.", what, registryPackagePrefix)
		case addr != reg.Package():
			return bad("The package of %s names registry module %s, but its source is %s.", what, address.Redact(addr), reg.Package())
		}
		v, err := versions.Parse(ver)
		if err != nil || v.String() != ver {
			return bad("The version in the package of %s must be a version in normalized form, such as \"1.2.3\", not %q.", what, ver)
		}
		m.Version = v
		return ""
	}
	p, err := address.ParseModuleSource(pkg)
	if err != nil {
		return bad("The package of %s is not a package address: %s.", what, address.Redact(err.Error()))
	}
	pr, ok := p.(address.Remote)
	if !ok {
		return bad("The package of %s must be a remote package address or %q followed by a registry address and version.", what, registryPackagePrefix)
	}
	if pr.Subdir != "" {
		return bad("The package of %s must not have a subdirectory: the subdirectory belongs to its source.", what)
	}
	switch s := src.(type) {
	case address.Registry:
		return fmt.Sprintf("The lock of %s was made for registry module %s, which delegates to package %s; that form does not record the version selected, which tflock's lock of a registry module needs.", what, s.Package(), address.Redact(pr.LockSource()))
	case address.Remote:
		if s.Kind == address.KindHg {
			return fmt.Sprintf("The lock of %s pins a Mercurial package; tflock does not install Mercurial modules.", what)
		}
		base := s
		base.Subdir = ""
		if pr.Kind != s.Kind || pr.LockSource() != base.LockSource() {
			return bad("The package of %s is %s, which is not the package of its source %s.", what, address.Redact(pr.LockSource()), address.Redact(base.LockSource()))
		}
		switch s.Kind {
		case address.KindGit:
			if !commitRe().MatchString(pr.Ref) {
				return bad("The package of %s must pin a full git commit id (\"?ref=\" and 40 lower-case hexadecimal digits), not %q.", what, pr.Ref)
			}
			m.Commit = pr.Ref
		case address.KindOCI:
			if !digestRe().MatchString(pr.Digest) {
				return bad("The package of %s must pin an OCI manifest digest (\"?digest=sha256:...\").", what)
			}
			if m.Digest != "" && m.Digest != pr.Digest {
				return bad("The package of %s pins digest %s, but its source asks for digest %s.", what, pr.Digest, m.Digest)
			}
			m.Digest = pr.Digest
		default:
			// An http, s3 or gcs source is immutable by itself (its
			// checksum, version or generation), and is its own package:
			// nothing more to record than its hashes.
		}
	}
	return ""
}

// decodeBySource decodes a module block in the form of PR #3540: labelled
// by a fully-qualified registry module address, optionally followed by
// ":VERSION" (the PR's second option for a source locked at two
// versions), with version, constraints and hashes. The lock has no Path.
func (d *decoder) decodeBySource(block *hclsyntax.Block) *ModuleLock {
	label := block.Labels[0]
	addr, labelVersion := label, ""
	if i := strings.LastIndexByte(label, '/'); i >= 0 {
		if j := strings.IndexByte(label[i:], ':'); j >= 0 {
			addr, labelVersion = label[:i+j], label[i+j+1:]
		}
	}
	invalid := func(detail string) *ModuleLock {
		d.add(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid module source address", Detail: detail, Subject: block.LabelRanges[0].Ptr()})
		return nil
	}
	src, err := address.ParseModuleSource(addr)
	reg, ok := src.(address.Registry)
	switch {
	case err != nil || !ok:
		return invalid(fmt.Sprintf("The label of a module lock block is a module call path (\"vpc\", \"vpc.nested\") or, in the form of OpenTofu's module-locking RFC (PR #3540), a fully-qualified registry module address such as %q; %q is neither.", "registry.opentofu.org/terraform-aws-modules/vpc/aws", address.Redact(label)))
	case reg.LockSource() != addr:
		return invalid(fmt.Sprintf("The registry module address of this module lock must be written in its fully-qualified and normalized form: %q.", reg.LockSource()))
	}
	m := &ModuleLock{Source: addr}
	m.setAddress(reg)
	what := fmt.Sprintf("module %s", addr)
	nerr := len(d.diags.Errs())
	if labelVersion != "" {
		v, err := versions.Parse(labelVersion)
		if err != nil || v.String() != labelVersion {
			return invalid(fmt.Sprintf("The version after \":\" in the label of this module lock must be the version selected in normalized form, such as \"1.2.3\", not %q.", labelVersion))
		}
		m.Version = v
	}
	var versionExpr hcl.Expression
	for _, it := range sortedItems(block.Body) {
		if it.block != nil {
			d.unknownBlock(it.block, `Blocks of type %q are not expected in a module lock block.`, &m.Unknown)
			continue
		}
		attr := it.attr
		switch attr.Name {
		case "version":
			versionExpr = attr.Expr
			v := d.decodeVersion(attr.Expr, what, "module", "A module lock keyed by source address must record the version selected.")
			if labelVersion != "" && !v.IsZero() && v != m.Version {
				d.add(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid module version number",
					Detail:  fmt.Sprintf("The version of %s is %s, but its label says %s.", what, v, m.Version),
					Subject: attr.Expr.Range().Ptr()})
			}
			if labelVersion == "" {
				m.Version = v
			}
		case "constraints":
			m.Constraints = d.decodeConstraints(attr.Expr, what, "module", versions.ParseModuleConstraints)
		case "hashes":
			m.Hashes = d.decodeHashes(attr.Expr, what, "module")
		default:
			d.unknownAttr(attr, "in a module lock block keyed by source address", &m.Unknown)
		}
	}
	if versionExpr == nil && labelVersion == "" {
		d.add(missingArgument(block.Body, "version"))
	}
	if len(d.diags.Errs()) > nerr {
		return nil
	}
	return m
}
