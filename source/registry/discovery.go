package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/internal/flight"
)

// The service IDs this package uses.
const (
	ServiceProviders = "providers.v1"
	ServiceModules   = "modules.v1"
)

// ErrNoService is wrapped by the error for a host that does not offer the
// service asked for. It also matches [source.ErrNotFound].
var ErrNoService = fmt.Errorf("host does not offer the service: %w", source.ErrNotFound)

// discovery caches each host's service URLs for the life of the Source.
type discovery struct {
	c *client
	o *Options

	// hosts is each host's services; a failure is not kept: the next
	// caller, and each one waiting, asks again.
	hosts flight.Group[string, map[string]*url.URL]
}

// serviceURL returns the base URL of service on host, with a trailing slash.
func (d *discovery) serviceURL(ctx context.Context, host, service string) (*url.URL, error) {
	host = NormalizeHost(host)
	services, err := d.services(ctx, host)
	if err != nil {
		return nil, err
	}
	u, ok := services[service]
	if !ok {
		return nil, fmt.Errorf("%w: %s does not offer %s", ErrNoService, host, service)
	}
	return u, nil
}

// offersOther reports whether host's discovery document offers another
// version of service ("providers.v2" beside or instead of
// "providers.v1"), as OpenTofu's ErrHostNoProviders.HasOtherVersion.
func (d *discovery) offersOther(ctx context.Context, host, service string) bool {
	services, err := d.services(ctx, NormalizeHost(host))
	if err != nil {
		return false
	}
	name, _, _ := strings.Cut(service, ".")
	for id := range services {
		if id != service && strings.HasPrefix(id, name+".") {
			return true
		}
	}
	return false
}

func (d *discovery) services(ctx context.Context, host string) (map[string]*url.URL, error) {
	return d.hosts.Do(ctx, host, func() (map[string]*url.URL, error) { return d.discover(ctx, host) })
}

func (d *discovery) discover(ctx context.Context, host string) (map[string]*url.URL, error) {
	base := &url.URL{Scheme: "https", Host: host, Path: "/"}
	for h, svcs := range d.o.Hosts {
		if NormalizeHost(h) != host {
			continue
		}
		out := make(map[string]*url.URL, len(svcs))
		for id, raw := range svcs {
			u, err := serviceURL(base, raw)
			if err != nil {
				return nil, fmt.Errorf("host %s: service %s: %w", host, id, err)
			}
			out[id] = u
		}
		return out, nil
	}
	disco := base.ResolveReference(&url.URL{Path: "/.well-known/terraform.json"})
	tok, _ := d.o.Credentials.Token(host)
	resp, err := d.c.get(ctx, request{url: disco, token: tok})
	if err != nil {
		if errors.Is(err, source.ErrNotFound) {
			return nil, fmt.Errorf("%w: %s has no service discovery document: %v", ErrNoService, host, err)
		}
		return nil, fmt.Errorf("service discovery for %s: %w", host, err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(resp.body, &doc); err != nil {
		return nil, fmt.Errorf("service discovery for %s: %s is not a JSON object: %v", host, redact(disco), err)
	}
	out := make(map[string]*url.URL)
	for id, raw := range doc {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			continue // services such as login.v1 are objects; not ours
		}
		u, err := serviceURL(resp.url, s)
		if err != nil {
			return nil, fmt.Errorf("service discovery for %s: service %s: %w", host, id, err)
		}
		out[id] = u
	}
	return out, nil
}

// serviceURL resolves a service URL against the discovery document's URL
// and makes sure it ends in a slash, so that relative paths append.
func serviceURL(base *url.URL, raw string) (*url.URL, error) {
	ref, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("invalid service URL %q: %v", raw, err)
	}
	u := base.ResolveReference(ref)
	if u.Scheme != "https" && u.Scheme != "http" {
		return nil, fmt.Errorf("invalid service URL %q: the scheme must be https or http", raw)
	}
	if u.User != nil {
		return nil, fmt.Errorf("invalid service URL %q: must not contain user information", redact(u))
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
		if u.RawPath != "" {
			u.RawPath += "/"
		}
	}
	return u, nil
}
