// Package mirror reads provider mirrors as OpenTofu does: a [Filesystem]
// mirror (packed and unpacked layouts), a [Network] mirror (the provider
// network mirror protocol, https only), the implied local mirror
// directories tofu searches when no provider_installation is configured
// ([ImpliedDirs]), development overrides ([DevOverrides]), and the hint
// given when a provider is found in the legacy ".terraform/plugins"
// directory ([CheckLegacyPlugins]).
//
// The mirrors serve providers only; they report every module package as
// not found, so they compose with module sources in a [source.Multi].
package mirror

import "github.com/tflock/tflock/source"

var _ source.Source = (*Filesystem)(nil)
