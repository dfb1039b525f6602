package registry

import (
	"context"
	"fmt"
	"strings"

	tfaddr "github.com/hashicorp/terraform-registry-address"
	svchost "github.com/hashicorp/terraform-svchost"

	"github.com/tflock/tflock/internal/provaddr"
	"github.com/tflock/tflock/source"
)

// ErrBuiltIn is wrapped by the error for a built-in provider
// (terraform.io/builtin/terraform), which the tool itself provides and no
// registry serves. It also matches [source.ErrNotFound].
var ErrBuiltIn = fmt.Errorf("built-in provider, not installed from a registry: %w", source.ErrNotFound)

// builtinTerraform is the address of the one built-in provider.
var builtinTerraform = tfaddr.Provider{Hostname: tfaddr.BuiltInProviderHost, Namespace: tfaddr.BuiltInProviderNamespace, Type: "terraform"}

// ResolveProvider returns the fully-qualified address for addr. An address
// with a namespace is returned unchanged. A legacy address (Terraform 0.13's
// "-/TYPE", or a bare "TYPE" that tfaddr parses with namespace "?") is
// resolved through the default registry's "-" namespace lookup:
// GET providers.v1 "-/TYPE/versions", whose "id" names the namespace and
// whose optional "moved_to" names where the provider has since moved (then
// used instead). Each resolution is cached and reported once through
// [Options.Warn]. The type "terraform" is the built-in provider
// terraform.io/builtin/terraform, resolved without asking anyone; every
// other method of Source reports [ErrBuiltIn] for it.
func (s *Source) ResolveProvider(ctx context.Context, addr tfaddr.Provider) (tfaddr.Provider, error) {
	if addr.IsZero() {
		return addr, &source.Error{Err: fmt.Errorf("%w: empty provider address", source.ErrNotFound)}
	}
	if provaddr.IsBuiltIn(addr) {
		return addr, &source.Error{Package: source.ProviderPackage{Addr: addr}, Err: ErrBuiltIn}
	}
	if addr.Namespace != tfaddr.LegacyProviderNamespace && addr.Namespace != tfaddr.UnknownProviderNamespace {
		return addr, nil
	}
	if addr.Type == "terraform" {
		return builtinTerraform, &source.Error{Package: source.ProviderPackage{Addr: builtinTerraform}, Err: ErrBuiltIn}
	}
	return s.leg.Do(ctx, addr.Type, func() (tfaddr.Provider, error) { return s.lookupLegacy(ctx, addr.Type) })
}

func (s *Source) lookupLegacy(ctx context.Context, typ string) (tfaddr.Provider, error) {
	hn, err := svchost.ForComparison(s.o.DefaultHost)
	if err != nil {
		return tfaddr.Provider{}, fmt.Errorf("invalid default registry host %q: %v", s.o.DefaultHost, err)
	}
	legacy := tfaddr.Provider{Hostname: hn, Namespace: tfaddr.LegacyProviderNamespace, Type: typ}
	fail := func(err error) (tfaddr.Provider, error) {
		return tfaddr.Provider{}, &source.Error{Source: hn.ForDisplay(), Package: source.ProviderPackage{Addr: legacy}, Err: err}
	}
	body, err := s.getProviderVersions(ctx, legacy)
	if err != nil {
		return fail(err)
	}
	parse := func(field, v string) (string, error) {
		ns, t, ok := strings.Cut(v, "/")
		if !ok || t != typ {
			return "", fmt.Errorf("the registry's legacy lookup returned %s %q, which is not NAMESPACE/%s", field, v, typ)
		}
		ns, err := provaddr.ParsePart(ns)
		if err != nil || ns == tfaddr.LegacyProviderNamespace {
			return "", fmt.Errorf("the registry's legacy lookup returned %s %q with an invalid namespace", field, v)
		}
		return ns, nil
	}
	if body.ID == "" {
		return fail(fmt.Errorf("%w: the registry does not resolve the legacy provider name %q", source.ErrNotFound, typ))
	}
	ns, err := parse("id", body.ID)
	if err != nil {
		return fail(err)
	}
	got := tfaddr.NewProvider(hn, ns, typ)
	if body.MovedTo != "" {
		mns, err := parse("moved_to", body.MovedTo)
		if err != nil {
			return fail(err)
		}
		moved := tfaddr.NewProvider(hn, mns, typ)
		s.warn(ctx, source.ProviderPackage{Addr: moved}, fmt.Sprintf("provider %q has no namespace; the registry resolves it to %s, which has moved to %s: use %q in required_providers", typ, got.ForDisplay(), moved.ForDisplay(), moved.ForDisplay()))
		return moved, nil
	}
	s.warn(ctx, source.ProviderPackage{Addr: got}, fmt.Sprintf("provider %q has no namespace; the registry resolves it to %s: use %q in required_providers", typ, got.ForDisplay(), got.ForDisplay()))
	return got, nil
}
