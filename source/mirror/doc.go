// Package mirror reads provider mirrors as OpenTofu does: a [Filesystem]
// mirror (packed and unpacked layouts), a [Network] mirror (the provider
// network mirror protocol, https only), the implied local mirror
// directories tofu searches when no provider_installation is configured
// ([ImpliedDirs]), development overrides ([DevOverrides]), and the hint
// given when a provider is found in the legacy ".terraform/plugins"
// directory ([CheckLegacyPlugins]).
//
// A [Network] mirror's requests go through the HTTP layer the registry
// source uses too: retries only after connection errors, 429 and 5xx
// responses; an idle timeout for every request, a short overall timeout
// for index.json and VERSION.json and none by default for a package
// download (a large provider over a slow link installs while data keeps
// coming); no redirect from https to http, the token dropped on a
// redirect to another host. A network mirror must be at an https URL, so
// the hashes it vouches for (TrustAllHashes) always came over TLS.
//
// The mirrors serve providers only; they report every module package as
// not found, so they compose with module sources in a [source.Multi].
package mirror

import "github.com/tflock/tflock/source"

var _ source.Source = (*Filesystem)(nil)
