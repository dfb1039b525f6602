package cliconfig

import (
	"maps"

	"github.com/tflock/tflock/source/registry"
)

// RegistryOptions returns opts with what the configuration says about
// registries added, so that a registry source finds hosts and credentials
// as OpenTofu does with the same CLI configuration:
//
//   - Hosts: each host block's service URLs (a service given as an object,
//     such as login.v1, is left out: a registry source does not use it).
//     A host already in opts.Hosts (under any spelling of its name) keeps
//     that entry.
//   - Credentials: the configuration's tokens (the TF_TOKEN_ variables
//     [Load] read, then the credentials blocks, as [Config.Token]), asked
//     before opts.Credentials.
//
// Every other field of opts is returned unchanged. A nil Config returns
// opts as it is.
func (c *Config) RegistryOptions(opts registry.Options) registry.Options {
	if c == nil {
		return opts
	}
	if len(c.Hosts) > 0 {
		hosts := make(map[string]registry.Services, len(c.Hosts)+len(opts.Hosts))
		given := map[string]bool{}
		for h := range opts.Hosts {
			given[registry.NormalizeHost(h)] = true
		}
		for h, hb := range c.Hosts {
			if given[registry.NormalizeHost(h)] {
				continue
			}
			svc := registry.Services{}
			for id, v := range hb.Services {
				if s, ok := v.(string); ok {
					svc[id] = s
				}
			}
			hosts[h] = svc
		}
		maps.Copy(hosts, opts.Hosts)
		opts.Hosts = hosts
	}
	if len(c.EnvTokens) > 0 || len(c.Credentials) > 0 {
		opts.Credentials = registry.Chain(configCredentials{c}, opts.Credentials)
	}
	return opts
}

// configCredentials is a Config as [registry.Credentials].
type configCredentials struct{ c *Config }

func (cc configCredentials) Token(host string) (string, bool) {
	tok := cc.c.Token(host)
	return tok, tok != ""
}
