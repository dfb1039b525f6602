package cliconfig

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	tfaddr "github.com/hashicorp/terraform-registry-address"
	"github.com/zclconf/go-cty/cty"

	"github.com/tflock/tflock/internal/hclguard"
	"github.com/tflock/tflock/source"
)

// checkOCITemplate applies OpenTofu's checks to an oci_mirror
// repository_template: it may refer only to hostname, namespace and type,
// and must refer to each part of the provider address that its include
// patterns do not fix to a single value.
func checkOCITemplate(m Method, rng hcl.Range) hcl.Diagnostics {
	fail := func(detail string) hcl.Diagnostics {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid oci_mirror repository template", Detail: detail, Subject: &rng}}
	}
	if diags := hclguard.Template([]byte(m.Location), rng.Filename, rng.Start); diags != nil {
		return diags
	}
	tpl, diags := hclsyntax.ParseTemplate([]byte(m.Location), rng.Filename, rng.Start)
	if diags.HasErrors() {
		return diags
	}
	var hasHost, hasNS, hasType bool
	for _, tr := range tpl.Variables() {
		switch name := tr.RootName(); name {
		case "hostname":
			hasHost = true
		case "namespace":
			hasNS = true
		case "type":
			hasType = true
		default:
			return fail(fmt.Sprintf("The symbol %q is not available for an OCI mirror repository address template. Only \"hostname\", \"namespace\", and \"type\" are available.", name))
		}
	}
	hosts, nss, types := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, s := range m.Include {
		p, err := source.ParseProviderPattern(s)
		if err != nil {
			return nil // reported with the include argument
		}
		parts := strings.SplitN(p.String(), "/", 3)
		if parts[0] != source.Wildcard {
			hosts[parts[0]] = true
		}
		if parts[1] != source.Wildcard {
			nss[parts[1]] = true
		}
		if parts[2] != source.Wildcard {
			types[parts[2]] = true
		}
	}
	switch {
	case len(hosts) != 1 && !hasHost:
		return fail("The template must refer to the \"hostname\" symbol unless the \"include\" argument selects exactly one registry hostname.")
	case len(nss) != 1 && !hasNS:
		return fail("The template must refer to the \"namespace\" symbol unless the \"include\" argument selects exactly one provider namespace.")
	case len(types) != 1 && !hasType:
		return fail("The template must refer to the \"type\" symbol unless the \"include\" argument selects exactly one provider.")
	}
	return nil
}

// OCIRepository returns the OCI repository address an oci_mirror method
// maps addr to, by evaluating its repository_template with the provider's
// hostname, namespace and type.
func (m Method) OCIRepository(addr tfaddr.Provider) (string, error) {
	if m.Kind != OCIMirror {
		return "", fmt.Errorf("%s is not an oci_mirror method", m.Kind)
	}
	if addr.IsZero() {
		return "", fmt.Errorf("no provider address given")
	}
	diags := hclguard.Template([]byte(m.Location), "repository_template", hcl.InitialPos)
	var tpl hclsyntax.Expression
	if diags == nil {
		tpl, diags = hclsyntax.ParseTemplate([]byte(m.Location), "repository_template", hcl.InitialPos)
	}
	if diags.HasErrors() {
		return "", fmt.Errorf("invalid repository_template %q: %s", m.Location, diags.Error())
	}
	v, diags := tpl.Value(&hcl.EvalContext{Variables: map[string]cty.Value{
		"hostname":  cty.StringVal(addr.Hostname.String()),
		"namespace": cty.StringVal(addr.Namespace),
		"type":      cty.StringVal(addr.Type),
	}})
	if diags.HasErrors() {
		return "", fmt.Errorf("evaluating repository_template %q for %s: %s", m.Location, addr, diags.Error())
	}
	if v.IsNull() || !v.IsKnown() || v.Type() != cty.String {
		return "", fmt.Errorf("repository_template %q does not produce a string", m.Location)
	}
	return v.AsString(), nil
}

// OCIRepositoryFunc returns, for the repository_template that
// [SourceOptions.OCI] is given, the function that maps a provider address
// to its repository ("host/repository"): the value of
// [github.com/tflock/tflock/source/oci.Options.ProviderRepository] for an
// oci_mirror block. See [Method.OCIRepository].
func OCIRepositoryFunc(repositoryTemplate string) func(ctx context.Context, addr tfaddr.Provider) (string, error) {
	m := Method{Kind: OCIMirror, Location: repositoryTemplate}
	return func(_ context.Context, addr tfaddr.Provider) (string, error) {
		return m.OCIRepository(addr)
	}
}
