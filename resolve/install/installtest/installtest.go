// Package installtest runs a small, complete world of dependency sources
// in-process, for tests and demos of package install: a provider and module
// registry (registrytest, over HTTPS), git repositories made on the fly
// with the git binary, and an OCI registry (ocitest). It works offline.
//
// Addresses look real and stay the same from run to run, so that lock files
// written against a World are stable: the registry answers for
// "registry.example.test", git repositories are served over smart HTTP as
// "git::https://git.example.test/..." (package gittest) and OCI
// repositories as "oci://oci.example.test/...". Git commits and OCI
// digests are deterministic.
package installtest

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/assemble"
	"github.com/tflock/tflock/source/git"
	"github.com/tflock/tflock/source/git/gittest"
	"github.com/tflock/tflock/source/oci"
	"github.com/tflock/tflock/source/oci/ocitest"
	"github.com/tflock/tflock/source/registry"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// The host names of a World.
const (
	RegistryHost = "registry.example.test"
	GitHost      = "git.example.test"
	OCIHost      = "oci.example.test"
)

// Options configure [Start]. The zero value starts the default world.
type Options struct {
	// Latency is added to every registry request. Default none.
	Latency time.Duration
	// Fixtures replaces the registry's fixtures. Default [DefaultFixtures].
	Fixtures *registrytest.Fixtures
	// NoGit skips the git repositories (for machines without git).
	// Default false.
	NoGit bool
	// Events receives the download progress the registry and OCI sources
	// report (EventFetchStarted, EventFetchProgress with bytes done and
	// total, EventFetchDone). Default nil: discarded.
	Events source.Events
}

// World is a running set of sources.
type World struct {
	// Registry is the provider and module registry.
	Registry *registrytest.Server
	// OCI is the OCI registry.
	OCI *ocitest.Server
	// Git serves the git repositories; nil with [Options.NoGit].
	Git *gittest.Server
	// GitDir holds the git repositories' working directories, one per
	// module: GitDir/NAME.git.
	GitDir string
	// Source serves everything: providers and registry modules from
	// Registry, git modules from Git, OCI modules from OCI.
	Source *assemble.Dispatch

	ociCount counter
}

type counter struct{ n int64 }

// Close stops the servers and removes the repositories.
func (w *World) Close() {
	if w.Registry != nil {
		w.Registry.Close()
	}
	if w.OCI != nil {
		w.OCI.Close()
	}
	if w.Git != nil {
		w.Git.Close()
	}
}

// Requests returns the number of requests served so far by the registry,
// the OCI registry and the git server.
func (w *World) Requests() int {
	n := w.Registry.Requests() + int(w.ociRequests())
	if w.Git != nil {
		n += w.Git.Requests()
	}
	return n
}

// Platforms are the platforms the default providers are built for: the
// current one and two others.
func Platforms() []string {
	ps := []string{source.CurrentPlatform.String()}
	for _, p := range []string{"linux_amd64", "darwin_arm64", "windows_amd64"} {
		if p != ps[0] && len(ps) < 3 {
			ps = append(ps, p)
		}
	}
	return ps
}

// DefaultFixtures are the registry's default contents: the providers
// acme/cloud (1.0.0, 1.1.0) and acme/dns (2.0.0, 2.1.0), and the module
// acme/vpc/cloud (1.0.0, 1.1.0), which requires acme/cloud.
func DefaultFixtures() registrytest.Fixtures {
	plats := Platforms()
	vpc := func(v string) registrytest.ModuleVersion {
		return registrytest.ModuleVersion{Version: v, Files: map[string]string{
			"main.tf": `terraform {
  required_providers {
    cloud = {
      source  = "registry.example.test/acme/cloud"
      version = ">= 1.0.0"
    }
  }
}

resource "cloud_network" "this" {}
`,
			"README.md": "vpc " + v + "\n",
		}}
	}
	return registrytest.Fixtures{
		Providers: []registrytest.Provider{
			{Addr: RegistryHost + "/acme/cloud", Versions: []registrytest.ProviderVersion{{Version: "1.0.0", Platforms: plats}, {Version: "1.1.0", Platforms: plats}}},
			{Addr: RegistryHost + "/acme/dns", Versions: []registrytest.ProviderVersion{{Version: "2.0.0", Platforms: plats}, {Version: "2.1.0", Platforms: plats}}},
		},
		Modules: []registrytest.Module{
			{Addr: RegistryHost + "/acme/vpc/cloud", Versions: []registrytest.ModuleVersion{vpc("1.0.0"), vpc("1.1.0")}},
		},
	}
}

// Start starts a World. Close it when done.
func Start(ctx context.Context, opts Options) (_ *World, err error) {
	w := &World{}
	defer func() {
		// The returns below give nil on an error: close what was started
		// through w, not through the result.
		if err != nil {
			w.Close()
		}
	}()
	fx := DefaultFixtures()
	if opts.Fixtures != nil {
		fx = *opts.Fixtures
	}
	w.Registry, err = registrytest.Start(fx, registrytest.Options{Hosts: []string{RegistryHost}, Latency: opts.Latency})
	if err != nil {
		return nil, fmt.Errorf("installtest: registry: %w", err)
	}
	w.OCI = ocitest.NewServer(ocitest.ServerOptions{})
	if err := w.pushOCI(ctx); err != nil {
		return nil, err
	}
	w.Source = &assemble.Dispatch{}
	reg := registry.NewSource(registry.Options{HTTPClient: w.Registry.Client(), DefaultHost: RegistryHost, Events: opts.Events})
	w.Source.Providers = reg
	ociOpts := w.OCI.SourceOptions(nil)
	ociOpts.Events = opts.Events
	ociOpts.Repository = func(ctx context.Context, repo string) (oci.Repository, error) {
		name, ok := strings.CutPrefix(repo, OCIHost+"/")
		if !ok {
			return nil, fmt.Errorf("%w: no OCI registry %s in this world", source.ErrNotFound, repo)
		}
		r, err := w.OCI.Repository(name)
		if err != nil {
			return nil, err
		}
		return &countingRepo{Repository: r, n: &w.ociCount}, nil
	}
	w.Source.OCI = oci.NewSource(ociOpts)
	if !opts.NoGit {
		if w.Git, err = gittest.Start(gittest.Options{Host: GitHost}); err != nil {
			return nil, fmt.Errorf("installtest: git: %w", err)
		}
		repo, err := makeRepos(w.Git)
		if err != nil {
			return nil, err
		}
		w.GitDir = filepath.Dir(filepath.Dir(repo.Dir))
		w.Source.Git = git.NewSource(w.Git.SourceOptions())
	}
	return w, nil
}

// Network is the git module of the world: tags v1.0.0, v1.1.0 and v2.0.0
// of "git::https://git.example.test/acme/network.git".
const Network = "git::https://" + GitHost + "/acme/network.git"

// Storage is the OCI module of the world, tagged 1.0.0 and 1.1.0.
const Storage = "oci://" + OCIHost + "/modules/storage"

func (w *World) pushOCI(ctx context.Context) error {
	repo, err := w.OCI.Repository("modules/storage")
	if err != nil {
		return err
	}
	for _, v := range []string{"1.0.0", "1.1.0"} {
		z, err := ocitest.Zip(map[string]string{
			"main.tf": "variable \"name\" {\n  type = string\n}\n\n# storage " + v + "\n",
		})
		if err != nil {
			return err
		}
		if _, err := ocitest.PushModule(ctx, repo, z, v); err != nil {
			return fmt.Errorf("installtest: pushing the OCI module: %w", err)
		}
	}
	return nil
}

// Git runs git in dir as the World makes its repositories (see
// [gittest.Git]): without the machine's configuration, with fixed
// identities and dates, and "main" as the default branch. It returns the
// output, trimmed. Tests use it to change a repository of the World
// (GitDir/acme/network.git), or to make one of their own.
func Git(ctx context.Context, dir string, args ...string) (string, error) {
	return gittest.Git(ctx, dir, args...)
}

// makeRepos creates acme/network.git with three tagged releases.
func makeRepos(srv *gittest.Server) (*gittest.Repo, error) {
	var commits []gittest.Commit
	for _, v := range []string{"1.0.0", "1.1.0", "2.0.0"} {
		commits = append(commits, gittest.Commit{Files: map[string]string{
			"main.tf":                "module \"subnet\" {\n  source = \"./modules/subnet\"\n}\n\noutput \"version\" {\n  value = \"" + v + "\"\n}\n",
			"modules/subnet/main.tf": "# subnet of network " + v + "\n",
		}, Tags: []string{"v" + v}})
	}
	repo, err := srv.Repo("acme/network", commits...)
	if err != nil {
		return nil, fmt.Errorf("installtest: %w", err)
	}
	return repo, nil
}

// ErrNoGit is wrapped by HaveGit's error.
var ErrNoGit = errors.New("git not available")

// HaveGit reports whether the git binary can be run.
func HaveGit() error {
	if _, err := exec.LookPath("git"); err != nil {
		return fmt.Errorf("%w: %v", ErrNoGit, err)
	}
	return nil
}
