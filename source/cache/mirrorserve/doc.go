// Package mirrorserve lets stock tofu and terraform install providers from
// tflock's verified cache, by the protocols they already speak.
//
// # The network mirror
//
// [Handler] is an http.Handler speaking the Provider Network Mirror
// Protocol over a [cache.Cache] and the sources that fill it (usually
// source/assemble's NewSources: the user's own installation methods, from
// the CLI configuration, with their credentials):
//
//	HOST/NAMESPACE/TYPE/index.json                            the versions
//	HOST/NAMESPACE/TYPE/VERSION.json                          each platform's archive and hashes
//	HOST/NAMESPACE/TYPE/terraform-provider-TYPE_VERSION_OS_ARCH.zip   the archive
//
// A VERSION.json lists every platform of the release the origin vouches
// for, each with the zh: of its archive from the origin's signed checksums
// and its h1: where known (the origin reported it, the handler verified
// the archive, or the cache, when it has no remote tier, holds the
// package), so that a tofu told to trust the mirror's hashes
// (trust_all_hashes) records every platform's hashes, not only its own.
// An archive is served as the origin delivered it (its zh: is the signed
// one), from the handler's archive directory, which has the packed layout
// of a filesystem mirror; a package that its installation method hands
// over extracted (an unpacked filesystem mirror) as a deterministic zip of
// its files, whose h1: is the tree's. On a miss the archive is fetched once (concurrent
// requests for one package to one handler wait for one download; two
// processes serving one archive directory may each fetch it): from the
// cache's remote tier when one is given, else from the origin through the sources; its zh:
// is checked against the origin's signed checksums, and it is put through
// the cache (extracted within the source's limits, its h1: computed, written
// through to the remote tier) before it is published. No location and no
// credential of the origin appears in what is served.
//
// The sources fetch with the user's credentials, so a handler given a
// token ([Options.Token], [NewToken]) serves only requests that carry it:
// another process of the machine gets nothing through it.
//
// [Start] serves a handler on loopback HTTPS with a self-signed certificate
// of its own, and [WriteToolConfig] writes the CLI configuration (with the
// token as the mirror host's credentials) and the certificate bundle that
// point tofu and terraform at it: a whole configuration file for
// TF_CLI_CONFIG_FILE with the user's host blocks, plugin cache settings
// and dev overrides (not their credentials) and one provider_installation
// block, so that a configuration that has its own block is never broken
// (tofu allows one).
//
// # Mirror directories
//
// [WriteDir] writes what "tofu providers mirror" writes, for the providers
// of a lock file and the platforms asked for: the packed layout, plus the
// index.json and VERSION.json files with which the same directory can be
// served statically as a network mirror. Every archive is verified against
// the lock file's hashes before it is written.
package mirrorserve
